package mimemsg

import (
	"context"
	"io"
	"runtime"
	"testing"
)

// block is a reader of endless, varied bytes that allocates nothing.
type block struct{ buf []byte }

func newBlock() *block {
	b := &block{buf: make([]byte, 64<<10)}
	x := uint32(2463534242)
	for i := range b.buf {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b.buf[i] = byte(x)
	}
	return b
}

func (b *block) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], b.buf)
	}
	return n, nil
}

func bigPart(size int64) Part {
	return Part{Name: "big.bin", ContentType: "application/octet-stream", Size: size,
		Open: func(context.Context) (io.ReadCloser, error) {
			return io.NopCloser(io.LimitReader(newBlock(), size)), nil
		}}
}

// heapSampler discards what it is given and samples the live heap every
// few MiB, so the peak during the stream is seen, not just the end.
type heapSampler struct {
	n, next int64
	peak    uint64
}

func (h *heapSampler) Write(p []byte) (int, error) {
	h.n += int64(len(p))
	if h.n >= h.next {
		h.next = h.n + 4<<20
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		h.peak = max(h.peak, ms.HeapAlloc)
	}
	return len(p), nil
}

// TestStreamMemory50MiB streams a 50 MiB attachment and checks that the
// heap grows by a few MiB at most: nothing proportional to the file.
func TestStreamMemory50MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 50 MiB")
	}
	const size = 50 << 20
	m := base()
	m.Text = "the file"
	m.Attachments = []Part{bigPart(size)}
	p, err := Prepare(m)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sink := &heapSampler{}
	w, err := p.Stream(context.Background(), sink)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	growth := int64(sink.peak) - int64(before.HeapAlloc)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("50 MiB attachment → %d encoded bytes; live heap peak +%.2f MiB; allocated in total %.2f MiB",
		w.Bytes, float64(growth)/(1<<20), float64(allocated)/(1<<20))
	if w.FileBytes != size || w.Bytes < size*4/3 {
		t.Fatalf("Written %+v", w)
	}
	if growth > 8<<20 {
		t.Errorf("the heap grew by %.1f MiB streaming 50 MiB; want a few MiB", float64(growth)/(1<<20))
	}
	// About 2 MiB normally; the race detector's instrumentation adds
	// more. Half the file would mean a copy of it somewhere.
	if allocated > size/2 {
		t.Errorf("%.1f MiB allocated streaming 50 MiB; something copies the file", float64(allocated)/(1<<20))
	}
}

func BenchmarkStream(b *testing.B) {
	const size = 8 << 20
	b.SetBytes(size)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m := base()
		m.Attachments = []Part{bigPart(size)}
		p, err := Prepare(m)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Stream(context.Background(), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
