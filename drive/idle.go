package drive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// DefaultIdleTimeout is how long a download, export or Range read may go
// without a byte from Drive before it fails with ErrStalled.
const DefaultIdleTimeout = 60 * time.Second

// ErrStalled: Drive sent nothing for the idle timeout while a body was
// awaited (its headers, or its next bytes). Transient.
//
//lint:ignore ST1005 "Drive" is a name, not a capitalized word
var ErrStalled = errors.New("Drive stopped sending data")

// errStallCause cancels a request whose watch fired.
var errStallCause = errors.New("drive: idle timeout")

// Option tunes a Client.
type Option func(*Client)

// WithIdleTimeout sets the idle timeout of downloads, exports and Range
// reads (default DefaultIdleTimeout); d <= 0 keeps the default.
func WithIdleTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.idle = d
		}
	}
}

// stallWatch cancels one request when Drive keeps it waiting for longer
// than the idle timeout. The clock runs only while the caller waits on
// Drive (for the answer's headers, then inside each Read), never between
// reads: a consumer that is slow to read (a Gmail chunk going out) is not
// Drive stalling.
type stallWatch struct {
	c      *Client
	ctx    context.Context
	cancel context.CancelCauseFunc
	idle   time.Duration
	timer  *time.Timer
}

// watch starts a watch with its clock running: the request made with
// w.ctx is awaited from now.
func (c *Client) watch(ctx context.Context) *stallWatch {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &stallWatch{c: c, ctx: ctx, cancel: cancel, idle: c.idle}
	w.timer = time.AfterFunc(c.idle, func() { cancel(errStallCause) })
	return w
}

func (w *stallWatch) pause()  { w.timer.Stop() }
func (w *stallWatch) resume() { w.timer.Reset(w.idle) }

// stalled reports whether the watch, not the caller, ended the request.
func (w *stallWatch) stalled() bool {
	return errors.Is(context.Cause(w.ctx), errStallCause)
}

// stop ends the watch and releases its context.
func (w *stallWatch) stop() {
	w.timer.Stop()
	w.cancel(nil)
}

// fail ends the watch of a request that failed before its body and
// wraps the client library's error: ErrStalled when the watch ended it.
func (w *stallWatch) fail(op string, err error) error {
	stalled := w.stalled()
	w.stop()
	if stalled {
		return w.err(op)
	}
	return w.c.wrap(op, err)
}

// err is the error of a request the watch ended.
func (w *stallWatch) err(op string) error {
	return &Error{Op: op, Err: fmt.Errorf("nothing for %s: %w", w.idle, ErrStalled)}
}

// idleBody is a response body read under a stallWatch.
type idleBody struct {
	rc io.ReadCloser
	w  *stallWatch
	op string
}

// watchBody hands rc over to w: reads run its clock, Close stops it.
func watchBody(rc io.ReadCloser, w *stallWatch, op string) io.ReadCloser {
	return &idleBody{rc: rc, w: w, op: op}
}

func (b *idleBody) Read(p []byte) (int, error) {
	b.w.resume()
	n, err := b.rc.Read(p)
	b.w.pause()
	if err != nil && err != io.EOF && b.w.stalled() {
		err = b.w.err(b.op)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.w.stop()
	return b.rc.Close()
}
