package clientfile

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/drivemail/drivemail/internal/stream"
)

// Body is an opened file's content. Each Read runs under a watchdog: no
// byte for the idle timeout, or more than the total reading time, cancels
// the request and fails the read. The clocks run only inside Read, so a
// caller that stops to write elsewhere (a Gmail upload chunk) is not
// counted against the host.
type Body struct {
	rc      io.ReadCloser
	size    int64 // Content-Length, -1 when unknown
	max     int64
	n       int64
	idle    time.Duration
	left    time.Duration // reading time left before TooSlow
	watch   *stream.Watch // armed only inside Read
	failed  error
	closeMu sync.Once
}

// Causes the watchdog cancels the request with.
var (
	errIdle = errors.New("clientfile: idle timeout")
	errSlow = errors.New("clientfile: total time")
)

func newBody(rc io.ReadCloser, cancel context.CancelCauseFunc, size, max int64, idle, total time.Duration) *Body {
	return &Body{rc: rc, size: size, max: max, idle: idle, left: total, watch: stream.NewWatch(cancel, idle)}
}

// Read reads the file, failing with an *Error past the limit, on a stall,
// a trickle, or a body cut short.
func (b *Body) Read(p []byte) (int, error) {
	if b.failed != nil {
		return 0, b.failed
	}
	wait := min(b.idle, b.left)
	cause := errIdle
	if b.left < b.idle {
		cause = errSlow
	}
	b.watch.ResumeFor(wait, cause)
	start := time.Now()
	n, err := b.rc.Read(p)
	b.watch.Pause()
	b.left -= time.Since(start)
	b.n += int64(n)
	switch {
	case b.n > b.max:
		return n, b.fail(&Error{Failure: TooLarge, Size: b.n, Limit: b.max})
	case err == io.EOF && b.size >= 0 && b.n != b.size:
		return n, b.fail(&Error{Failure: Truncated})
	case err == io.EOF:
		return n, io.EOF
	case err != nil:
		return n, b.fail(b.readError(err))
	case b.left <= 0:
		return n, b.fail(&Error{Failure: TooSlow})
	}
	return n, nil
}

// readError sorts a failed read by what stopped it.
func (b *Body) readError(err error) error {
	fired := b.watch.Fired()
	switch {
	case fired == errIdle:
		return &Error{Failure: Stalled, err: err}
	case fired == errSlow:
		return &Error{Failure: TooSlow, err: err}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Failure: Truncated, err: err}
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err // the caller gave up: its own error, not the host's
	}
	return &Error{Failure: Unavailable, err: err}
}

func (b *Body) fail(err error) error {
	if b.failed == nil {
		b.failed = err
	}
	return b.failed
}

// N is how many bytes have been read.
func (b *Body) N() int64 { return b.n }

// Close ends the download and releases its connection. It is safe to
// call more than once.
func (b *Body) Close() error {
	var err error
	b.closeMu.Do(func() {
		b.watch.Pause()
		err = b.rc.Close()
		b.watch.Stop()
	})
	return err
}
