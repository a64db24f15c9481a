// Package stream is the io plumbing drivemail's clients share: a
// watchdog whose clock runs only while the caller waits on the far side
// (Watch, and Body for a response read under one), and a reader that
// fails past a byte limit (Limit). The clients keep their own rules:
// what a stall is called, which limit applies, what the caller is told.
//
// The clocks are the time package's, so tests run them inside a
// testing/synctest bubble instead of waiting on the real clock.
package stream

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrIdle is the cause a Watch cancels with when Resume armed it.
var ErrIdle = errors.New("stream: idle timeout")

// Watch cancels one request when its clock reaches the time it was armed
// for. The clock runs only between Resume (or ResumeFor) and Pause, so a
// caller arms it while it waits on the far side (for an answer's
// headers, inside a body's Read) and pauses it while it does its own
// work: a consumer slow to read is not the far side stalling.
//
// Resume, Pause and Stop are for the goroutine that reads; Fired may be
// called from any.
type Watch struct {
	cancel context.CancelCauseFunc
	idle   time.Duration

	mu       sync.Mutex
	timer    *time.Timer
	armed    error     // the cause the running clock fires with; nil while paused
	deadline time.Time // when the running clock fires
	fired    error     // the cause it fired with, once it has
}

// NewWatch returns a paused Watch that cancels with cancel, armed for
// idle by Resume.
func NewWatch(cancel context.CancelCauseFunc, idle time.Duration) *Watch {
	return &Watch{cancel: cancel, idle: idle}
}

// Start derives from ctx a context that the returned Watch cancels, with
// its clock running from now for idle: the request made with the context
// is awaited from now.
func Start(ctx context.Context, idle time.Duration) (context.Context, *Watch) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := NewWatch(cancel, idle)
	w.Resume()
	return ctx, w
}

// Idle is the time Resume arms the clock for.
func (w *Watch) Idle() time.Duration { return w.idle }

// Resume runs the clock for the watch's idle time; it fires with ErrIdle.
func (w *Watch) Resume() { w.ResumeFor(w.idle, ErrIdle) }

// ResumeFor runs the clock for d; it fires with cause, which must not be
// nil. A watch that has fired stays fired.
func (w *Watch) ResumeFor(d time.Duration, cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fired != nil {
		return
	}
	w.armed, w.deadline = cause, time.Now().Add(d)
	if w.timer == nil {
		w.timer = time.AfterFunc(d, w.fire)
	} else {
		w.timer.Reset(d)
	}
}

// Pause stops the clock.
func (w *Watch) Pause() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = nil
	if w.timer != nil {
		w.timer.Stop()
	}
}

// fire cancels the request, unless the clock was paused or run again
// since this timer was set (a Stop that came too late to stop it).
func (w *Watch) fire() {
	w.mu.Lock()
	cause := w.armed
	if cause == nil || time.Now().Before(w.deadline) {
		w.mu.Unlock()
		return
	}
	w.armed, w.fired = nil, cause
	w.mu.Unlock()
	// The cause is recorded before the cancel, so whoever sees the
	// request fail because of it also sees Fired say so.
	w.cancel(cause)
}

// Fired is the cause the watch cancelled the request with, nil if it has
// not.
func (w *Watch) Fired() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

// Stop pauses the clock for good and releases the watch's context.
func (w *Watch) Stop() {
	w.Pause()
	w.cancel(nil)
}
