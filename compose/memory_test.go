package compose

import (
	"math/rand/v2"
	"testing"

	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/mimemsg"
)

const window = google.StreamWindow

// TestTransportHoldFollowsPrefetch: what a send reserves for its open
// answers is the most that prefetch keeps open at once, each part at most
// one window, a part already in memory nothing.
func TestTransportHoldFollowsPrefetch(t *testing.T) {
	const kib, mib = 1 << 10, 1 << 20
	for _, c := range []struct {
		name          string
		unread, sizes []int64
		want          int64
	}{
		{"no parts", nil, nil, 0},
		{"one 50 KiB file", []int64{50 * kib}, []int64{50 * kib}, 50 * kib},
		{"one 25 MiB file", []int64{window}, []int64{25 * mib}, window},
		{"bytes the model wrote", []int64{0}, []int64{300 * kib}, 0},
		// With the writer on the first, the next three fit the 8 MiB.
		{"10 files of 2.5 MiB", repeat(10, 5*mib/2), repeat(10, 5*mib/2), 4 * 5 * mib / 2},
		// An export counts as the whole 8 MiB: nothing past the next.
		{"exports", repeat(4, window), repeat(4, -1), 2 * window},
		// The part being written, and the next two within the 8 MiB: the most.
		{"an export, then two files of one window", repeat(3, window), []int64{-1, window, window}, maxTransportHold},
		{"ten small files: all open at once", repeat(10, 50*kib), repeat(10, 50*kib), 10 * 50 * kib},
	} {
		if got := transportHold(c.unread, c.sizes); got != c.want {
			t.Errorf("%s: %d bytes held, want %d", c.name, got, c.want)
		}
	}
}

// TestTransportHoldNeverPassesItsBound: MaxSendMemory, which sizes the
// budget's floor and default, bounds every send's transport hold.
func TestTransportHoldNeverPassesItsBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 6))
	for range 2000 {
		n := 1 + rng.IntN(MaxFiles)
		unread, sizes := make([]int64, n), make([]int64, n)
		for i := range n {
			switch rng.IntN(3) {
			case 0:
				sizes[i], unread[i] = -1, window
			default:
				sizes[i] = rng.Int64N(3 * window)
				unread[i] = min(window, sizes[i])
			}
		}
		if got := transportHold(unread, sizes); got > maxTransportHold {
			t.Fatalf("sizes %v: %d bytes held, above the bound %d", sizes, got, maxTransportHold)
		}
	}
}

// TestReservationOfTheLargestSend: a message of unknown size (an export)
// with the parts that fill the transport reserves exactly MaxSendMemory.
func TestReservationOfTheLargestSend(t *testing.T) {
	out := &outgoing{unread: repeat(3, window), sizes: []int64{-1, window, window}}
	if got := reservation(5<<20, out); got != MaxSendMemory {
		t.Errorf("the largest send reserves %d, MaxSendMemory is %d", got, int64(MaxSendMemory))
	}
	small := &outgoing{unread: []int64{50 << 10}, sizes: []int64{50 << 10}}
	if got, want := reservation(256<<10, small), int64(256<<10+mimemsg.StreamBuffers+50<<10); got != want {
		t.Errorf("a 50 KiB send reserves %d, want %d", got, want)
	}
	if DefaultSendMemory < 8*MaxSendMemory || DefaultSendMemory%(1<<20) != 0 || DefaultSendMemory >= 8*MaxSendMemory+1<<20 {
		t.Errorf("DefaultSendMemory %d is not 8 × %d rounded up to a MiB", DefaultSendMemory, int64(MaxSendMemory))
	}
}

// TestUnreadHoldOfEachSource: each kind of part holds what its answer
// can keep unread.
func TestUnreadHoldOfEachSource(t *testing.T) {
	for _, c := range []struct {
		p    plan
		want int64
	}{
		{plan{action: actAttach, size: 1000}, 1000},
		{plan{action: actAttach, size: 25 << 20}, window},
		{plan{action: actExport, size: -1}, window},
		{plan{action: actData, size: 1000}, 0},
		{plan{action: actClient, size: 1000}, 1000},
		{plan{action: actMail, size: 3000}, encodedLen(3000)},
		{plan{action: actMail, size: 4 << 20}, window},
	} {
		if got := (&item{plan: c.p}).unreadHold(); got != c.want {
			t.Errorf("action %d of %d bytes: %d held, want %d", c.p.action, c.p.size, got, c.want)
		}
	}
}

func TestSendMemoryFor(t *testing.T) {
	for _, c := range []struct {
		n    int
		want int64
	}{{0, 0}, {1, MaxSendMemory}, {16, 16 * MaxSendMemory}, {1 << 62, 1<<63 - 1}} {
		if got := SendMemoryFor(c.n); got != c.want {
			t.Errorf("SendMemoryFor(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

func repeat(n int, v int64) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = v
	}
	return s
}
