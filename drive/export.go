package drive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	gdrive "google.golang.org/api/drive/v3"

	"github.com/drivemail/drivemail/exportfmt"
	"github.com/drivemail/drivemail/internal/google"
)

// Export opens a native file rendered as mimeType, through Google's
// documented routes only: files.export up to its 10 MB cap and, past it,
// files.download, a long-running operation polled with operations.get
// whose result streams from its downloadUri. With tab set (csv or tsv of
// a spreadsheet) the tab's formatted values are read with the Sheets
// API and written as CSV or TSV, since files.export renders only the
// first tab (see TabExport). Whatever the route, an answer whose
// Content-Type is not the format asked for is ErrWrongType and its body
// is never read: a sign-in page must not become an attachment. The size
// of an export is unknown until it ends.
func (c *Client) Export(ctx context.Context, f File, mimeType string, tab *Sheet) (io.ReadCloser, error) {
	if !f.CanDownload {
		return nil, &Error{Op: "files.export", Err: ErrNotDownloadable}
	}
	if tab != nil {
		return c.TabExport(ctx, f, *tab, mimeType)
	}
	rc, err := c.filesExport(ctx, f, mimeType)
	if !errors.Is(err, ErrExportTooLarge) {
		return rc, err
	}
	return c.downloadExport(ctx, f, mimeType)
}

// filesExport is files.export, checked for the type asked for.
func (c *Client) filesExport(ctx context.Context, f File, mimeType string) (io.ReadCloser, error) {
	const op = "files.export"
	wctx, w := c.watch(ctx)
	call := c.files.Export(f.ID, mimeType).Context(wctx)
	setResourceKey(call.Header(), f.ID, f.ResourceKey)
	res, err := call.Download()
	w.Pause()
	if err != nil {
		return nil, c.stallFail(w, op, err)
	}
	if err := checkType(op, res.Header, mimeType); err != nil {
		discard(res.Body)
		w.Stop()
		return nil, err
	}
	return watchBody(res.Body, w, op), nil
}

// checkType refuses a response whose Content-Type is not the export
// format want (or another name Google gives it).
func checkType(op string, h http.Header, want string) error {
	got := h.Get("Content-Type")
	if exportfmt.SameMediaType(got, want) {
		return nil
	}
	return &Error{Op: op, Err: fmt.Errorf("%w: %q, not %s", ErrWrongType, printable(got, 80), want)}
}

// printable cuts s to n bytes of printable text, for an error message.
func printable(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, s)
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// discard drains a little of a body we will not use, so its connection
// can be reused, and closes it.
func discard(rc io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(rc, 64<<10))
	rc.Close()
}

// Polling of files.download's operation. Drive's long-running operations
// guide says to poll operations.get; the waits double from first up to
// most, and the whole wait is bounded by total and maxPolls.
const (
	defaultPollFirst = time.Second
	defaultPollMost  = 10 * time.Second
	defaultPollTotal = 3 * time.Minute
	maxPolls         = 100
)

// pollPolicy bounds the wait for a files.download operation.
type pollPolicy struct {
	first, most, total time.Duration
}

// WithOperationPolling sets how files.download's operation is polled:
// the first wait, the longest wait, and the total time before the
// export is abandoned with ErrExportNotReady. A zero or negative value
// keeps its default (1 s, 10 s, 3 min).
func WithOperationPolling(first, most, total time.Duration) Option {
	return func(c *Client) {
		if first > 0 {
			c.poll.first = first
		}
		if most > 0 {
			c.poll.most = most
		}
		if total > 0 {
			c.poll.total = total
		}
	}
}

// downloadResponse is a finished files.download operation's response
// (google.apps.drive.v3.DownloadFileResponse).
type downloadResponse struct {
	DownloadURI string `json:"downloadUri"`
}

// downloadExport runs files.download for a native file in mimeType:
// start the operation, poll it within the policy, then stream the result
// from its downloadUri with the user's token, after checking that the
// URI is Google's (or the emulator's).
func (c *Client) downloadExport(ctx context.Context, f File, mimeType string) (io.ReadCloser, error) {
	const op = "files.download"
	call := c.files.Download(f.ID).MimeType(mimeType).Context(ctx)
	setResourceKey(call.Header(), f.ID, f.ResourceKey)
	started, err := call.Do()
	if err != nil {
		return nil, c.wrap(op, err)
	}
	done, err := c.awaitOperation(ctx, f, started)
	if err != nil {
		return nil, err
	}
	if done.Error != nil {
		return nil, &Error{Op: op, Err: operationError(done.Error.Code)}
	}
	var res downloadResponse
	if err := json.Unmarshal(done.Response, &res); err != nil || res.DownloadURI == "" {
		return nil, &Error{Op: op, Err: errors.New("the finished operation has no downloadUri")}
	}
	return c.fetchContent(ctx, f, res.DownloadURI, mimeType)
}

// awaitOperation polls op until it is done, with doubling waits, within
// the poll policy: the total bounds the waits and the polls themselves,
// so a poll Google never answers cannot hold the send. A transient
// failure of one poll is polled again.
func (c *Client) awaitOperation(ctx context.Context, f File, op *gdrive.Operation) (*gdrive.Operation, error) {
	const what = "operations.get"
	deadline := time.Now().Add(c.poll.total)
	pctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	notReady := func(polls int) error {
		return &Error{Op: what, Err: fmt.Errorf("%w (%d polls)", ErrExportNotReady, polls)}
	}
	wait := c.poll.first
	for polls := 0; !op.Done; polls++ {
		if polls == maxPolls || time.Now().Add(wait).After(deadline) {
			return nil, notReady(polls)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, c.poll.most)
		call := c.ops.Get(op.Name).Context(pctx)
		setResourceKey(call.Header(), f.ID, f.ResourceKey)
		next, err := call.Do()
		switch {
		case err == nil:
			op = next
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case pctx.Err() != nil:
			return nil, notReady(polls + 1)
		default:
			if err = c.wrap(what, err); !IsTransient(err) {
				return nil, err
			}
		}
	}
	return op, nil
}

// operationError classifies a failed operation's google.rpc.Code.
func operationError(code int64) error {
	switch code {
	case 5: // NOT_FOUND
		return ErrNotFound
	case 7: // PERMISSION_DENIED
		return ErrForbidden
	case 8: // RESOURCE_EXHAUSTED
		return ErrRateLimited
	case 14, 4: // UNAVAILABLE, DEADLINE_EXCEEDED
		return ErrUnavailable
	}
	return fmt.Errorf("operation failed with code %d", code)
}

// refusedHost logs, for the operator, a download Google sent to a host
// drivemail does not fetch from (err, a *google.TokenHostError, names
// its origin; the URL, signed, is not logged): the user's sentence says
// the export failed, but only the operator can tell a new Google host
// (--download-hosts) from a wrong one.
func (c *Client) refusedHost(err error) {
	origin := "(unreadable URL)"
	var th *google.TokenHostError
	if errors.As(err, &th) {
		origin = th.Origin
	}
	c.log.Error("Google named a download host drivemail does not fetch from; if it is Google's, add it to --download-hosts",
		"op", "files.download", "origin", origin)
}

// fetchContent GETs a download URI Google gave, with the user's token,
// after checking it points at Google's download hosts
// (google.Endpoints.ContentURLAllowed). The answer must be 200 and
// of the type asked for.
func (c *Client) fetchContent(ctx context.Context, f File, raw, mimeType string) (io.ReadCloser, error) {
	const op = "download"
	u, err := url.Parse(raw)
	if err == nil {
		err = c.endpoints.ContentURLAllowed(u)
	}
	if err != nil {
		c.refusedHost(err)
		return nil, &Error{Op: op, Err: fmt.Errorf("%w: %w", ErrBadContentURL, google.WithoutURL(err))}
	}
	wctx, w := c.watch(ctx)
	req, err := http.NewRequestWithContext(wctx, http.MethodGet, u.String(), nil)
	if err != nil {
		w.Stop()
		return nil, &Error{Op: op, Err: google.WithoutURL(err)}
	}
	setResourceKey(req.Header, f.ID, f.ResourceKey)
	// Every redirect hop is held to the token policy by the user's
	// transport (google.Endpoints.GuardToken).
	res, err := c.http.Do(req)
	w.Pause()
	if err != nil {
		stalled := w.Fired() != nil
		w.Stop()
		switch {
		case stalled:
			return nil, stalledErr(op, w.Idle())
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, google.ErrTokenHost):
			c.refusedHost(err)
			return nil, &Error{Op: op, Err: fmt.Errorf("%w: %w", ErrBadContentURL, google.WithoutURL(err))}
		}
		return nil, &Error{Op: op, Err: google.WithoutURL(err)}
	}
	if res.StatusCode != http.StatusOK {
		discard(res.Body)
		w.Stop()
		return nil, statusErr(op, res.StatusCode)
	}
	if err := checkType(op, res.Header, mimeType); err != nil {
		discard(res.Body)
		w.Stop()
		return nil, err
	}
	return watchBody(res.Body, w, op), nil
}
