package drive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/drivemail/drivemail/internal/stream"
)

// DefaultIdleTimeout is how long a download, export or Range read may go
// without a byte from Drive before it fails with ErrStalled.
const DefaultIdleTimeout = 60 * time.Second

// ErrStalled: Drive sent nothing for the idle timeout while a body was
// awaited (its headers, or its next bytes). Transient.
//
//lint:ignore ST1005 "Drive" is a name, not a capitalized word
var ErrStalled = errors.New("Drive stopped sending data")

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

// watch starts the stall watch of one request, to be made with the
// returned context: its clock runs while the caller waits on Drive (for
// the answer's headers, then inside each Read of watchBody), never
// between reads, so a consumer that is slow to read (a Gmail chunk going
// out) is not Drive stalling.
func (c *Client) watch(ctx context.Context) (context.Context, *stream.Watch) {
	return stream.Start(ctx, c.idle)
}

// stallFail ends the watch of a request that failed before its body and
// wraps the client library's error: ErrStalled when the watch ended it.
func (c *Client) stallFail(w *stream.Watch, op string, err error) error {
	fired := w.Fired() != nil
	w.Stop()
	if fired {
		return stalledErr(op, w.Idle())
	}
	return c.wrap(op, err)
}

// stalledErr is the error of a request the watch ended.
func stalledErr(op string, idle time.Duration) error {
	return &Error{Op: op, Err: fmt.Errorf("nothing for %s: %w", idle, ErrStalled)}
}

// watchBody hands rc over to w (paused once the headers came): reads run
// its clock, Close stops it.
func watchBody(rc io.ReadCloser, w *stream.Watch, op string) io.ReadCloser {
	return stream.IdleBody(rc, w, func(error) error { return stalledErr(op, w.Idle()) })
}
