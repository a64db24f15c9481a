package wan

import (
	"context"
	"testing"
	"time"
)

// fakeClock moves only when slept on.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if d > 0 {
		c.t = c.t.Add(d)
	}
	return ctx.Err()
}

func TestPacerKeepsToItsRate(t *testing.T) {
	for _, tc := range []struct {
		rate  Rate
		bytes int
		write int // bytes per take
	}{
		{rate: 4 * MiB, bytes: 1 << 20, write: 32 << 10},
		{rate: 4 * MiB, bytes: 1 << 20, write: 1 << 20},
		{rate: 33 * MB, bytes: 25 << 20, write: 32 << 10},
		{rate: MinRate, bytes: 64 << 10, write: 1000},
		{rate: MaxRate, bytes: 1 << 30, write: 1 << 20},
	} {
		c := &fakeClock{t: time.Unix(1e9, 0)}
		p := newPacer(c, tc.rate)
		start := c.t
		for left := tc.bytes; left > 0; left -= tc.write {
			if err := p.take(context.Background(), min(left, tc.write)); err != nil {
				t.Fatal(err)
			}
		}
		took := c.t.Sub(start)
		exact := time.Duration(float64(tc.bytes) / float64(tc.rate) * float64(time.Second))
		// Every byte keeps to the rate, the first ones too: no burst.
		if took < exact-time.Microsecond || took > exact+time.Microsecond {
			t.Errorf("%d bytes at %v in takes of %d: %v; want %v", tc.bytes, tc.rate, tc.write, took, exact)
		}
	}
}

func TestPacerGivesNoCreditForIdleTime(t *testing.T) {
	c := &fakeClock{t: time.Unix(1e9, 0)}
	p := newPacer(c, 4*MiB)
	if err := p.take(context.Background(), 1<<20); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(time.Hour) // idle: the link carried nothing meanwhile
	before := c.t
	piece := time.Duration(float64(p.piece) / float64(4*MiB) * float64(time.Second))
	if err := p.take(context.Background(), p.piece); err != nil || c.t.Sub(before) != piece {
		t.Errorf("one piece after an idle hour waited %v (%v); want its own time on the link, %v", c.t.Sub(before), err, piece)
	}
}

// lateClock oversleeps every wait by late, as timers on a busy machine do.
type lateClock struct {
	fakeClock
	late time.Duration
}

func (c *lateClock) Sleep(ctx context.Context, d time.Duration) error {
	if d > 0 {
		c.t = c.t.Add(d + c.late)
	}
	return ctx.Err()
}

// TestPacerAbsorbsLateWakeups: a stream read in small pieces, each wait
// overslept, still keeps to its rate (one late wake-up's worth over), not
// to the rate less a wake-up per piece: 35.8 MB read 4 KiB at a time at
// 16 MB/s took 11 s when each late wake-up was lost.
func TestPacerAbsorbsLateWakeups(t *testing.T) {
	c := &lateClock{fakeClock: fakeClock{t: time.Unix(1e9, 0)}, late: time.Millisecond}
	p := newPacer(c, 16*MB)
	start := c.t
	const size, piece = 35_800_000, 4 << 10
	for left := size; left > 0; left -= piece {
		if err := p.take(context.Background(), min(left, piece)); err != nil {
			t.Fatal(err)
		}
	}
	exact := time.Duration(float64(size) / float64(16*MB) * float64(time.Second))
	if took := c.t.Sub(start); took < exact || took > exact+c.late {
		t.Errorf("took %v; the link takes %v, and one late wake-up is %v", took, exact, c.late)
	}
}
