package compose

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/exportfmt"
	"github.com/drivemail/drivemail/internal/refusal"
)

// item is one attachments entry on its way to the message.
type item struct {
	index int // 1-based position in the request, for sentences
	att   Attachment

	// What validate made of the source:
	ref      drive.Ref  // a DriveFile: the file its handle names
	opts     DriveFile  // a DriveFile: how it goes in
	data     []byte     // Content: the bytes the model wrote
	dataType string     // Content: their MIME type
	client   clientPart // ClientFile: the download, opened before the plan

	file drive.File // a DriveFile once resolved (shortcut followed)
	mail *mailPart  // a GmailAttachment once resolved

	access *linkAccess // a Drive file that goes as a link, once checked (access.go)

	plan plan
}

// isDrive reports whether the entry is a Drive file.
func (it *item) isDrive() bool {
	_, ok := it.att.Source.(DriveFile)
	return ok
}

// label names the entry in a sentence before and after resolution.
func (it *item) label() string {
	switch {
	case it.file.Name != "":
		return fmt.Sprintf("attachment %d (%q)", it.index, truncate(it.file.Name, 80))
	case it.mail != nil:
		return fmt.Sprintf("attachment %d (%q)", it.index, truncate(it.mail.att.Name, 80))
	case it.att.Name != "":
		return fmt.Sprintf("attachment %d (%q)", it.index, truncate(it.att.Name, 80))
	case it.ref.ID != "":
		return fmt.Sprintf("attachment %d (id %s)", it.index, it.ref.ID)
	}
	return fmt.Sprintf("attachment %d", it.index)
}

// metadataWorkers bounds concurrent files.get calls for one message: all
// of a message's files at once, so ten files cost one metadata round trip
// (~0.23 s at Google), not two. Drive's per-user limits are per minute
// (12,000 queries, or 325,000 quota units for projects from May 2026:
// developers.google.com/workspace/drive/api/guides/limits); a send makes
// at most MaxEntries calls whatever their concurrency, and a 429 is
// retried like any transient failure.
const metadataWorkers = MaxFiles

// resolve fetches every Drive entry's metadata concurrently (at most
// metadataWorkers at a time). A transient failure of one call is retried
// a few times; the first lasting failure cancels the rest. draft words
// the refusals for a draft.
func resolve(ctx context.Context, dc driveAPI, items []*item, draft bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, metadataWorkers)
	errs := make(chan error, len(items))
	n := 0
	for _, it := range items {
		if !it.isDrive() {
			continue
		}
		n++
		go func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs <- ctx.Err()
				return
			}
			defer func() { <-sem }()
			f, err := withRetry(ctx, func() (drive.File, error) { return dc.Lookup(ctx, it.ref) })
			if err == nil {
				f, err = withTabs(ctx, dc, it, f, draft)
			}
			if err != nil {
				if _, own := err.(*refusal.Refusal); !own {
					err = lookupError(it, err, draft)
				}
				errs <- err
				cancel()
				return
			}
			it.file = f
			errs <- nil
		}()
	}
	var first error
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil && (first == nil || errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled)) {
			first = err
		}
	}
	return first
}

// withTabs lists a spreadsheet's tabs when the entry exports one tab
// (csv or tsv): only that needs the Sheets API. A named tab cannot go
// without it; without sheet the first tab goes through files.export, and
// the tabs only name it, so a Sheets API that is not enabled leaves it
// unnamed (TabsUnknown).
func withTabs(ctx context.Context, dc driveAPI, it *item, f drive.File, draft bool) (drive.File, error) {
	if f.MimeType != drive.MimeSpreadsheet || it.opts.Link {
		return f, nil
	}
	if format, err := exportfmt.Lookup(f.MimeType, it.opts.As); err != nil || !format.NeedsTab {
		return f, nil
	}
	named := strings.TrimSpace(it.opts.Sheet) != ""
	tabs, err := withRetry(ctx, func() ([]drive.Sheet, error) { return dc.SheetTabs(ctx, f, named) })
	switch {
	case err == nil:
		f.Sheets = tabs
		return f, nil
	case errors.Is(err, drive.ErrAPIDisabled) && !named:
		f.TabsUnknown = true
		return f, nil
	case errors.Is(err, drive.ErrAPIDisabled):
		it.file = f
		return f, refuseErr(err, kindSheetsAPIDisabled, "%s: picking the tab %q needs the Google Sheets API, which this drivemail server's Google Cloud project has not enabled. %s "+
			"Leave out sheet to send the first tab, use as: \"xlsx\" for every tab, or ask whoever runs drivemail to enable the Google Sheets API.",
			it.label(), truncate(it.opts.Sheet, 60), nothing(draft))
	}
	return f, err
}

// lookupError words a metadata failure. A missing file and one the user
// cannot see get the same sentence, as Drive gives them the same 404.
func lookupError(it *item, err error, draft bool) error {
	switch {
	case errors.Is(err, drive.ErrAPIDisabled):
		return driveAPIDisabled(err, draft)
	case errors.Is(err, drive.ErrNotFound):
		return refuseErr(err, kindUnknownFile, "Attachment %d: no Drive file with id %s is visible to this Google account: it does not exist or is not shared with it. "+
			"Check the id, or find the file with drive_search.", it.index, it.ref.ID)
	case errors.Is(err, drive.ErrScope):
		return refuseErr(err, kindDriveScope, "This Google account has not given drivemail access to Drive files. Reconnect drivemail (sign in again) and allow Drive access.")
	case errors.Is(err, drive.ErrUnauthorized):
		return refuseErr(err, kindDriveUnauthorized, "Google no longer accepts this account's authorization (it expired or was revoked). Reconnect drivemail (sign in again).")
	case errors.Is(err, drive.ErrRateLimited), errors.Is(err, drive.ErrUnavailable):
		return refuseErr(err, kindDriveUnavailable, "Google Drive is busy or unavailable right now. %s Try again in a minute.", nothing(draft))
	}
	// Drive's explained 403s read the same before and during the stream.
	if errors.Is(err, drive.ErrForbidden) {
		if r := driveFailure(it, err, draft); r != nil {
			return r
		}
	}
	return fmt.Errorf("resolve %s: %w", it.label(), err)
}

// withRetry runs an idempotent Drive call under retry. A stall is not
// retried here: it has already waited the idle timeout, and retries would
// multiply that wait (the send pass may still be retried).
func withRetry[T any](ctx context.Context, call func() (T, error)) (T, error) {
	return retry(ctx, driveAgain, call)
}

// driveAgain is retry's rule for Drive calls.
func driveAgain(err error) (bool, time.Time) {
	return drive.IsTransient(err) && !errors.Is(err, drive.ErrStalled), time.Time{}
}
