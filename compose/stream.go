package compose

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/drivemail/drivemail/blocked"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/internal/redact"
	"github.com/drivemail/drivemail/mimemsg"
)

// Whole-pass retries: a transient Drive failure before any of the
// message reached Gmail restarts the pass. Past that point only gmail's
// own retries apply (a request resumed where Gmail says it got to, or an
// upload begun again on a new session when Gmail holds nothing that can
// complete, the writer run again), which never send a message twice.
const (
	passAttempts = 3
	passBackoff  = 500 * time.Millisecond
)

// stream runs passes of the message into Gmail until one succeeds or one
// fails in a way that must not be retried.
func (s *Service) stream(ctx context.Context, gc *gmail.Client, c *checked, out *outgoing, mp *msgPlan, opts Options) (gmail.Sent, mimemsg.Written, error) {
	// A message whose every part has a known size has a known length
	// (0: an export's size nobody knows): it goes to Gmail in one request.
	length, _ := out.msg.EncodedSize()
	wait := passBackoff
	for attempt := 1; ; attempt++ {
		sent, written, err := s.pass(ctx, gc, c, out, mp, length, opts)
		if err == nil {
			return sent, written, nil
		}
		var we *gmail.WriteError
		retry := errors.As(err, &we) && !we.Contacted && drive.IsTransient(we.Err) && attempt < passAttempts
		if !retry {
			return gmail.Sent{}, mimemsg.Written{}, streamError(err, c, opts.Draft)
		}
		s.cfg.Logger.InfoContext(ctx, "retrying send pass after a Drive failure", "attempt", attempt, "err", redact.Quoted(we.Err.Error()))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return gmail.Sent{}, mimemsg.Written{}, ctx.Err()
		case <-t.C:
		}
		wait *= 2
	}
}

// pass streams the message once: Drive → mimemsg → progress counter →
// Gmail upload, with the parts opened ahead of the writer (prefetch);
// length is the message's exact length when it is known (else 0). The
// upload may run the writer again (a restart on a new session): each run
// writes the message from its first byte, its parts opened afresh.
func (s *Service) pass(ctx context.Context, gc *gmail.Client, c *checked, out *outgoing, mp *msgPlan, length int64, opts Options) (gmail.Sent, mimemsg.Written, error) {
	var written mimemsg.Written
	// The writer reads Drive with the upload's context, which ends with
	// the upload: a Gmail failure stops a Drive read the writer waits on,
	// and the opens under way.
	write := func(ctx context.Context, w io.Writer) error {
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		// A part that cannot be opened ends the pass now, not once the
		// parts before it have gone to Gmail.
		pf := newPrefetch(ctx, out.opens, out.sizes, prefetchAhead, prefetchBytes, func(err error) { cancel(&openFailure{err}) })
		defer pf.close()
		prepared, err := out.bind(pf)
		if err != nil {
			return err
		}
		pw := &progressWriter{w: w, total: mp.estimate, report: opts.Progress}
		written, err = prepared.Stream(ctx, pw)
		var of *openFailure
		if err != nil && errors.As(context.Cause(ctx), &of) {
			return of.err // what the writer met was the cancellation
		}
		if err == nil {
			pw.flush()
		}
		return err
	}
	var sent gmail.Sent
	var err error
	upload := []gmail.UploadOption{
		gmail.ExpectedSize(mp.estimate), // 0 with exports: unknown; what admission reserved for
		gmail.AtLeast(mp.atLeast()),
		gmail.Length(length),
	}
	if opts.Draft {
		sent, err = gc.CreateDraft(ctx, c.req.ThreadID, write, upload...)
	} else {
		sent, err = gc.Send(ctx, c.req.ThreadID, write, upload...)
	}
	if err != nil {
		return gmail.Sent{}, mimemsg.Written{}, err
	}
	return sent, written, nil
}

// atLeast is a size the message surely reaches: the base64 of its files
// of known size, without line breaks (the writer fails a file that does
// not give its size), so that Gmail's upload sends the chunks that end by
// then while they are written.
func (mp *msgPlan) atLeast() int64 {
	var n int64
	for _, it := range mp.items {
		if it.plan.isFile() && it.plan.size >= 0 {
			n += (it.plan.size + 2) / 3 * 4
		}
	}
	return n
}

// openPart opens one part's content when the writer reaches it, retrying
// a transient failure to open (nothing of the part has been written yet).
// Every downloaded file is inspected as it streams: for a program by its
// content, and an archive for what it holds.
func openPart(ctx context.Context, d driveAPI, it *item) (io.ReadCloser, error) {
	var (
		rc  io.ReadCloser
		err error
	)
	switch it.plan.action {
	case actData:
		rc = io.NopCloser(bytes.NewReader(it.data))
	case actMail:
		rc, err = openMail(ctx, it)
	case actAttach:
		rc, err = withRetry(ctx, func() (io.ReadCloser, error) { return d.Download(ctx, it.file) })
	case actClient:
		rc, err = it.client.open(ctx)
	case actExport:
		var tab *drive.Sheet
		if it.plan.namedTab {
			tab = it.plan.tab // a named tab's values; without one, files.export gives the first
		}
		rc, err = withRetry(ctx, func() (io.ReadCloser, error) {
			return d.Export(ctx, it.file, it.plan.format.MimeType, tab)
		})
	default:
		return nil, fmt.Errorf("compose: %s has no content to open", it.label())
	}
	if err != nil {
		return nil, &partError{it: it, err: err}
	}
	rc = &labelledBody{rc: rc, it: it}
	switch {
	case it.plan.action == actData, it.plan.action == actExport:
		// Content written into the call was inspected whole before the
		// send (checkArchives); an export is what Google renders.
	case it.plan.archive == blocked.Zip && it.plan.action == actAttach:
		// Its directory was read by Range before the send: only its
		// entries' content is left to look at.
		rc = newInspected(rc, it, blocked.NewInspector(it.plan.name, it.plan.archive, blocked.Limits{}, blocked.DirectoryChecked()))
	default:
		// Every other file's bytes, and an archive's entries; a zip with
		// no Range reads has its directory read as it streams past.
		rc = newInspected(rc, it, blocked.NewInspector(it.plan.name, it.plan.archive, blocked.Limits{}))
	}
	return rc, nil
}

// openFailure is a prefetched open that failed, as the cause that ends
// its pass.
type openFailure struct{ err error }

func (e *openFailure) Error() string { return e.err.Error() }

// partError ties a failure to the entry it happened in.
type partError struct {
	it  *item
	err error
}

func (e *partError) Error() string { return e.it.label() + ": " + e.err.Error() }

func (e *partError) Unwrap() error { return e.err }

// labelledBody marks read errors with their entry.
type labelledBody struct {
	rc io.ReadCloser
	it *item
}

func (l *labelledBody) Read(p []byte) (int, error) {
	n, err := l.rc.Read(p)
	if err != nil && err != io.EOF {
		err = &partError{it: l.it, err: err}
	}
	return n, err
}

func (l *labelledBody) Close() error { return l.rc.Close() }

// inspected tees a download into a blocked.Inspector and fails the read
// as soon as the inspector finds a program or a blocked entry, so the
// message is abandoned before Gmail has all of it; the failure names its
// entry (partError), whose source decides the advice.
type inspected struct {
	rc     io.ReadCloser
	it     *item
	in     *blocked.Inspector
	closed bool
}

func newInspected(rc io.ReadCloser, it *item, in *blocked.Inspector) *inspected {
	return &inspected{rc: rc, it: it, in: in}
}

func (x *inspected) Read(p []byte) (int, error) {
	n, err := x.rc.Read(p)
	if n > 0 {
		if _, werr := x.in.Write(p[:n]); werr != nil {
			return 0, &partError{it: x.it, err: werr}
		}
	}
	if err == io.EOF {
		x.closed = true
		if verdict := x.in.Close(); verdict != nil {
			return n, &partError{it: x.it, err: verdict}
		}
	}
	return n, err
}

func (x *inspected) Close() error {
	if !x.closed {
		x.closed = true
		_ = x.in.Close()
	}
	return x.rc.Close()
}

// progressWriter reports bytes written at most every progressStep.
type progressWriter struct {
	w      io.Writer
	total  int64
	report func(done, total int64)
	done   int64
	last   int64
	mu     sync.Mutex
}

const progressStep = 256 << 10

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if p.report == nil {
		return n, err
	}
	p.mu.Lock()
	p.done += int64(n)
	due := p.done-p.last >= progressStep
	if due {
		p.last = p.done
	}
	done := p.done
	p.mu.Unlock()
	if due {
		p.report(done, p.total)
	}
	return n, err
}

// flush reports the final figure, with the total now known.
func (p *progressWriter) flush() {
	if p.report != nil {
		p.report(p.done, p.done)
	}
}
