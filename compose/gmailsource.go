package compose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/drivemail/drivemail/blocked"
	"github.com/drivemail/drivemail/exportfmt"
	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/mimemsg"
)

// A GmailAttachment goes through the phases of a send like a Drive file:
// validate (a message id and a name), resolve (one messages.get per
// message, without bodies: names, types and sizes), plan (the limits
// known from that metadata, blocked names), then stream: the bytes come
// from attachments.get, decoded as they arrive (gmail.OpenAttachment).
// A Gmail answer has no Range reads, so a zip is checked from the tail
// the blocked.Inspector keeps while it streams (as a client file's is),
// and tar and gzip as they stream, as for a Drive file: a blocked entry
// fails the message before Gmail would finalize it, so nothing is sent.

// mailReader is what compose needs of Gmail to read mail: *gmail.Client.
type mailReader interface {
	Message(ctx context.Context, id string, bodies bool) (gmail.Message, error)
	OpenAttachment(ctx context.Context, msgID string, a gmail.Attachment) (io.ReadCloser, error)
}

// mailLookup reads the messages one send names, each once.
type mailLookup struct {
	r     mailReader
	mu    sync.Mutex
	cache map[string]gmail.Message
	full  map[string]bool // read with bodies
}

func newMailLookup(r mailReader) *mailLookup {
	return &mailLookup{r: r, cache: map[string]gmail.Message{}, full: map[string]bool{}}
}

// message reads message id, with its bodies when asked (a forward quotes
// them), retrying a transient failure.
func (l *mailLookup) message(ctx context.Context, id string, bodies bool) (gmail.Message, error) {
	l.mu.Lock()
	m, ok := l.cache[id]
	full := l.full[id]
	l.mu.Unlock()
	if ok && (full || !bodies) {
		return m, nil
	}
	m, err := mailRetry(ctx, func() (gmail.Message, error) { return l.r.Message(ctx, id, bodies) })
	if err != nil {
		return gmail.Message{}, err
	}
	l.mu.Lock()
	l.cache[id], l.full[id] = m, bodies
	l.mu.Unlock()
	return m, nil
}

// mailPart is the attachment a GmailAttachment entry resolved to.
type mailPart struct {
	msgID string
	att   gmail.Attachment
	r     mailReader
}

// checkGmailAttachment is validate's case for a GmailAttachment.
func checkGmailAttachment(it *item, src GmailAttachment) error {
	if src.Message.ID == "" {
		return fmt.Errorf("compose: %s names no message", it.label())
	}
	if strings.TrimSpace(src.Name) == "" && src.part == "" {
		return refuse(kindNoName, "%s names Gmail message %s but no attachment of it. Give \"attachment\": the attachment's file name, as search_mail lists it.",
			it.label(), src.Message.ID)
	}
	return nil
}

// resolveMail reads the message of every Gmail attachment and finds the
// attachment in it.
func resolveMail(ctx context.Context, l *mailLookup, items []*item, draft bool) error {
	for _, it := range items {
		src, ok := it.att.Source.(GmailAttachment)
		if !ok {
			continue
		}
		m, err := l.message(ctx, src.Message.ID, false)
		if err != nil {
			return mailLookupError(err, fmt.Sprintf("Attachment %d: ", it.index), src.Message.ID, draft)
		}
		a, err := attachmentOf(m, src)
		if err != nil {
			return labelled(it, err)
		}
		it.mail = &mailPart{msgID: m.ID, att: a, r: l.r}
	}
	return nil
}

// attachmentOf is the attachment of m that src names: by Gmail's part id
// for a forward's (two may share a name), else by its name.
func attachmentOf(m gmail.Message, src GmailAttachment) (gmail.Attachment, error) {
	if src.part == "" {
		return FindAttachment(m, src.Name)
	}
	for _, a := range m.Attachments {
		if a.PartID == src.part {
			return a, nil
		}
	}
	return gmail.Attachment{}, noAttachment(m, src.Name)
}

// FindAttachment is the attachment of message m that name names (as
// gmail.Message.Find matches names), or the refusal that lists the names
// m has: one sentence for a name the message lacks, whether the file was
// going into a message or into Drive (save_to_drive).
func FindAttachment(m gmail.Message, name string) (gmail.Attachment, error) {
	if a, ok := m.Find(name); ok {
		return a, nil
	}
	return gmail.Attachment{}, noAttachment(m, name)
}

// noAttachment refuses a name message m has no attachment of.
func noAttachment(m gmail.Message, name string) error {
	if len(m.Attachments) == 0 {
		return refuse(kindUnknownAttachment, "Gmail message %s has no attachments. Check the message id with search_mail (has:attachment finds messages with files).", m.ID)
	}
	names := make([]string, 0, len(m.Attachments))
	for _, n := range m.Names() {
		names = append(names, fmt.Sprintf("%q", truncate(n, 80)))
	}
	return refuse(kindUnknownAttachment, "Gmail message %s has no attachment named %q. Its attachments are: %s. Use one of those names as \"attachment\".",
		m.ID, truncate(name, 80), strings.Join(names, ", "))
}

// labelled starts a refusal's sentence with the entry it is about.
func labelled(it *item, err error) error {
	r, ok := err.(*refusal.Refusal)
	if !ok {
		return err
	}
	out := *r
	out.Text = capitalize(it.label() + ": " + r.Text)
	return &out
}

// mailLookupError words a failed read of a message that a send names;
// what starts the sentence ("Attachment 2: ", or "reply_to: ").
func mailLookupError(err error, what, id string, draft bool) error {
	switch {
	case errors.Is(err, gmail.ErrAPIDisabled):
		return gmailAPIDisabled(err, draft)
	case errors.Is(err, gmail.ErrNotFound), errors.Is(err, gmail.ErrRejected):
		return refuseErr(err, kindUnknownMessage, "%sno Gmail message with id %s is visible to this Google account: it does not exist, or it is another account's. %s "+
			"Find the message with search_mail and pass its id.", what, id, nothing(draft))
	case errors.Is(err, gmail.ErrScope):
		return refuseErr(err, kindMailScope, "%sreading Gmail needs permission to read the user's mail, which this Google account has not granted to drivemail. %s "+
			"Reconnect drivemail (sign in again) and allow reading mail.", what, nothing(draft))
	case errors.Is(err, gmail.ErrUnauthorized):
		return refuseErr(err, kindGmailUnauthorized, "Google no longer accepts this account's authorization (it expired or was revoked). %s Reconnect drivemail (sign in again).", nothing(draft))
	case errors.Is(err, gmail.ErrAnswerTooLarge):
		return refuseErr(err, kindMailTooLarge, "%sGmail message %s is too large for drivemail to read whole (its text and the parts Gmail puts inline). %s "+
			"Write the message yourself and attach its files one by one.", what, id, nothing(draft))
	case errors.Is(err, gmail.ErrDailyQuota):
		return refuseErr(err, kindGmailDailyQuota, "%sdrivemail has used up its daily Gmail quota, which all its users share, so message %s could not be read. %s "+
			"Google resets it at midnight Pacific time; until then drivemail cannot read or send mail for anyone. Tell whoever runs drivemail: they can ask Google for a higher quota in the Google Cloud console.",
			what, id, nothing(draft))
	case errors.Is(err, gmail.ErrForbidden):
		return refuseErr(err, kindGmailForbidden, "%sGmail refused to let drivemail read message %s for this account (an administrator may have turned off mail access for apps). %s "+
			"Ask the account's Google Workspace administrator whether apps may read its mail.", what, id, nothing(draft))
	case errors.Is(err, gmail.ErrRateLimited), errors.Is(err, gmail.ErrUnavailable), errors.Is(err, gmail.ErrStalled):
		return refuseErr(err, kindMailUnavailable, "%sGmail is busy or unavailable right now, so message %s could not be read. %s Try again in a minute.", what, id, nothing(draft))
	}
	return fmt.Errorf("read Gmail message: %w", err)
}

// planMail is planItem's case for a Gmail attachment: its name (renamed
// as a Drive file is, its own extension kept), its type, and the size
// Gmail reported, which the limits count before any download.
func planMail(it *item) error {
	a := it.mail.att
	clean := exportfmt.CleanName(a.Name)
	ext := path.Ext(clean)
	if ext == "" || ext == clean {
		ext = exportfmt.ExtByMimeType(a.MimeType)
	}
	name := clean
	if strings.TrimSpace(it.att.Name) != "" {
		name = exportfmt.WithExt(it.att.Name, ext)
	}
	mimeType := a.MimeType
	if !validMimeType(mimeType) || strings.HasPrefix(strings.ToLower(mimeType), "multipart/") {
		mimeType = exportfmt.MimeTypeByName(name)
	}
	it.plan = plan{action: actMail, name: name, mimeType: mimeType, size: a.Size, archive: blocked.FormatOf(name, mimeType)}
	if err := checkName(it, a.Name); err != nil {
		return err
	}
	return checkName(it, name)
}

// mailLimitAdvice adds, to a refusal over the size limit, each Gmail
// attachment's size and the way such a file can still go: as a link,
// once save_to_drive has put it in Drive.
func mailLimitAdvice(err error, items []*item) error {
	r, ok := err.(*refusal.Refusal)
	if !ok || r.Kind != kindTooLarge && r.Kind != kindMessageTooLarge {
		return err
	}
	var sizes []string
	for _, it := range items {
		if it.mail != nil {
			sizes = append(sizes, fmt.Sprintf("%q is %s", truncate(it.plan.name, 80), sizeText(it.plan.size)))
		}
	}
	if len(sizes) == 0 {
		return err
	}
	out := *r
	out.Text += " Of the Gmail attachments, " + strings.Join(sizes, ", ") + "; to send a large one as a link, put it in Drive with save_to_drive first."
	return &out
}

// openMail is openPart's case for a Gmail attachment: its bytes as they
// arrive (openPart adds the archive checks).
func openMail(ctx context.Context, it *item) (io.ReadCloser, error) {
	mp := it.mail
	return mailRetry(ctx, func() (io.ReadCloser, error) { return mp.r.OpenAttachment(ctx, mp.msgID, mp.att) })
}

// mailStreamFailure words a failure that a Gmail attachment caused while
// the message streamed, or returns nil for any other (and for a blocked
// type, which blockedRefusal words by the entry's source).
func mailStreamFailure(err error, c *checked, draft bool) error {
	var (
		pe *partError
		bf *blocked.Finding
		se *mimemsg.SizeError
	)
	if errors.As(err, &bf) {
		return nil
	}
	if errors.As(err, &se) {
		for _, it := range c.items {
			if it.mail != nil && it.plan.name == se.Name {
				got := sizeText(se.Got) + " instead of " + sizeText(se.Want)
				if se.Longer { // Got is where the stream passed Want, not its length
					got = "more than the " + sizeText(se.Want) + " Gmail said"
				}
				return refuseErr(err, kindMailCorrupt, "%s did not arrive from Gmail as Gmail described it (%s), so the message was abandoned. %s Try again.",
					it.label(), got, nothing(draft))
			}
		}
		return nil
	}
	if !errors.As(err, &pe) || pe.it.mail == nil {
		return nil
	}
	it := pe.it
	switch {
	case errors.Is(err, gmail.ErrCorrupt):
		return refuseErr(err, kindMailCorrupt, "%s did not arrive intact from Gmail, so the message was abandoned. %s Try again.", it.label(), nothing(draft))
	case errors.Is(err, gmail.ErrStalled):
		return refuseErr(err, kindMailStalled, "Gmail stalled while sending %s (no data came for a long while), so the message was abandoned. %s Try again in a minute.", it.label(), nothing(draft))
	case errors.Is(err, gmail.ErrNotFound), errors.Is(err, gmail.ErrScope), errors.Is(err, gmail.ErrUnauthorized), errors.Is(err, gmail.ErrRateLimited),
		errors.Is(err, gmail.ErrAPIDisabled), errors.Is(err, gmail.ErrDailyQuota), errors.Is(err, gmail.ErrForbidden):
		return mailLookupError(err, it.label()+": ", it.mail.msgID, draft)
	}
	return refuseErr(err, kindMailUnavailable, "Gmail stopped sending %s part-way, so the message was abandoned. %s Try again in a minute.", it.label(), nothing(draft))
}

// addMailSources names, in the result, the message each Gmail attachment
// came from. result lists attachments in the items' order.
func addMailSources(res *Result, mp *msgPlan) {
	j := 0
	for _, it := range mp.items {
		if !it.plan.isFile() || it.plan.inline {
			continue
		}
		if it.mail != nil && j < len(res.Attached) {
			res.Attached[j].FromMessage = it.mail.msgID
		}
		j++
	}
}

// mailRetry runs an idempotent Gmail read (messages.get, threads.get,
// opening attachments.get) under retry. Opening an attachment is retried
// only as a whole: once OpenAttachment has returned, its bytes go into the
// message, and a failure while they stream is not retried here.
func mailRetry[T any](ctx context.Context, call func() (T, error)) (T, error) {
	return retry(ctx, mailAgain, call)
}

// mailAgain is retry's rule for Gmail reads: a 5xx, a cut connection, or
// a per-minute rate limit (the user's or the project's, 429 or 403 alike),
// which Google's guide says to retry with exponential backoff
// (developers.google.com/workspace/gmail/api/guides/handle-errors), after
// the time Gmail names if it names one. The daily limits (the project's
// quota, the account's sending limit) are not ErrRateLimited: they last
// hours, and no retry lifts them.
func mailAgain(err error) (bool, time.Time) {
	var ge *gmail.Error
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false, time.Time{}
	case errors.Is(err, gmail.ErrUnavailable):
		return true, time.Time{}
	case errors.Is(err, gmail.ErrRateLimited):
		var at time.Time
		if errors.As(err, &ge) {
			at = ge.RetryAfter
		}
		return true, at
	case errors.As(err, &ge):
		return ge.Code == 0 && ge.Err != gmail.ErrStalled && !errors.Is(ge.Err, gmail.ErrCorrupt) && !errors.Is(ge.Err, gmail.ErrAnswerTooLarge), time.Time{}
	}
	return false, time.Time{}
}
