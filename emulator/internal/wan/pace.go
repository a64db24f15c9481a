package wan

import (
	"context"
	"time"
)

// clock is the time a shaper reads and waits on; tests give a fake one.
type clock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends, and says which (nil: d passed).
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pieceTime is how much of a rate moves in one step: bytes move in
// pieces of this many milliseconds' worth, so a capped stream wakes ~50
// times a second however fast it is.
const (
	pieceTime = 20 * time.Millisecond
	minPiece  = 4 << 10
)

// pacer is the link one request's body or response crosses: bytes
// cross it one after another at the rate, and a piece is handed on only
// once its last byte has crossed (done: when the bytes let through so
// far have all crossed). None is given at the start and done never moves
// back, so n bytes take n/rate from the first byte, never less. A piece
// that arrives once the link has been idle longer than a piece's time
// starts crossing when it arrives (no credit builds up while it idles);
// one that comes sooner follows the last, so a sleep that overshoots,
// or a reader's own work between reads, costs the stream nothing.
// One request's body or response owns a pacer; it is not shared.
type pacer struct {
	clock clock
	rate  float64 // bytes per second
	piece int
	done  time.Time
}

func newPacer(c clock, r Rate) *pacer {
	return &pacer{clock: c, rate: float64(r), piece: max(int(float64(r)*pieceTime.Seconds()), minPiece)}
}

// take waits until n more bytes, there now, have crossed the link.
func (p *pacer) take(ctx context.Context, n int) error {
	now := p.clock.Now()
	if p.done.Before(now.Add(-pieceTime)) {
		p.done = now
	}
	p.done = p.done.Add(time.Duration(float64(n) / p.rate * float64(time.Second)))
	return p.clock.Sleep(ctx, p.done.Sub(now))
}
