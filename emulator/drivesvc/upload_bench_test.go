//go:build unix

package drivesvc_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"
)

// BenchmarkUploadThenDelete does what bench/uploadbench does to one
// emulator: a 256 MiB resumable upload through the real drive/v3 client
// in drivemail's 4 MiB chunks, then files.delete, b.N times. It reports
// the process's CPU time per GiB over the first and the last half of
// the run, so work that grows with what was uploaded before shows as a
// ratio above 1. Run it with a count that passes 6 GiB, and a profile:
//
//	go test ./emulator/drivesvc -run '^$' -bench UploadThenDelete -benchtime 32x -cpuprofile cpu.out
func BenchmarkUploadThenDelete(b *testing.B) {
	const size = 256 << 20
	e := newEnv(b)
	c := e.driveClient(e.token(ann))
	cpu := make([]time.Duration, 0, b.N)
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before := cpuTime(b)
		f, err := c.Files.Create(&drive.File{Name: "bench.bin"}).Fields("id,size").
			Media(newRepeating(size), googleapi.ChunkSize(4<<20), googleapi.ContentType("application/octet-stream")).Do()
		if err != nil {
			b.Fatalf("upload %d: %v", i+1, err)
		}
		if f.Size != size {
			b.Fatalf("upload %d stored %d bytes, want %d", i+1, f.Size, size)
		}
		if err := c.Files.Delete(f.Id).Do(); err != nil {
			b.Fatalf("delete %d: %v", i+1, err)
		}
		cpu = append(cpu, cpuTime(b)-before)
	}
	b.StopTimer()
	if len(cpu) < 2 {
		return
	}
	perGiB := func(d []time.Duration) float64 {
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		return sum.Seconds() / (float64(len(d)) * size / (1 << 30))
	}
	const perGiBFiles = (1 << 30) / size
	for g := 0; g+perGiBFiles <= len(cpu); g += perGiBFiles {
		b.Logf("GiB %d: %.2f CPU s", g/perGiBFiles+1, perGiB(cpu[g:g+perGiBFiles]))
	}
	first, last := perGiB(cpu[:len(cpu)/2]), perGiB(cpu[len(cpu)/2:])
	b.ReportMetric(first, "cpu-s/GiB-first-half")
	b.ReportMetric(last, "cpu-s/GiB-second-half")
	b.ReportMetric(last/first, "growth")
}

// cpuTime is the user and system CPU time the test process has used.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// repeating yields n bytes of one random MiB over and over: cheap, so
// the benchmark measures the upload path rather than its source.
type repeating struct {
	r    *bytes.Reader
	left int64
}

var randomMiB = func() []byte {
	b := make([]byte, 1<<20)
	_, _ = rand.NewChaCha8([32]byte{7}).Read(b)
	return b
}()

func newRepeating(n int64) *repeating {
	return &repeating{r: bytes.NewReader(randomMiB), left: n}
}

func (p *repeating) Read(b []byte) (int, error) {
	if p.left == 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	if p.r.Len() == 0 {
		p.r.Reset(randomMiB)
	}
	n, _ := p.r.Read(b)
	p.left -= int64(n)
	return n, nil
}
