package compose

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/drivemail/drivemail/blocked"
	"github.com/drivemail/drivemail/mimemsg"
)

// builder assembles the mimemsg.Message for one request.
type builder struct {
	req       Request
	from      string
	date      time.Time
	messageID string

	msg mimemsg.Message
	// parts lists the items behind msg.Inline then msg.Attachments, in the
	// order mimemsg reports them in Written.Parts.
	parts []*item
}

// checkRequest refuses what no plan can fix: oversized bodies, a
// malformed thread id.
func checkRequest(req Request) error {
	if len(req.BodyText) > MaxBodyBytes {
		return refuse(kindBodyTooLarge, "body_text is %s; the limit is 2 MiB. Shorten it, or put the long text in a file and attach it.", mib(int64(len(req.BodyText))))
	}
	if len(req.BodyHTML) > MaxBodyBytes {
		return refuse(kindBodyTooLarge, "body_html is %s; the limit is 2 MiB. Shorten it, or put the long content in a file and attach it.", mib(int64(len(req.BodyHTML))))
	}
	if req.ThreadID != "" && !validThreadID(req.ThreadID) {
		return refuse(kindBadThreadID, "thread_id %q is not a Gmail thread id (letters and digits, as Gmail returned it). Leave it out to start a new thread.", truncate(req.ThreadID, 60))
	}
	return nil
}

func validThreadID(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func (b *builder) headers() mimemsg.Message {
	m := mimemsg.Message{
		From:       b.from,
		To:         b.req.To,
		Cc:         b.req.Cc,
		Bcc:        b.req.Bcc,
		Subject:    b.req.Subject,
		Date:       b.date,
		MessageID:  b.messageID,
		InReplyTo:  b.req.InReplyTo,
		References: b.req.References,
		Limits: mimemsg.Limits{
			MaxFileBytes: MaxAttachmentBytes,
			MaxBytes:     MaxMessageBytes,
		},
	}
	return m
}

// checkHeaders validates addresses, subject and ids before any Drive call,
// and fixes the Message-ID every pass of this send will carry.
func (b *builder) checkHeaders() error {
	p, err := mimemsg.Prepare(b.headers())
	if err != nil {
		return inputRefusal(err)
	}
	b.messageID = p.MessageID()
	return nil
}

// prepare builds the full message from the plan and validates it. The
// parts' Open functions are bound per pass by stream.
func (b *builder) prepare(mp *msgPlan) error {
	var links []mimemsg.Link
	for _, it := range mp.items {
		if it.plan.action == actLink {
			links = append(links, mimemsg.Link{Name: it.plan.name, URL: it.plan.url})
		}
	}
	m := b.headers()
	m.Text, m.HTML = b.req.BodyText, mp.html
	if len(links) > 0 {
		var err error
		m.Text, m.HTML, err = mimemsg.AddLinks(m.Text, m.HTML, links)
		if err != nil {
			return inputRefusal(err)
		}
	}
	b.parts = b.parts[:0]
	for _, inline := range []bool{true, false} {
		for _, it := range mp.items {
			if it.plan.isFile() && it.plan.inline == inline {
				b.parts = append(b.parts, it)
			}
		}
	}
	b.msg = m
	_, err := b.message(nil, nil)
	return err
}

// message returns a prepared message whose parts open through open (nil:
// a placeholder that is never called).
func (b *builder) message(ctx context.Context, open func(*item) func(context.Context) (io.ReadCloser, error)) (*mimemsg.Prepared, error) {
	m := b.msg
	m.Inline, m.Attachments = nil, nil
	for _, it := range b.parts {
		p := mimemsg.Part{
			Name:        it.plan.name,
			ContentType: it.plan.mimeType,
			ContentID:   it.plan.contentID,
			Size:        it.plan.size,
		}
		if open != nil {
			p.Open = open(it)
		} else {
			p.Open = func(context.Context) (io.ReadCloser, error) { return nil, errors.New("placeholder part") }
		}
		if it.plan.inline {
			m.Inline = append(m.Inline, p)
		} else {
			m.Attachments = append(m.Attachments, p)
		}
	}
	p, err := mimemsg.Prepare(m)
	if err != nil {
		return nil, inputRefusal(err)
	}
	return p, nil
}

// inputRefusal words a mimemsg validation error for the model.
func inputRefusal(err error) error {
	var ie *mimemsg.InputError
	if errors.As(err, &ie) {
		return refuseErr(err, inputKind(ie.Field), "%s", sentence(ie.Error()))
	}
	return err
}

// checkArchives reads each zip's central directory and each gzip's
// header (a few Range requests, not a download) and inspects model-written
// archives in memory, refusing any that holds a file type Gmail blocks.
func checkArchives(ctx context.Context, d driveAPI, mp *msgPlan, draft bool) error {
	for _, it := range mp.items {
		if !it.plan.isFile() || it.plan.archive == blocked.NotArchive {
			continue
		}
		var err error
		switch {
		case it.plan.action == actData:
			err = inspectBytes(ctx, it)
		case it.plan.action == actAttach && it.plan.archive == blocked.Zip:
			err = blocked.CheckZip(ctx, d.ReaderAt(ctx, it.file), it.file.Size, it.plan.name, blocked.Limits{MaxDirBytes: 4 << 20, MaxReads: zipReads})
		case it.plan.action == actAttach && (it.plan.archive == blocked.Gzip || it.plan.archive == blocked.TarGzip):
			// The original name in the header (one read of its first KiB);
			// the tar inside a .tgz is still inspected as it streams.
			err = blocked.CheckGzipAt(ctx, d.ReaderAt(ctx, it.file), it.file.Size, it.plan.name)
		default:
			continue // tar is inspected as it streams; exports are Google's
		}
		if err != nil {
			return archiveError(it, err, draft)
		}
	}
	return nil
}

func inspectBytes(ctx context.Context, it *item) error {
	if it.plan.archive == blocked.Zip {
		return blocked.CheckZip(ctx, bytes.NewReader(it.data), int64(len(it.data)), it.plan.name, blocked.Limits{})
	}
	in := blocked.NewInspector(it.plan.name, it.plan.archive, blocked.Limits{})
	_, werr := in.Write(it.data)
	cerr := in.Close()
	if werr != nil {
		return werr
	}
	return cerr
}

func archiveError(it *item, err error, draft bool) error {
	var br *blocked.Refusal
	if errors.As(err, &br) {
		return refuseErr(err, blockedKind(br), "Attachment %d: %s", it.index, err.Error())
	}
	if de := driveFailure(it, err, draft); de != nil {
		return de
	}
	return err
}

// sentence capitalises s and ends it with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
