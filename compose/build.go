package compose

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"

	"github.com/drivemail/drivemail/blocked"
	"github.com/drivemail/drivemail/mimemsg"
)

// outgoing is the planned message, assembled and validated once. Each
// part's Open is its own openPart; a pass opens them through its
// prefetch (prepared), ahead of the writer.
type outgoing struct {
	msg mimemsg.Message
}

// assemble builds the message the plan describes (bodies with links,
// inline parts, attachments) and validates it: part names, Content-IDs,
// header lengths. It opens nothing.
func (c *checked) assemble(mp *msgPlan, d driveAPI) (*outgoing, error) {
	var links []mimemsg.Link
	for _, it := range mp.items {
		if it.plan.action == actLink {
			links = append(links, mimemsg.Link{Name: it.plan.name, URL: it.plan.url})
		}
	}
	m := c.headers()
	m.Text, m.HTML = c.req.BodyText, mp.html
	if len(links) > 0 {
		var err error
		m.Text, m.HTML, err = mimemsg.AddLinks(m.Text, m.HTML, links)
		if err != nil {
			return nil, inputRefusal(err)
		}
	}
	// Inline parts first, then attachments, each in request order: the
	// order mimemsg reports them in Written.Parts (see result).
	for _, inline := range []bool{true, false} {
		for _, it := range mp.items {
			if !it.plan.isFile() || it.plan.inline != inline {
				continue
			}
			p := mimemsg.Part{
				Name:        it.plan.name,
				ContentType: it.plan.mimeType,
				ContentID:   it.plan.contentID,
				Size:        it.plan.size,
				Open:        func(ctx context.Context) (io.ReadCloser, error) { return openPart(ctx, d, it) },
			}
			if inline {
				m.Inline = append(m.Inline, p)
			} else {
				m.Attachments = append(m.Attachments, p)
			}
		}
	}
	if _, err := mimemsg.Prepare(m); err != nil {
		return nil, inputRefusal(err)
	}
	return &outgoing{msg: m}, nil
}

// opens are the parts' own Open functions and expected sizes (-1
// unknown) in the order the writer reaches them: inline parts (inside
// the HTML), then attachments.
func (o *outgoing) opens() ([]opener, []int64) {
	var (
		opens []opener
		sizes []int64
	)
	for _, parts := range [][]mimemsg.Part{o.msg.Inline, o.msg.Attachments} {
		for _, p := range parts {
			opens, sizes = append(opens, p.Open), append(sizes, p.Size)
		}
	}
	return opens, sizes
}

// prepared is the message for one pass (a Prepared streams once), each
// part taken from pf, which was made from opens. Prepare cannot fail
// here when assemble's did not: the message and its date and Message-ID
// are the same.
func (o *outgoing) prepared(pf *prefetch) (*mimemsg.Prepared, error) {
	m := o.msg
	i := 0
	bind := func(parts []mimemsg.Part) []mimemsg.Part {
		bound := make([]mimemsg.Part, len(parts))
		for k, p := range parts {
			p.Open = pf.opener(i)
			bound[k] = p
			i++
		}
		return bound
	}
	m.Inline = bind(m.Inline)
	m.Attachments = bind(m.Attachments)
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
	var f *blocked.Finding
	if errors.As(err, &f) {
		return blockedRefusal(it, f, "")
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
