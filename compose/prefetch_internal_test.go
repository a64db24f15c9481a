package compose

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeParts are parts whose opens are recorded and answer when released.
type fakeParts struct {
	mu      sync.Mutex
	started []int
	bodies  []*fakeBody
	release chan struct{} // closed: every open answers
	fail    map[int]error
	changed chan struct{} // pinged on each start
}

type fakeBody struct {
	io.Reader
	closed bool
}

func (b *fakeBody) Close() error { b.closed = true; return nil }

func newFakeParts() *fakeParts {
	return &fakeParts{release: make(chan struct{}), fail: map[int]error{}, changed: make(chan struct{}, 100)}
}

func (f *fakeParts) opens(n int) []opener {
	opens := make([]opener, n)
	for i := range opens {
		opens[i] = func(ctx context.Context) (io.ReadCloser, error) {
			f.mu.Lock()
			f.started = append(f.started, i)
			f.mu.Unlock()
			f.changed <- struct{}{}
			select {
			case <-f.release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if err := f.fail[i]; err != nil {
				return nil, err
			}
			b := &fakeBody{Reader: strings.NewReader("x")}
			f.mu.Lock()
			f.bodies = append(f.bodies, b)
			f.mu.Unlock()
			return b, nil
		}
	}
	return opens
}

// startedAtLeast waits until want opens have run their first line.
func (f *fakeParts) startedAtLeast(t *testing.T, want int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		f.mu.Lock()
		n := len(f.started)
		f.mu.Unlock()
		if n >= want {
			return
		}
		select {
		case <-f.changed:
		case <-deadline:
			t.Fatalf("only %d opens started, want %d", n, want)
		}
	}
}

// begun is how many parts' opens p has begun (always a prefix).
func (p *prefetch) begun() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// TestPrefetchBounds: with the writer on the first part, the next is
// always opened; parts past it only while they fit in the byte budget
// (an unknown size counts as all of it) and the count bound. Each edge
// is tested at and one past it.
func TestPrefetchBounds(t *testing.T) {
	const budget = 1000
	tests := []struct {
		name  string
		sizes []int64
		ahead int
		want  int // opens begun before the writer takes anything
	}{
		{"the next part, whatever its size", []int64{1, 5000, 1}, 9, 2},
		{"parts ahead that fill the budget exactly", []int64{1, 600, 400, 1}, 9, 3},
		{"one byte past the budget", []int64{1, 600, 401, 1}, 9, 2},
		{"an unknown size fills the budget", []int64{1, -1, 1}, 9, 2},
		{"an unknown size as the next part", []int64{1, 1, -1}, 9, 2},
		{"small parts up to the count", []int64{1, 1, 1, 1}, 3, 4},
		{"small parts one past the count", []int64{1, 1, 1, 1, 1}, 3, 4},
		{"one part", []int64{1}, 9, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeParts()
			p := newPrefetch(context.Background(), f.opens(len(tt.sizes)), tt.sizes, tt.ahead, budget, nil)
			defer p.close()
			if got := p.begun(); got != tt.want {
				t.Errorf("opened %d parts before the writer took one; want %d", got, tt.want)
			}
		})
	}
}

// TestPrefetchFollowsTheWriter: taking a part opens the ones its bound
// now allows, and every part reaches the writer in order.
func TestPrefetchFollowsTheWriter(t *testing.T) {
	f := newFakeParts()
	sizes := []int64{1, 5000, 5000, 5000}
	p := newPrefetch(context.Background(), f.opens(4), sizes, 9, 1000, nil)
	defer p.close()
	close(f.release)
	for i := range sizes {
		rc, err := p.take(context.Background(), i)
		if err != nil {
			t.Fatalf("take %d: %v", i, err)
		}
		rc.Close()
		if got, want := p.begun(), min(i+2, len(sizes)); got != want {
			t.Errorf("with the writer on part %d, %d parts opened; want %d", i, got, want)
		}
	}
	if _, err := p.take(context.Background(), 1); err == nil {
		t.Error("a part was taken twice")
	}
}

// TestPrefetchCloseClosesWhatTheWriterDidNotTake: close ends the opens
// under way and closes every answer the writer did not take, once, and
// leaves the writer's own alone.
func TestPrefetchCloseClosesWhatTheWriterDidNotTake(t *testing.T) {
	f := newFakeParts()
	sizes := []int64{1, 1, 1, 1}
	p := newPrefetch(context.Background(), f.opens(4), sizes, 2, 1000, nil)
	f.startedAtLeast(t, 3)
	close(f.release)
	mine, err := p.take(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	p.close()
	p.close()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range f.bodies {
		if b == mine && b.closed {
			t.Error("close closed the writer's own answer")
		}
		if b != mine && !b.closed {
			t.Error("an answer the writer never took was left open")
		}
	}
	if _, err := p.take(context.Background(), 1); err == nil {
		t.Error("a part was taken after close")
	}
}

// TestPrefetchFailureIsReportedAtOnce: an open that fails is reported
// while the writer is still on an earlier part, and the writer that
// reaches it gets the same error.
func TestPrefetchFailureIsReportedAtOnce(t *testing.T) {
	f := newFakeParts()
	gone := errors.New("file gone")
	f.fail[2] = gone
	failed := make(chan error, 1)
	p := newPrefetch(context.Background(), f.opens(3), []int64{1, 1, 1}, 9, 1000, func(err error) { failed <- err })
	defer p.close()
	close(f.release)
	select {
	case err := <-failed:
		if !errors.Is(err, gone) {
			t.Errorf("reported %v, want the open's error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the failed open was not reported")
	}
	for i := range 2 {
		rc, err := p.take(context.Background(), i)
		if err != nil {
			t.Fatalf("take %d: %v", i, err)
		}
		rc.Close()
	}
	if _, err := p.take(context.Background(), 2); !errors.Is(err, gone) {
		t.Errorf("take 2: %v, want the open's error", err)
	}
}

// TestPrefetchCloseEndsOpensUnderWay: opens still waiting on Drive end
// with close, which returns only once they have.
func TestPrefetchCloseEndsOpensUnderWay(t *testing.T) {
	f := newFakeParts()
	reported := false
	p := newPrefetch(context.Background(), f.opens(3), []int64{1, 1, 1}, 9, 1000, func(error) { reported = true })
	f.startedAtLeast(t, 3)
	p.close() // the opens never get released: only the cancellation ends them
	if reported {
		t.Error("the opens that close ended were reported as failures")
	}
}
