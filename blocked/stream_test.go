package blocked

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

type tarEntry struct {
	name string
	size int
	dir  bool
}

// makeTar builds a tar whose files hold size bytes of a repeating pattern.
func makeTar(t testing.TB, entries ...tarEntry) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(e.size), Typeflag: tar.TypeReg}
		if e.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if !e.dir {
			if _, err := io.CopyN(tw, pattern{}, int64(e.size)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pattern is an endless, poorly compressible byte stream.
type pattern struct{}

func (pattern) Read(p []byte) (int, error) {
	x := uint32(2463534242)
	for i := range p {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		p[i] = byte(x)
	}
	return len(p), nil
}

func gzipped(t testing.TB, name string, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Name = name
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// feed writes data to in in chunks and returns how many bytes were
// accepted before Write failed, Write's error, and Close's verdict.
func feed(in *Inspector, data []byte, chunk int) (accepted int, werr, verdict error) {
	for len(data) > 0 {
		n := min(chunk, len(data))
		if _, err := in.Write(data[:n]); err != nil {
			return accepted, err, in.Close()
		}
		accepted += n
		data = data[n:]
	}
	return accepted, nil, in.Close()
}

func TestInspectorFindsBlockedEntries(t *testing.T) {
	const mib = 1 << 20
	bigTar := makeTar(t, tarEntry{name: "data/a.bin", size: 2 * mib}, tarEntry{name: "bin/", dir: true}, tarEntry{name: "bin/run.exe", size: 10}, tarEntry{name: "data/b.bin", size: 2 * mib})
	exeAt := 2*mib + 3*512 // the header of bin/run.exe
	tests := []struct {
		name   string
		file   string
		format Format
		data   []byte
		entry  string
		ext    string
		// the refusal must come within this many bytes of the stream
		within int
	}{
		{"tar", "backup.tar", Tar, bigTar, "bin/run.exe", "exe", exeAt + 64<<10},
		{"tar.gz", "backup.tar.gz", TarGzip, gzipped(t, "backup.tar", bigTar), "backup.tar/bin/run.exe", "exe", exeAt + 256<<10},
		{"tgz without a name", "backup.tgz", TarGzip, gzipped(t, "", bigTar), "bin/run.exe", "exe", exeAt + 256<<10},
		{"gz of a tar, by its header", "backup.gz", Gzip, gzipped(t, "backup.tar", bigTar), "backup.tar/bin/run.exe", "exe", exeAt + 256<<10},
		{"gz of a tar, by its name", "backup.tar.gz", Gzip, gzipped(t, "", bigTar), "bin/run.exe", "exe", exeAt + 256<<10},
		{"gz header names an exe", "setup.gz", Gzip, gzipped(t, "setup.exe", make([]byte, mib)), "setup.exe", "exe", 64 << 10},
		{"tgz header names an exe", "x.tgz", TarGzip, gzipped(t, "x.exe", bigTar), "x.exe", "exe", 64 << 10},
		{"long names (PAX)", "x.tar", Tar, makeTar(t, tarEntry{name: strings.Repeat("d/", 100) + "payload.vbs", size: 1}), strings.Repeat("d/", 100) + "payload.vbs", "vbs", 64 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := NewInspector(tt.file, tt.format, Limits{})
			accepted, werr, verdict := feed(in, tt.data, 32<<10)
			r := finding(t, werr)
			if r.Entry != tt.entry || r.Ext != tt.ext || r.File != tt.file || r.Reason != ReasonExtension {
				t.Errorf("refusal %+v", r)
			}
			if accepted > tt.within {
				t.Errorf("refused after %d bytes; want within %d", accepted, tt.within)
			}
			if !errors.Is(verdict, werr) {
				t.Errorf("Close = %v, want the same refusal", verdict)
			}
		})
	}
}

func TestInspectorAccepts(t *testing.T) {
	clean := makeTar(t, tarEntry{name: "a.txt", size: 100}, tarEntry{name: "d/", dir: true}, tarEntry{name: "d/b.pdf", size: 70000})
	tests := []struct {
		name   string
		format Format
		data   []byte
	}{
		{"tar", Tar, clean},
		{"tar.gz", TarGzip, gzipped(t, "x.tar", clean)},
		{"plain gz", Gzip, gzipped(t, "notes.txt", bytes.Repeat([]byte("text "), 200000))},
		{"gz without a name", Gzip, gzipped(t, "", []byte("hello"))},
		{"empty tar", Tar, makeTar(t)},
		{"not an archive", NotArchive, []byte("anything")},
		{"zip, read from its end as it streams", Zip, makeZip(t, "", zipEntry{name: "a.txt", data: []byte("hello")})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := NewInspector("f", tt.format, Limits{})
			accepted, werr, verdict := feed(in, tt.data, 4096)
			if werr != nil || verdict != nil || accepted != len(tt.data) {
				t.Fatalf("accepted %d of %d; Write %v; Close %v", accepted, len(tt.data), werr, verdict)
			}
		})
	}
}

func TestInspectorUnreadable(t *testing.T) {
	tarData := makeTar(t, tarEntry{name: "a.txt", size: 5000})
	tests := []struct {
		name   string
		format Format
		data   []byte
	}{
		{"truncated tar", Tar, tarData[:3000]},
		{"garbage tar", Tar, bytes.Repeat([]byte("garbage!"), 200)},
		{"garbage tgz", TarGzip, bytes.Repeat([]byte("garbage!"), 200)},
		{"garbage gz", Gzip, []byte("this is not gzip")},
		{"truncated tgz", TarGzip, gzipped(t, "", tarData)[:100]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := NewInspector("bad.tgz", tt.format, Limits{})
			_, werr, verdict := feed(in, tt.data, 1000)
			r := finding(t, verdict)
			if r.Reason != ReasonUnreadable {
				t.Fatalf("verdict %+v (Write %v)", r, werr)
			}
		})
	}
}

func TestInspectorLimits(t *testing.T) {
	// 8 MiB of zeros packs into a few KiB, with an exe behind them.
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	tw.WriteHeader(&tar.Header{Name: "zeros.bin", Size: 8 << 20, Mode: 0o644})
	tw.Write(make([]byte, 8<<20))
	tw.WriteHeader(&tar.Header{Name: "hidden.exe", Size: 1, Mode: 0o644})
	tw.Write([]byte{1})
	tw.Close()
	packed := gzipped(t, "", raw.Bytes())

	in := NewInspector("bomb.tgz", TarGzip, Limits{MaxInflated: 1 << 20})
	_, werr, verdict := feed(in, packed, 4096)
	if r := finding(t, verdict); r.Reason != ReasonTooLarge || !strings.Contains(r.Error(), "inflates past 1048576 bytes") {
		t.Fatalf("verdict %+v (Write %v)", r, werr)
	}
	// With room to inflate, the entry behind the zeros is found.
	in = NewInspector("bomb.tgz", TarGzip, Limits{})
	_, _, verdict = feed(in, packed, 4096)
	if r := finding(t, verdict); r.Entry != "hidden.exe" {
		t.Fatalf("verdict %+v", r)
	}

	var entries []tarEntry
	for i := 0; i < 10; i++ {
		entries = append(entries, tarEntry{name: "f" + string(rune('a'+i)), size: 1})
	}
	data := makeTar(t, entries...)
	if _, _, v := feed(NewInspector("t.tar", Tar, Limits{MaxEntries: 10}), data, 512); v != nil {
		t.Fatalf("10 entries, limit 10: %v", v)
	}
	_, _, verdict = feed(NewInspector("t.tar", Tar, Limits{MaxEntries: 9}), data, 512)
	if r := finding(t, verdict); r.Reason != ReasonTooLarge {
		t.Fatalf("verdict %+v", r)
	}
}

func TestInspectorLifecycle(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := 0; i < 20; i++ {
		in := NewInspector("a.tar", Tar, Limits{})
		in.Write(makeTar(t, tarEntry{name: "a", size: 10})[:520]) // abandoned inside a file
		in.Close()
		if err := in.Close(); err == nil || !strings.Contains(err.Error(), "cannot be read") {
			t.Fatalf("second Close = %v", err)
		}
		if _, err := in.Write([]byte("more")); err == nil {
			t.Fatal("Write after Close succeeded")
		}
	}
	// The parsing goroutines have ended.
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines, %d before", n, before)
	}
}

func TestCheckGzipAt(t *testing.T) {
	tests := []struct {
		name   string
		data   []byte
		reason Reason // 0: accepted
		entry  string
	}{
		{"exe inside", gzipped(t, "Setup.EXE", []byte("MZ")), ReasonExtension, "Setup.EXE"},
		{"harmless", gzipped(t, "notes.txt", []byte("hi")), 0, ""},
		{"no name", gzipped(t, "", []byte("hi")), 0, ""},
		{"a name longer than the first KiB", gzipped(t, strings.Repeat("n", 2000)+".exe", []byte("x")), 0, ""},
		{"not gzip", []byte("PK\x03\x04 this is a zip"), ReasonUnreadable, ""},
		{"too short", []byte{0x1f}, ReasonUnreadable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ra := &countingReaderAt{r: bytes.NewReader(tt.data)}
			err := CheckGzipAt(context.Background(), ra, int64(len(tt.data)), "f.gz")
			if ra.reads != 1 || ra.max > gzipHeadLen {
				t.Errorf("%d reads, largest %d", ra.reads, ra.max)
			}
			if tt.reason == 0 {
				if err != nil {
					t.Fatalf("CheckGzipAt = %v", err)
				}
				return
			}
			if r := finding(t, err); r.Reason != tt.reason || r.Entry != tt.entry {
				t.Fatalf("refusal %+v", r)
			}
		})
	}
	boom := errors.New("range failed")
	ra := &countingReaderAt{r: bytes.NewReader(nil), err: boom}
	if err := CheckGzipAt(context.Background(), ra, 100, "f.gz"); !errors.Is(err, boom) {
		t.Fatalf("reader error: %v", err)
	}
}

// FuzzInspector: any bytes, any format, any chunking: no panic, no hang,
// and a verdict that is nil or a *Finding.
func FuzzInspector(f *testing.F) {
	f.Add(makeTar(f, tarEntry{name: "a.exe", size: 3}), uint8(Tar), uint16(100))
	f.Add(gzipped(f, "x.tar", makeTar(f, tarEntry{name: "a.txt", size: 3})), uint8(TarGzip), uint16(7))
	f.Add(gzipped(f, "y.bat", nil), uint8(Gzip), uint16(1))
	f.Add([]byte{}, uint8(Gzip), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, format uint8, chunk uint16) {
		in := NewInspector("f", Format(format%5), Limits{MaxInflated: 1 << 20, MaxEntries: 100})
		_, _, verdict := feed(in, data, int(chunk)+1)
		if verdict != nil {
			var r *Finding
			if !errors.As(verdict, &r) {
				t.Fatalf("verdict %v is not a refusal", verdict)
			}
		}
	})
}

func TestCheckGzipAtHeaderEdge(t *testing.T) {
	// The header is 10 fixed bytes, a 2-byte extra length, the extra
	// field, then the name and its NUL: with 1006 bytes of extra, the name
	// "a.exe" ends exactly at the first KiB; with one more it does not and
	// is left to the Inspector.
	for _, tt := range []struct {
		extra   int
		refused bool
	}{{gzipHeadLen - 18, true}, {gzipHeadLen - 17, false}} {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Name, zw.Extra = "a.exe", make([]byte, tt.extra)
		zw.Write(bytes.Repeat([]byte("x"), 4096))
		zw.Close()
		err := CheckGzipAt(context.Background(), bytes.NewReader(b.Bytes()), int64(b.Len()), "f.gz")
		if (err != nil) != tt.refused {
			t.Errorf("extra of %d bytes: %v", tt.extra, err)
		}
		in := NewInspector("f.gz", Gzip, Limits{})
		in.Write(b.Bytes())
		if r := finding(t, in.Close()); r.Entry != "a.exe" {
			t.Errorf("the Inspector missed it: %+v", r)
		}
	}
}
