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

// burstTime is how much of a rate may pass at once: bytes move in
// pieces of this many milliseconds' worth, so a capped stream wakes ~50
// times a second however fast it is.
const (
	burstTime = 20 * time.Millisecond
	minPiece  = 4 << 10
)

// pacer is a token bucket in its virtual-scheduling form (GCRA): tat is
// when the bytes let through so far would have finished at the rate, and
// a piece may pass once tat is no more than one burst ahead of now.
// One request's body or response owns a pacer; it is not shared.
type pacer struct {
	clock clock
	rate  float64 // bytes per second
	burst time.Duration
	piece int
	tat   time.Time
}

func newPacer(c clock, r Rate) *pacer {
	piece := max(int(float64(r)*burstTime.Seconds()), minPiece)
	return &pacer{clock: c, rate: float64(r), piece: piece,
		burst: time.Duration(float64(piece) / float64(r) * float64(time.Second))}
}

// take waits until n more bytes may pass at the rate.
func (p *pacer) take(ctx context.Context, n int) error {
	now := p.clock.Now()
	if p.tat.Before(now) {
		p.tat = now
	}
	p.tat = p.tat.Add(time.Duration(float64(n) / p.rate * float64(time.Second)))
	return p.clock.Sleep(ctx, p.tat.Sub(now)-p.burst)
}
