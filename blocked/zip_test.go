package blocked

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// zipEntry describes one entry for makeZip.
type zipEntry struct {
	name  string
	data  []byte
	store bool
	flags uint16
	extra []byte
}

// makeZip builds a zip with archive/zip, optionally with a comment.
func makeZip(t testing.TB, comment string, entries ...zipEntry) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, e := range entries {
		fh := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Flags: e.flags, Extra: e.extra}
		if e.store {
			fh.Method = zip.Store
		}
		fw, err := w.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if comment != "" {
		if err := w.SetComment(comment); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// countingReaderAt records the reads a check makes.
type countingReaderAt struct {
	r     io.ReaderAt
	reads int
	bytes int64
	max   int // the largest single read
	err   error
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	c.bytes += int64(len(p))
	c.max = max(c.max, len(p))
	if c.err != nil {
		return 0, c.err
	}
	return c.r.ReadAt(p, off)
}

func checkBytes(t testing.TB, data []byte, lim Limits) (*countingReaderAt, error) {
	t.Helper()
	ra := &countingReaderAt{r: bytes.NewReader(data)}
	return ra, CheckZip(context.Background(), ra, int64(len(data)), "report.zip", lim)
}

func finding(t testing.TB, err error) *Finding {
	t.Helper()
	var r *Finding
	if !errors.As(err, &r) {
		t.Fatalf("error %v (%T) is not a *Finding", err, err)
	}
	return r
}

func unicodePathExtra(name string) []byte {
	field := append([]byte{1, 0, 0, 0, 0}, name...) // version 1, CRC (not checked)
	b := binary.LittleEndian.AppendUint16(nil, extraUnicodePath)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(field)))
	return append(b, field...)
}

func TestCheckZipRefusals(t *testing.T) {
	tests := []struct {
		name    string
		entries []zipEntry
		reason  Reason
		entry   string
		ext     string
	}{
		{"exe at the top", []zipEntry{{name: "readme.txt", data: []byte("hi")}, {name: "setup.exe", data: []byte("MZ")}}, ReasonExtension, "setup.exe", "exe"},
		{"deep and upper case", []zipEntry{{name: "tools/bin/Setup.EXE"}}, ReasonExtension, "tools/bin/Setup.EXE", "exe"},
		{"trailing dot", []zipEntry{{name: "run.bat."}}, ReasonExtension, "run.bat.", "bat"},
		{"double extension", []zipEntry{{name: "invoice.pdf.js"}}, ReasonExtension, "invoice.pdf.js", "js"},
		{"compressed exe", []zipEntry{{name: "payload.exe.gz"}}, ReasonExtension, "payload.exe.gz", "exe"},
		{"jar inside", []zipEntry{{name: "lib/tool.jar"}}, ReasonExtension, "lib/tool.jar", "jar"},
		{"backslash path", []zipEntry{{name: `win\start.cmd`}}, ReasonExtension, `win\start.cmd`, "cmd"},
		{"unicode path disagrees", []zipEntry{{name: "evil.txt", extra: unicodePathExtra("evil.exe")}}, ReasonExtension, "evil.exe", "exe"},
		{"encrypted entry", []zipEntry{{name: "a.txt", data: []byte("x"), flags: flagEncrypted}}, ReasonEncrypted, "a.txt", ""},
		{"strong encryption", []zipEntry{{name: "a.txt", flags: flagStrongEncrypted}}, ReasonEncrypted, "a.txt", ""},
		{"AES extra", []zipEntry{{name: "a.txt", extra: []byte{0x01, 0x99, 7, 0, 2, 0, 'A', 'E', 3, 8, 0}}}, ReasonEncrypted, "a.txt", ""},
		{"blocked name wins over encryption", []zipEntry{{name: "x.vbs", flags: flagEncrypted}}, ReasonExtension, "x.vbs", "vbs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ra, err := checkBytes(t, makeZip(t, "", tt.entries...), Limits{})
			r := finding(t, err)
			if r.Reason != tt.reason || r.Entry != tt.entry || r.Ext != tt.ext || r.File != "report.zip" {
				t.Errorf("refusal %+v, want reason %v entry %q ext %q", r, tt.reason, tt.entry, tt.ext)
			}
			if ra.reads != 1 {
				t.Errorf("%d reads, want 1 for a small zip", ra.reads)
			}
		})
	}
}

func TestCheckZipAccepts(t *testing.T) {
	tests := []struct {
		name    string
		entries []zipEntry
	}{
		{"documents", []zipEntry{{name: "a.txt", data: []byte("hello")}, {name: "b/c.pdf", data: []byte("%PDF")}, {name: "b/"}}},
		{"exe in a directory name only", []zipEntry{{name: "setup.exe/"}, {name: "setup.exe/readme.txt"}}},
		{"executable-looking stems", []zipEntry{{name: "exe"}, {name: "setup.exe.txt"}, {name: "notes.js.txt"}}},
		{"office files are not opened", []zipEntry{{name: "report.docx", data: []byte("PK")}}},
		{"empty archive", nil},
		{"non-ASCII names", []zipEntry{{name: "Отчёт/данные.csv"}, {name: "日本語.txt"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ra, err := checkBytes(t, makeZip(t, "", tt.entries...), Limits{})
			if err != nil {
				t.Fatalf("CheckZip = %v", err)
			}
			if ra.reads != 1 {
				t.Errorf("%d reads, want 1", ra.reads)
			}
		})
	}
}

func TestCheckZipReadsOnlyTheEnd(t *testing.T) {
	// A 3 MiB file whose directory lies beyond the last 64 KiB.
	var entries []zipEntry
	for i := 0; i < 3000; i++ {
		entries = append(entries, zipEntry{name: fmt.Sprintf("folder-%04d/a-rather-long-file-name-%04d.txt", i, i), data: []byte("x")})
	}
	entries = append(entries, zipEntry{name: "big.bin", data: bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, 3<<20/7), store: true})
	entries = append(entries, zipEntry{name: "last/virus.scr"})
	data := makeZip(t, "", entries...)
	dirSize := int64(binary.LittleEndian.Uint32(data[len(data)-dirEndLen+12:]))

	ra, err := checkBytes(t, data, Limits{})
	if r := finding(t, err); r.Entry != "last/virus.scr" {
		t.Fatalf("refusal %+v", r)
	}
	if ra.reads != 2 {
		t.Errorf("%d reads, want 2 (the tail, then the directory)", ra.reads)
	}
	if limit := int64(tailLen) + dirSize; ra.bytes > limit {
		t.Errorf("read %d bytes of a %d-byte file; want at most the tail and the %d-byte directory (%d)", ra.bytes, len(data), dirSize, limit)
	}
	t.Logf("%d-byte zip, %d-byte directory: %d reads, %d bytes read", len(data), dirSize, ra.reads, ra.bytes)
}

func TestCheckZipMaxComment(t *testing.T) {
	data := makeZip(t, strings.Repeat("c", maxCommentLen), zipEntry{name: "x.exe"})
	ra, err := checkBytes(t, data, Limits{})
	if r := finding(t, err); r.Ext != "exe" {
		t.Fatalf("refusal %+v", r)
	}
	if ra.reads != 1 || ra.max > tailLen {
		t.Errorf("%d reads, largest %d bytes", ra.reads, ra.max)
	}
}

func TestCheckZipEntryLimit(t *testing.T) {
	var entries []zipEntry
	for i := 0; i < 50; i++ {
		entries = append(entries, zipEntry{name: fmt.Sprintf("f%d.txt", i)})
	}
	data := makeZip(t, "", entries...)
	if _, err := checkBytes(t, data, Limits{MaxEntries: 50}); err != nil {
		t.Fatalf("50 entries with a limit of 50: %v", err)
	}
	_, err := checkBytes(t, data, Limits{MaxEntries: 49})
	if r := finding(t, err); r.Reason != ReasonTooLarge || !strings.Contains(r.Detail, "50 entries; the limit is 49") {
		t.Fatalf("refusal %+v", r)
	}
	// A directory that lists more records than its end record says.
	lying := bytes.Clone(data)
	binary.LittleEndian.PutUint16(lying[len(lying)-dirEndLen+8:], 3)
	binary.LittleEndian.PutUint16(lying[len(lying)-dirEndLen+10:], 3)
	_, err = checkBytes(t, lying, Limits{MaxEntries: 49})
	if r := finding(t, err); r.Reason != ReasonTooLarge || !strings.Contains(r.Detail, "more than 49") {
		t.Fatalf("refusal %+v", r)
	}
}

func TestCheckZipDirectoryLimit(t *testing.T) {
	data := makeZip(t, "", zipEntry{name: "a.txt"}, zipEntry{name: "b.txt"})
	dirSize := int64(binary.LittleEndian.Uint32(data[len(data)-dirEndLen+12:]))
	if _, err := checkBytes(t, data, Limits{MaxDirBytes: dirSize}); err != nil {
		t.Fatalf("directory at the limit: %v", err)
	}
	_, err := checkBytes(t, data, Limits{MaxDirBytes: dirSize - 1})
	if r := finding(t, err); r.Reason != ReasonTooLarge {
		t.Fatalf("refusal %+v", r)
	}
}

func TestCheckZipReadLimit(t *testing.T) {
	// A directory of about 2.5 MiB: one tail read, then three 1 MiB reads.
	var entries []zipEntry
	name := strings.Repeat("n", 200)
	for i := 0; i < 10000; i++ {
		entries = append(entries, zipEntry{name: fmt.Sprintf("%s%05d.txt", name, i), store: true})
	}
	data := makeZip(t, "", entries...)
	ra, err := checkBytes(t, data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	need := ra.reads
	if need < 3 || ra.max > dirChunk {
		t.Fatalf("%d reads, largest %d", need, ra.max)
	}
	if _, err := checkBytes(t, data, Limits{MaxReads: need}); err != nil {
		t.Fatalf("with exactly %d reads: %v", need, err)
	}
	_, err = checkBytes(t, data, Limits{MaxReads: need - 1})
	if r := finding(t, err); r.Reason != ReasonTooLarge || !strings.Contains(r.Detail, fmt.Sprintf("more than %d reads", need-1)) {
		t.Fatalf("refusal %+v", r)
	}
}

func TestCheckZip64(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 65 536-entry zip")
	}
	// archive/zip writes zip64 end records from 65 535 entries on.
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for i := 0; i < 65536; i++ {
		if _, err := w.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("%d", i), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Create("zz/last.exe"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	if binary.LittleEndian.Uint16(data[len(data)-dirEndLen+10:]) != 0xFFFF {
		t.Fatal("test zip has no zip64 end record")
	}
	ra, err := checkBytes(t, data, Limits{MaxEntries: 70000})
	if r := finding(t, err); r.Entry != "zz/last.exe" {
		t.Fatalf("refusal %+v", r)
	}
	t.Logf("zip64, 65 537 entries, %d bytes: %d reads, %d bytes read", len(data), ra.reads, ra.bytes)
	_, err = checkBytes(t, data, Limits{})
	if r := finding(t, err); r.Reason != ReasonTooLarge || !strings.Contains(r.Detail, "65537 entries") {
		t.Fatalf("refusal %+v", r)
	}
}

func TestParseExtraZip64(t *testing.T) {
	extra := binary.LittleEndian.AppendUint16(nil, extraZip64)
	extra = binary.LittleEndian.AppendUint16(extra, 24)
	extra = binary.LittleEndian.AppendUint64(extra, 7<<30) // uncompressed
	extra = binary.LittleEndian.AppendUint64(extra, 6<<30) // compressed
	extra = binary.LittleEndian.AppendUint64(extra, 5<<30) // offset
	e := entry{compSize: 0xFFFFFFFF, offset: 0xFFFFFFFF}
	parseExtra(&e, extra, true)
	if e.compSize != 6<<30 || e.offset != 5<<30 {
		t.Fatalf("zip64 extra parsed as %+v", e)
	}
	// A truncated field is ignored, never read past.
	e = entry{compSize: 0xFFFFFFFF}
	parseExtra(&e, extra[:10], true)
	if e.compSize != 0xFFFFFFFF {
		t.Fatalf("truncated extra changed the entry: %+v", e)
	}
}

func TestCheckZipPrependedData(t *testing.T) {
	zipped := makeZip(t, "", zipEntry{name: "ok.txt", data: []byte("x")}, zipEntry{name: "bad.exe", data: []byte("MZ")})
	// A self-extractor: a stub before the archive, offsets not adjusted.
	data := append(bytes.Repeat([]byte("stub"), 5000), zipped...)
	_, err := checkBytes(t, data, Limits{})
	if r := finding(t, err); r.Entry != "bad.exe" {
		t.Fatalf("refusal %+v", r)
	}
	// The same with offsets adjusted, as archive/zip's SetOffset writes it.
	var b bytes.Buffer
	b.Write(bytes.Repeat([]byte("stub"), 5000))
	w := zip.NewWriter(&b)
	w.SetOffset(20000)
	w.Create("bad.exe")
	w.Close()
	_, err = checkBytes(t, b.Bytes(), Limits{})
	if r := finding(t, err); r.Entry != "bad.exe" {
		t.Fatalf("refusal %+v", r)
	}
}

func TestCheckZipUnreadable(t *testing.T) {
	good := makeZip(t, "", zipEntry{name: "a.txt", data: []byte("hello")})
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"short", []byte("PK")},
		{"not a zip", bytes.Repeat([]byte("not a zip at all "), 100)},
		{"truncated end", good[:len(good)-5]},
		{"directory cut", append(bytes.Clone(good[:len(good)-dirEndLen-10]), good[len(good)-dirEndLen:]...)},
		{"directory larger than the file", func() []byte {
			b := bytes.Clone(good)
			binary.LittleEndian.PutUint32(b[len(b)-dirEndLen+12:], 1<<20)
			return b
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := checkBytes(t, tt.data, Limits{})
			if r := finding(t, err); r.Reason != ReasonUnreadable {
				t.Fatalf("refusal %+v", r)
			}
		})
	}
}

func TestCheckZipNested(t *testing.T) {
	bad := makeZip(t, "", zipEntry{name: "inner/setup.exe", data: []byte("MZ")})
	clean := makeZip(t, "", zipEntry{name: "fine.txt", data: []byte("ok")})
	deeper := makeZip(t, "", zipEntry{name: "level2.zip", data: bad, store: true})

	t.Run("stored inner zip is opened", func(t *testing.T) {
		data := makeZip(t, "", zipEntry{name: "docs.txt"}, zipEntry{name: "bundle.zip", data: bad, store: true})
		ra, err := checkBytes(t, data, Limits{})
		r := finding(t, err)
		if r.Entry != "bundle.zip/inner/setup.exe" || r.Ext != "exe" {
			t.Fatalf("refusal %+v", r)
		}
		if !strings.Contains(r.Error(), `"report.zip" contains "bundle.zip/inner/setup.exe"`) {
			t.Errorf("sentence %q", r.Error())
		}
		if ra.reads != 3 {
			t.Errorf("%d reads, want 3 (outer tail, inner local header, inner tail)", ra.reads)
		}
	})
	t.Run("clean stored inner zip", func(t *testing.T) {
		_, err := checkBytes(t, makeZip(t, "", zipEntry{name: "b.zip", data: clean, store: true}), Limits{})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("compressed inner zip is left to Gmail", func(t *testing.T) {
		ra, err := checkBytes(t, makeZip(t, "", zipEntry{name: "b.zip", data: bad}), Limits{})
		if err != nil || ra.reads != 1 {
			t.Fatalf("err %v, %d reads", err, ra.reads)
		}
	})
	t.Run("only one level deep", func(t *testing.T) {
		_, err := checkBytes(t, makeZip(t, "", zipEntry{name: "l1.zip", data: deeper, store: true}), Limits{})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("MaxNested bounds the opened ones", func(t *testing.T) {
		var entries []zipEntry
		for i := 0; i < 3; i++ {
			entries = append(entries, zipEntry{name: fmt.Sprintf("c%d.zip", i), data: clean, store: true})
		}
		entries = append(entries, zipEntry{name: "z.zip", data: bad, store: true})
		data := makeZip(t, "", entries...)
		if _, err := checkBytes(t, data, Limits{MaxNested: 3}); err != nil {
			t.Fatalf("with 3 opened, the 4th is not: %v", err)
		}
		_, err := checkBytes(t, data, Limits{MaxNested: 4})
		if r := finding(t, err); r.Entry != "z.zip/inner/setup.exe" {
			t.Fatalf("refusal %+v", r)
		}
	})
	t.Run("a read budget too small skips nested, never refuses", func(t *testing.T) {
		data := makeZip(t, "", zipEntry{name: "b.zip", data: bad, store: true})
		if _, err := checkBytes(t, data, Limits{MaxReads: 2}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("damaged stored inner zip", func(t *testing.T) {
		_, err := checkBytes(t, makeZip(t, "", zipEntry{name: "b.zip", data: []byte("not a zip, just bytes here"), store: true}), Limits{})
		if r := finding(t, err); r.Reason != ReasonUnreadable || r.Entry != "b.zip" {
			t.Fatalf("refusal %+v", r)
		}
	})
}

func TestCheckZipReaderErrors(t *testing.T) {
	data := makeZip(t, "", zipEntry{name: "a.txt"})
	boom := errors.New("range request failed")
	ra := &countingReaderAt{r: bytes.NewReader(data), err: boom}
	err := CheckZip(context.Background(), ra, int64(len(data)), "r.zip", Limits{})
	var r *Finding
	if !errors.Is(err, boom) || errors.As(err, &r) {
		t.Fatalf("CheckZip = %v; want the reader's error, not a refusal", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ra = &countingReaderAt{r: bytes.NewReader(data)}
	if err := CheckZip(ctx, ra, int64(len(data)), "r.zip", Limits{}); !errors.Is(err, context.Canceled) || ra.reads != 0 {
		t.Fatalf("cancelled: %v after %d reads", err, ra.reads)
	}
}

// budgetedReaderAt is a ReaderAt with a budget of its own, as Range
// requests have: past it, an error wrapping ErrReadBudget.
type budgetedReaderAt struct {
	r    io.ReaderAt
	left int
}

func (b *budgetedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("range requests: %w", ErrReadBudget)
	}
	b.left--
	return b.r.ReadAt(p, off)
}

// TestCheckZipReaderBudget: a ReaderAt that runs out of its own budget is
// treated as CheckZip's budget is: inner archives past it are left to
// Gmail, an outer directory past it is refused as too large to check.
func TestCheckZipReaderBudget(t *testing.T) {
	bad := makeZip(t, "", zipEntry{name: "inner/setup.exe", data: []byte("MZ")})
	data := makeZip(t, "", zipEntry{name: "a.zip", data: bad, store: true}, zipEntry{name: "b.zip", data: bad, store: true})
	check := func(reads int) error {
		ra := &budgetedReaderAt{r: bytes.NewReader(data), left: reads}
		return CheckZip(context.Background(), ra, int64(len(data)), "outer.zip", Limits{})
	}
	if r := finding(t, check(3)); r.Entry != "a.zip/inner/setup.exe" {
		t.Fatalf("with the reads to open a.zip: refusal %+v", r)
	}
	if err := check(2); err != nil {
		t.Fatalf("an inner zip the reader cannot afford: %v, want it left to Gmail", err)
	}
	if r := finding(t, check(0)); r.Reason != ReasonTooLarge || r.Detail != "needs more reading than allowed" {
		t.Fatalf("no read for the outer directory: refusal %+v", r)
	}
}

// FuzzCheckZip feeds arbitrary bytes, and mutations of real zips, to the
// directory reader: it must never panic, must answer nil or a *Finding,
// and must keep within its read budget.
func FuzzCheckZip(f *testing.F) {
	f.Add(makeZip(f, "", zipEntry{name: "a.txt", data: []byte("hi")}))
	f.Add(makeZip(f, "comment", zipEntry{name: "x.exe"}, zipEntry{name: "d/"}))
	f.Add(makeZip(f, "", zipEntry{name: "in.zip", store: true, data: makeZip(f, "", zipEntry{name: "y.bat"})}))
	f.Add(makeZip(f, "", zipEntry{name: "e.txt", flags: flagEncrypted, extra: unicodePathExtra("e.exe")}))
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := Limits{MaxReads: 6, MaxEntries: 1000, MaxDirBytes: 1 << 20}
		ra := &countingReaderAt{r: bytes.NewReader(data)}
		err := CheckZip(context.Background(), ra, int64(len(data)), "f.zip", lim)
		if err != nil {
			var r *Finding
			if !errors.As(err, &r) {
				t.Fatalf("error %v is not a refusal", err)
			}
			if r.Error() == "" {
				t.Fatal("empty sentence")
			}
		}
		if ra.reads > lim.MaxReads || ra.max > max(tailLen, dirChunk) {
			t.Fatalf("%d reads, largest %d", ra.reads, ra.max)
		}
	})
}
