package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/synctest"
	"time"
)

// farSide is a body whose reads each take wait (then yield one byte),
// until n bytes; a read that outlasts its context fails with the
// context's error, as a connection cancelled mid-read does.
type farSide struct {
	ctx  context.Context
	wait []time.Duration // the wait of each read in turn
	i    int
}

func (f *farSide) Read(p []byte) (int, error) {
	if f.i == len(f.wait) {
		return 0, io.EOF
	}
	d := f.wait[f.i]
	f.i++
	select {
	case <-time.After(d):
		p[0] = 'x'
		return 1, nil
	case <-f.ctx.Done():
		return 0, fmt.Errorf("read: %w", f.ctx.Err())
	}
}

func (f *farSide) Close() error { return nil }

var errStalled = errors.New("the far side stalled")

func stalled(error) error { return errStalled }

// TestBody reads bodies whose far side waits before each byte, with the
// reader pausing between reads, and checks what the reader sees.
func TestBody(t *testing.T) {
	s := time.Second
	tests := []struct {
		name    string
		timed   bool
		wait    []time.Duration
		between time.Duration // the reader's own time between reads
		want    error         // nil: the whole body
		got     int           // bytes read before the failure
	}{
		{"idle: every wait under the idle time", false, []time.Duration{idle - s, idle - s, idle - s}, 0, nil, 3},
		{"idle: a slow reader is not a stall", false, []time.Duration{s, s, s}, 5 * idle, nil, 3},
		{"idle: one wait past it", false, []time.Duration{s, idle + s, s}, 0, errStalled, 1},
		{"timed: the clock runs between reads", true, []time.Duration{s, s, s}, idle / 2, errStalled, 2},
		{"timed: within the bound", true, []time.Duration{s, s, s}, s, nil, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, w := Start(context.Background(), idle)
				far := &farSide{ctx: ctx, wait: tt.wait}
				var b *Body
				if tt.timed {
					b = TimedBody(far, w, stalled)
				} else {
					w.Pause() // the headers came
					b = IdleBody(far, w, stalled)
				}
				defer b.Close()
				n, err := 0, error(nil)
				for {
					var p [8]byte
					var k int
					k, err = b.Read(p[:])
					n += k
					if err != nil {
						break
					}
					time.Sleep(tt.between)
				}
				if err == io.EOF {
					err = nil
				}
				if err != tt.want || n != tt.got {
					t.Errorf("read %d bytes, then %v; want %d, then %v", n, err, tt.got, tt.want)
				}
			})
		})
	}
}

// TestBodyKeepsOtherFailures: a read that fails for its own reason, the
// watch not having fired, keeps its error; Close stops the watch.
func TestBodyKeepsOtherFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, w := Start(context.Background(), idle)
		w.Pause()
		b := IdleBody(io.NopCloser(failing{err: io.ErrUnexpectedEOF}), w, stalled)
		if _, err := b.Read(make([]byte, 4)); err != io.ErrUnexpectedEOF {
			t.Errorf("Read = %v, want io.ErrUnexpectedEOF", err)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if ctx.Err() == nil {
			t.Error("Close left the watch's context running")
		}
		time.Sleep(10 * idle)
		synctest.Wait()
		if w.Fired() != nil {
			t.Errorf("a closed body's watch fired: %v", w.Fired())
		}
	})
}

type failing struct{ err error }

func (r failing) Read([]byte) (int, error) { return 0, r.err }
