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

// outgoing is the planned message, validated once: its header by
// validate, its bodies and parts by assemble. A pass streams a copy of
// it bound to that pass's prefetch (bind), so a retried pass sends the
// same message, Date and Message-ID included, without checking it again.
type outgoing struct {
	msg *mimemsg.Prepared
	// opens are the parts' own Open functions (openPart) and sizes the
	// expected sizes (-1 unknown), in the order the writer reaches them:
	// inline parts (inside the HTML), then attachments.
	opens []opener
	sizes []int64
	// unread is the most of each part's answer the transport may hold
	// unread (unreadHold), in the same order: what a send reserves for
	// its open downloads.
	unread []int64
}

// assemble builds the message the plan describes (bodies with links,
// inline parts, attachments) under the header validate checked, and
// validates what the header did not: part names, Content-IDs. It opens
// nothing.
func (c *checked) assemble(mp *msgPlan, d driveAPI) (*outgoing, error) {
	var links []mimemsg.Link
	for _, it := range mp.items {
		if it.plan.action == actLink {
			links = append(links, mimemsg.Link{Name: it.plan.name, URL: it.plan.url})
		}
	}
	m := mimemsg.Message{Text: c.req.BodyText, HTML: mp.html}
	if len(links) > 0 {
		var err error
		m.Text, m.HTML, err = mimemsg.AddLinks(m.Text, m.HTML, links)
		if err != nil {
			return nil, inputRefusal(err)
		}
	}
	// The signature ends each body, after the links, as Gmail's web UI
	// puts it below what the message holds (signature.go).
	m.Text, m.HTML = withSignature(m.Text, m.HTML, c.from.signature)
	out := &outgoing{}
	// Inline parts first, then attachments, each in request order: the
	// order mimemsg reports them in Written.Parts (see result) and the
	// order Bind takes them in.
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
			out.opens, out.sizes = append(out.opens, p.Open), append(out.sizes, p.Size)
			out.unread = append(out.unread, it.unreadHold())
		}
	}
	p, err := c.header.Prepare(m)
	if err != nil {
		return nil, inputRefusal(err)
	}
	out.msg = p
	return out, nil
}

// bind is the message for one pass (a Prepared streams once), each part
// taken from pf, which was made from opens.
func (o *outgoing) bind(pf *prefetch) (*mimemsg.Prepared, error) {
	opens := make([]func(context.Context) (io.ReadCloser, error), len(o.opens))
	for i := range opens {
		opens[i] = pf.opener(i)
	}
	return o.msg.Bind(opens)
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
// header (a few Range requests, not a download) and inspects content
// written into the call in memory, refusing any that is or holds a file
// type Gmail blocks.
func checkArchives(ctx context.Context, d driveAPI, mp *msgPlan, draft bool) error {
	for _, it := range mp.items {
		if !it.plan.isFile() || it.plan.archive == blocked.NotArchive && it.plan.action != actData {
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

// inspectBytes inspects content written into the call: a zip's
// directory, then its bytes as they would stream.
func inspectBytes(ctx context.Context, it *item) error {
	var opts []blocked.InspectOption
	if it.plan.archive == blocked.Zip {
		if err := blocked.CheckZip(ctx, bytes.NewReader(it.data), int64(len(it.data)), it.plan.name, blocked.Limits{}); err != nil {
			return err
		}
		opts = append(opts, blocked.DirectoryChecked())
	}
	in := blocked.NewInspector(it.plan.name, it.plan.archive, blocked.Limits{}, opts...)
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
