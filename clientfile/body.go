package clientfile

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Body is an opened file's content. Each Read runs under a watchdog: no
// byte for the idle timeout, or more than the total reading time, cancels
// the request and fails the read. The clocks run only inside Read, so a
// caller that stops to write elsewhere (a Gmail upload chunk) is not
// counted against the host.
type Body struct {
	rc      io.ReadCloser
	cancel  context.CancelCauseFunc
	size    int64 // Content-Length, -1 when unknown
	max     int64
	n       int64
	idle    time.Duration
	left    time.Duration         // reading time left before TooSlow
	timer   *time.Timer           // the watchdog, armed only inside Read
	armed   atomic.Pointer[error] // what the watchdog's firing would mean
	fired   atomic.Pointer[error] // the watchdog's cause, once it fired
	failed  error
	closeMu sync.Once
}

// Causes the watchdog cancels the request with.
var (
	errIdle = errors.New("clientfile: idle timeout")
	errSlow = errors.New("clientfile: total time")
)

func newBody(rc io.ReadCloser, cancel context.CancelCauseFunc, size, max int64, idle, total time.Duration) *Body {
	b := &Body{rc: rc, cancel: cancel, size: size, max: max, idle: idle, left: total}
	b.timer = time.AfterFunc(time.Hour, func() {
		if cause := b.armed.Load(); cause != nil {
			b.fired.Store(cause)
			b.cancel(*cause)
		}
	})
	b.timer.Stop()
	return b
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
	b.armed.Store(&cause)
	b.timer.Reset(wait)
	start := time.Now()
	n, err := b.rc.Read(p)
	b.timer.Stop()
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
	var fired error
	if c := b.fired.Load(); c != nil {
		fired = *c
	}
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
		b.timer.Stop()
		err = b.rc.Close()
		b.cancel(nil)
	})
	return err
}
