package compose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Prefetch bounds: how far ahead of the MIME writer parts are opened, so
// that Drive's wait before a download's first byte (about 430 ms under
// the WAN profile) passes while earlier parts stream instead of once per
// part in turn. The next part is always opened early; parts past it only
// while the parts ahead add up to at most prefetchBytes (a part of
// unknown size, an export, counts as prefetchBytes), and never more than
// prefetchAhead parts. An opened answer that waits holds at most its
// transport's buffer (the socket's, or its HTTP/2 stream window,
// google.StreamWindow: 4 MiB), so this bounds what waiting answers hold
// to prefetchBytes plus one such buffer per send. Chosen by measurement (docs/operations.md): ten small
// files open at once; 2.5 MiB files three ahead, which hides the wait
// behind their upload.
const (
	prefetchAhead = 9
	prefetchBytes = 8 << 20
)

// opener opens one part's content; openPart, bound to its item.
type opener func(ctx context.Context) (io.ReadCloser, error)

// prefetch opens the parts of one pass ahead of the MIME writer, in the
// order the writer reaches them, within the bounds above. An open that
// fails (after openPart's own retries) is reported to failed at once, so
// the pass ends without streaming the parts before it into Gmail. close ends
// every open still running and closes every answer the writer did not
// take, whatever happened before.
//
// Its goroutines end with the pass: close cancels their context and
// waits for them.
type prefetch struct {
	ctx    context.Context
	cancel context.CancelFunc
	opens  []opener
	sizes  []int64 // each part's expected size, -1 when unknown
	ahead  int     // parts
	budget int64   // bytes of the parts ahead past the next one
	failed func(error)

	mu      sync.Mutex
	started int // parts whose open has begun: [0, started)
	cur     int // the part the writer is on, or will ask for first
	parts   []*opening
	closed  bool
	wg      sync.WaitGroup
}

// opening is one part's open, under way or done.
type opening struct {
	done    chan struct{} // closed when rc and err are set
	rc      io.ReadCloser
	err     error
	claimed bool // the writer asked for it
	owned   bool // the writer has it: close leaves it alone
}

var errPrefetchClosed = errors.New("compose: the pass has ended")

// newPrefetch starts opening the first parts with ctx, which must
// outlive the pass (the writer's context). sizes are the parts' expected
// sizes (-1 unknown). failed, if not nil, is called once per failed open,
// from the goroutine that opened it.
func newPrefetch(ctx context.Context, opens []opener, sizes []int64, ahead int, budget int64, failed func(error)) *prefetch {
	ctx, cancel := context.WithCancel(ctx)
	p := &prefetch{ctx: ctx, cancel: cancel, opens: opens, sizes: sizes, ahead: max(ahead, 1), budget: budget,
		failed: failed, parts: make([]*opening, len(opens))}
	p.mu.Lock()
	p.startAhead()
	p.mu.Unlock()
	return p
}

// startAhead begins the opens the bounds allow with the writer on part
// p.cur: that part, the one after it, and more while they fit. p.mu
// must be held.
func (p *prefetch) startAhead() {
	for end := opened(p.sizes, p.cur, p.ahead, p.budget); p.started < end && !p.closed; p.started++ {
		o := &opening{done: make(chan struct{})}
		p.parts[p.started] = o
		p.wg.Add(1)
		go p.open(p.opens[p.started], o)
	}
}

// opened is how many parts have been opened once the writer is on part
// cur, given the parts' expected sizes (-1 unknown): all before it, it,
// the next, and the parts past that while they number at most ahead and
// the parts after cur's, through them, add up to at most budget bytes (an
// unknown size counts as the whole budget). The rule of startAhead, and
// of what a send reserves for the answers it has open (transportHold).
func opened(sizes []int64, cur, ahead int, budget int64) int {
	var sum int64
	for j := cur + 1; j < len(sizes); j++ {
		if sizes[j] < 0 {
			sum += budget
		} else {
			sum += sizes[j]
		}
		if j > cur+1 && (j-cur > ahead || sum > budget) {
			return j
		}
	}
	return len(sizes)
}

func (p *prefetch) open(open opener, o *opening) {
	defer p.wg.Done()
	rc, err := open(p.ctx)
	o.rc, o.err = rc, err
	close(o.done)
	// A failure the pass's end caused is not news.
	if err != nil && p.failed != nil && p.ctx.Err() == nil {
		p.failed(err)
	}
}

// take hands part i's content to the writer, waiting for its open, and
// starts the opens up to ahead parts past it. The caller closes what it
// gets. Each part can be taken once.
func (p *prefetch) take(ctx context.Context, i int) (io.ReadCloser, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errPrefetchClosed
	}
	if i < 0 || i >= len(p.opens) {
		p.mu.Unlock()
		return nil, fmt.Errorf("compose: no part %d to open", i)
	}
	p.cur = max(p.cur, i)
	p.startAhead()
	o := p.parts[i]
	if o.claimed {
		p.mu.Unlock()
		return nil, fmt.Errorf("compose: part %d opened twice", i)
	}
	o.claimed = true
	p.mu.Unlock()

	select {
	case <-o.done:
	case <-ctx.Done():
		return nil, ctx.Err() // close closes the answer when it comes
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errPrefetchClosed // close has closed it, or will
	}
	o.owned = true
	return o.rc, o.err
}

// opener returns part i's Open for mimemsg: a take from p.
func (p *prefetch) opener(i int) opener {
	return func(ctx context.Context) (io.ReadCloser, error) { return p.take(ctx, i) }
}

// close cancels the opens still running, waits for them, and closes every
// answer the writer does not own. It is safe to call more than once.
func (p *prefetch) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, o := range p.parts {
		if o != nil && !o.owned && o.rc != nil {
			_ = o.rc.Close()
			o.rc = nil
		}
	}
}
