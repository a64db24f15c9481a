package stream

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

const idle = 10 * time.Second

// TestWatch runs the clock through the ways a caller drives it and checks
// whether, and with which cause, it cancelled the request.
func TestWatch(t *testing.T) {
	errSlow := errors.New("too slow in all")
	tests := []struct {
		name  string
		drive func(w *Watch) // from a running clock
		want  error
	}{
		{"running past idle fires", func(w *Watch) { time.Sleep(idle + time.Millisecond) }, ErrIdle},
		{"running just short of idle does not", func(w *Watch) { time.Sleep(idle - time.Millisecond) }, nil},
		{"paused for long does not", func(w *Watch) {
			time.Sleep(idle - time.Second)
			w.Pause()
			time.Sleep(10 * idle)
		}, nil},
		{"each wait gets the whole idle time", func(w *Watch) {
			for range 5 {
				time.Sleep(idle - time.Second)
				w.Pause()
				time.Sleep(idle)
				w.Resume()
			}
			time.Sleep(idle - time.Second)
		}, nil},
		{"a wait after pauses still fires", func(w *Watch) {
			w.Pause()
			time.Sleep(idle)
			w.Resume()
			time.Sleep(idle)
		}, ErrIdle},
		{"armed for less, with another cause", func(w *Watch) {
			w.Pause()
			w.ResumeFor(time.Second, errSlow)
			time.Sleep(time.Second)
		}, errSlow},
		{"stopped, it never fires", func(w *Watch) {
			w.Stop()
			time.Sleep(10 * idle)
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, w := Start(context.Background(), idle)
				tt.drive(w)
				synctest.Wait()
				if got := w.Fired(); got != tt.want {
					t.Errorf("Fired = %v, want %v", got, tt.want)
				}
				if tt.want != nil && context.Cause(ctx) != tt.want {
					t.Errorf("the context's cause = %v, want %v", context.Cause(ctx), tt.want)
				}
				w.Stop()
				if ctx.Err() == nil {
					t.Error("Stop left the context running")
				}
			})
		})
	}
}

// TestWatchStaysFired: once fired, resuming does not re-arm or change
// the cause.
func TestWatchStaysFired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, w := Start(context.Background(), idle)
		time.Sleep(idle)
		synctest.Wait()
		w.ResumeFor(time.Second, errors.New("other"))
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if w.Fired() != ErrIdle {
			t.Errorf("Fired = %v, want ErrIdle", w.Fired())
		}
	})
}

// TestNewWatchIsPaused: a watch made with NewWatch waits for Resume.
func TestNewWatchIsPaused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		w := NewWatch(cancel, idle)
		time.Sleep(10 * idle)
		synctest.Wait()
		if w.Fired() != nil || ctx.Err() != nil {
			t.Fatalf("a paused watch fired: %v", w.Fired())
		}
		w.Resume()
		time.Sleep(idle)
		synctest.Wait()
		if w.Fired() != ErrIdle || context.Cause(ctx) != ErrIdle {
			t.Errorf("Fired = %v, cause %v; want ErrIdle", w.Fired(), context.Cause(ctx))
		}
	})
}
