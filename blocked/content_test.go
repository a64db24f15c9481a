package blocked

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pe is a file of size bytes that is a Windows program by the sniffer's
// rule: "MZ", e_lfanew = at, and "PE\0\0" there.
func pe(size int, at uint32) []byte {
	b := make([]byte, size)
	copy(b, "MZ\x90\x00")
	binary.LittleEndian.PutUint32(b[0x3C:], at)
	copy(b[at:], "PE\x00\x00\x64\x86") // and an x86-64 machine
	return b
}

// elfFile is an ELF header of the given class, byte order and type.
func elfFile(class, order byte, typ uint16) []byte {
	b := make([]byte, 64)
	copy(b, "\x7fELF")
	b[4], b[5], b[6] = class, order, 1
	if order == 2 {
		binary.BigEndian.PutUint16(b[16:], typ)
	} else {
		binary.LittleEndian.PutUint16(b[16:], typ)
	}
	return b
}

// machO is a Mach-O header: its magic as the file stores it, and a file type.
func machO(magic uint32, little bool, filetype uint32) []byte {
	b := make([]byte, 32)
	binary.BigEndian.PutUint32(b, magic)
	if little {
		binary.LittleEndian.PutUint32(b[12:], filetype)
	} else {
		binary.BigEndian.PutUint32(b[12:], filetype)
	}
	return b
}

// fatHeader starts a universal binary (or a Java class file) with magic
// and n in the next four bytes.
func fatHeader(magic, n uint32) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b, magic)
	binary.BigEndian.PutUint32(b[4:], n)
	return b
}

func withText(b []byte, text string) []byte { return append(b, text...) }

// TestSniffer: each signature, and what only looks like one.
func TestSniffer(t *testing.T) {
	mzText := []byte("MZ Sales, quarterly report: revenue rose 4%, costs fell 2%, and the outlook for next year is good.\n")
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"PE, header at 0x80", pe(4096, 0x80), programPE},
		{"PE, header far into the file", pe(200_000, 150_000), programPE},
		{"PE, header inside the DOS header", pe(512, 0x10), programPE},
		{"ELF executable, 64-bit little-endian", elfFile(2, 1, 2), programELF},
		{"ELF shared object, 32-bit big-endian", elfFile(1, 2, 3), programELF},
		{"Mach-O 64-bit, as stored on x86 and ARM", machO(0xCFFAEDFE, true, 2), programMachO},
		{"Mach-O 32-bit little-endian library", machO(0xCEFAEDFE, true, 6), programMachO},
		{"Mach-O 32-bit big-endian (PowerPC)", machO(0xFEEDFACE, false, 2), programMachO},
		{"Mach-O 64-bit big-endian bundle", machO(0xFEEDFACF, false, 8), programMachO},
		{"universal binary", fatHeader(0xCAFEBABE, 2), programMachO},
		{"universal binary, 64-bit", fatHeader(0xCAFEBABF, 1), programMachO},
		{"cabinet", withText([]byte("MSCF\x00\x00\x00\x00"), strings.Repeat("x", 100)), typeCab},
		{"shortcut", withText(bytes.Clone(lnkHeader), strings.Repeat("\x00", 60)), typeLnk},

		{"text that starts with MZ", mzText, ""},
		{"MZ alone", []byte("MZ"), ""},
		{"MZ, a DOS program without a PE header", withText([]byte("MZ"), strings.Repeat("\x00", 200)), ""},
		{"MZ pointing past the end of the file", pe(200, 0)[:0x40], ""},
		{"MZ pointing at something else", func() []byte { b := pe(4096, 0x80); copy(b[0x80:], "NE"); return b }(), ""},
		{"MZ pointing into its own e_lfanew", func() []byte { b := pe(512, 0x80); binary.LittleEndian.PutUint32(b[0x3C:], 0x3A); return b }(), ""},
		{"PE cut short of its signature", pe(4096, 0x80)[:0x82], ""},
		{"ELF object file", elfFile(2, 1, 1), ""},
		{"ELF core dump", elfFile(2, 1, 4), ""},
		{"ELF with a bad class", elfFile(3, 1, 2), ""},
		{"ELF magic alone", []byte("\x7fELF"), ""},
		{"Mach-O object file", machO(0xCFFAEDFE, true, 1), ""},
		{"Mach-O magic, byte order swapped for its type", machO(0xCFFAEDFE, false, 2), ""},
		{"Java class file", fatHeader(0xCAFEBABE, 0x00000041), ""},
		{"Java preview class file", fatHeader(0xCAFEBABE, 0xFFFF0041), ""},
		{"MSCF without its zeros", withText([]byte("MSCF\x01\x00\x00\x00"), strings.Repeat("x", 100)), ""},
		{"a PDF", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n" + strings.Repeat(" ", 100)), ""},
		{"empty", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, chunk := range []int{1, 7, 4096, len(tt.data) + 1} {
				s := newSniffer()
				got, at := "", -1
				for off := 0; off < len(tt.data) && got == ""; off += chunk {
					if got = s.write(tt.data[off:min(off+chunk, len(tt.data))]); got != "" {
						at = min(off+chunk, len(tt.data))
					}
				}
				if got == "" {
					got = s.end()
				}
				if got != tt.want {
					t.Fatalf("in pieces of %d: %q, want %q", chunk, got, tt.want)
				}
				// Known before the file's end when the file goes on past its
				// signature, so a stream can fail before its last byte.
				if tt.want != "" && len(tt.data) > 128 && chunk < len(tt.data)/2 && at == len(tt.data) {
					t.Errorf("in pieces of %d: found only at the end", chunk)
				}
			}
		})
	}
}

// TestSnifferOnRealPrograms: the programs and object files Go's own
// debug packages test with. Object files are not programs.
func TestSnifferOnRealPrograms(t *testing.T) {
	root, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("no go command to find Go's debug test data: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(root)), "src", "debug")
	tests := []struct {
		file string
		want string
	}{
		{"pe/testdata/gcc-amd64-mingw-exec", programPE},
		{"pe/testdata/gcc-386-mingw-exec", programPE},
		{"pe/testdata/gcc-amd64-mingw-obj", ""},
		{"elf/testdata/gcc-amd64-linux-exec", programELF},
		{"elf/testdata/gcc-riscv64-linux-exec", programELF},
		{"elf/testdata/go-relocation-test-gcc424-x86-64.obj", ""},
		{"macho/testdata/gcc-amd64-darwin-exec.base64", programMachO},
		{"macho/testdata/fat-gcc-386-amd64-darwin-exec.base64", programMachO},
		{"macho/testdata/clang-amd64-darwin.obj.base64", ""},
	}
	for _, tt := range tests {
		data, err := os.ReadFile(filepath.Join(src, tt.file))
		if err != nil {
			t.Skipf("Go's debug test data is not here: %v", err)
		}
		if strings.HasSuffix(tt.file, ".base64") {
			if data, err = base64.StdEncoding.DecodeString(string(bytes.TrimSpace(data))); err != nil {
				t.Fatal(err)
			}
		}
		got, err := sniffStream(bytes.NewReader(data), make([]byte, 4096))
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.file, got, err, tt.want)
		}
	}
}

// storedZip builds a zip whose entries are stored with their sizes in
// the local headers (no data descriptor), as many tools write them.
func storedZip(t testing.TB, entries ...zipEntry) []byte {
	t.Helper()
	var raw []rawEntry
	for _, e := range entries {
		raw = append(raw, rawEntry{e.name, zip.Store, 0, e.data, len(e.data)})
	}
	return rawZip(t, raw...)
}

// TestInspectorFindsPrograms: a program under another name is refused
// while it streams, before its last byte, as the file itself and as an
// entry of each archive the Inspector reads; what only looks like one
// goes.
func TestInspectorFindsPrograms(t *testing.T) {
	noise := make([]byte, 300<<10)
	pattern{}.Read(noise)
	exe := pe(100_000, 0x80)
	farExe := pe(600_000, 500_000)
	mzText := []byte(strings.Repeat("MZ means Mozambique in ISO 3166. ", 2000))
	tests := []struct {
		name   string
		file   string
		format Format
		opts   []InspectOption
		data   []byte
		entry  string // "" with want: the file itself
		want   string // "" for accepted
	}{
		{"a PE named as a PDF", "invoice.pdf", NotArchive, nil, exe, "", programPE},
		{"a PE whose header is far in", "invoice.pdf", NotArchive, nil, farExe, "", programPE},
		{"an ELF named as a text file", "notes.txt", NotArchive, nil, append(elfFile(2, 1, 3), noise...), "", programELF},
		{"a Mach-O named as an image", "photo.jpg", NotArchive, nil, append(machO(0xCFFAEDFE, true, 2), noise...), "", programMachO},
		{"a self-extracting zip named .zip", "fotos.zip", Zip, nil, append(pe(4096, 0x80), makeZip(t, "", zipEntry{name: "a.txt", data: []byte("x")})...), "", programPE},
		{"a text file that starts with MZ", "mz.txt", NotArchive, nil, mzText, "", ""},

		{"in a tar", "docs.tar", Tar, nil, makeTarOf(t, "a.txt", noise, "invoice.pdf", exe), "invoice.pdf", programPE},
		{"in a tar.gz", "docs.tgz", TarGzip, nil, gzipped(t, "", makeTarOf(t, "a.txt", noise, "invoice.pdf", exe)), "invoice.pdf", programPE},
		{"in a gz", "invoice.pdf.gz", Gzip, nil, gzipped(t, "invoice.pdf", exe), "invoice.pdf", programPE},
		{"in a gz without a name", "invoice.pdf.gz", Gzip, nil, gzipped(t, "", exe), "invoice.pdf", programPE},
		{"in a zip, deflated", "docs.zip", Zip, nil, makeZip(t, "", zipEntry{name: "a.txt", data: noise}, zipEntry{name: "invoice.pdf", data: exe}), "invoice.pdf", programPE},
		{"in a zip, stored", "docs.zip", Zip, nil, storedZip(t, zipEntry{name: "a.jpg", data: noise}, zipEntry{name: "run.pdf", data: farExe}), "run.pdf", programPE},
		{"in a zip whose directory was read", "docs.zip", Zip, []InspectOption{DirectoryChecked()},
			makeZip(t, "", zipEntry{name: "a.txt", data: noise}, zipEntry{name: "tool.dat", data: append(elfFile(2, 1, 2), noise...)}), "tool.dat", programELF},
		{"the first of Go's stored entries", "docs.zip", Zip, nil, makeZip(t, "", zipEntry{name: "x.pdf", data: exe, store: true}), "x.pdf", programPE},

		{"a tar of text that starts with MZ", "docs.tar", Tar, nil, makeTarOf(t, "mz.txt", mzText), "", ""},
		{"a zip of text that starts with MZ", "docs.zip", Zip, nil, makeZip(t, "", zipEntry{name: "mz.txt", data: mzText}), "", ""},
		{"a zip of Java classes", "classes.zip", Zip, nil, makeZip(t, "", zipEntry{name: "A.class", data: fatHeader(0xCAFEBABE, 0x41)}), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, chunk := range []int{7, 32 << 10} {
				in := NewInspector(tt.file, tt.format, Limits{}, tt.opts...)
				accepted, werr, verdict := feed(in, tt.data, chunk)
				if tt.want == "" {
					if werr != nil || verdict != nil {
						t.Fatalf("in pieces of %d: %v, %v; want it accepted", chunk, werr, verdict)
					}
					continue
				}
				r := finding(t, werr)
				if r.Reason != ReasonContent || r.Detail != tt.want || r.Entry != tt.entry || r.File != tt.file {
					t.Fatalf("in pieces of %d: %+v, want %q in %q", chunk, r, tt.want, tt.entry)
				}
				if accepted >= len(tt.data) {
					t.Errorf("in pieces of %d: refused only after the last byte", chunk)
				}
				if !errors.Is(verdict, werr) {
					t.Errorf("Close = %v, want the same refusal", verdict)
				}
			}
		})
	}
}

// makeTarOf builds a tar of name, content pairs.
func makeTarOf(t testing.TB, pairs ...any) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := newTarWriter(&b)
	for i := 0; i < len(pairs); i += 2 {
		tw.add(t, pairs[i].(string), pairs[i+1].([]byte))
	}
	tw.close(t)
	return b.Bytes()
}

// TestFindingOfContent says what was found, and where.
func TestFindingOfContent(t *testing.T) {
	top := (&Finding{File: "invoice.pdf", Reason: ReasonContent, Detail: programPE}).Error()
	if top != `"invoice.pdf" is a Windows program (an .exe or .dll) by its content, whatever its name says; Gmail blocks that type for security.` {
		t.Errorf("the file itself: %q", top)
	}
	inner := (&Finding{File: "docs.zip", Entry: "invoice.pdf", Reason: ReasonContent, Detail: programELF}).Error()
	if inner != `"docs.zip" contains "invoice.pdf", which is a Linux or Unix program (ELF) by its content, whatever its name says; Gmail blocks that type, even inside archives.` {
		t.Errorf("an entry: %q", inner)
	}
}

// tarWriter builds test tars.
type tarWriter struct{ tw *tar.Writer }

func newTarWriter(b *bytes.Buffer) *tarWriter { return &tarWriter{tw: tar.NewWriter(b)} }

func (w *tarWriter) add(t testing.TB, name string, data []byte) {
	t.Helper()
	if err := w.tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.tw.Write(data); err != nil {
		t.Fatal(err)
	}
}

func (w *tarWriter) close(t testing.TB) {
	t.Helper()
	if err := w.tw.Close(); err != nil {
		t.Fatal(err)
	}
}

// rawEntry is one entry for rawZip, written as given.
type rawEntry struct {
	name   string
	method uint16
	flags  uint16
	data   []byte // as stored: deflated for zip.Deflate
	size   int    // uncompressed
}

// rawZip builds a zip of entries whose local headers carry their sizes.
func rawZip(t testing.TB, entries ...rawEntry) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, e := range entries {
		fh := &zip.FileHeader{Name: e.name, Method: e.method, Flags: e.flags,
			CompressedSize64: uint64(len(e.data)), UncompressedSize64: uint64(e.size)}
		if e.method == zip.Store {
			fh.CRC32 = crc32.ChecksumIEEE(e.data)
		}
		fw, err := w.CreateRaw(fh)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func deflated(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	fw, _ := flate.NewWriter(&b, flate.BestSpeed)
	fw.Write(data)
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestZipWalkFollowsTheStream: the walk reads past entries it cannot
// look into when their size is known, stops where it cannot follow, and
// within its limits; where it stops, a program further on is the
// directory's and Gmail's to judge, never a reason to refuse.
func TestZipWalkFollowsTheStream(t *testing.T) {
	exe := pe(10_000, 0x80)
	zeros := make([]byte, 2<<20)
	tests := []struct {
		name string
		data []byte
		lim  Limits
		want bool // the program is found
	}{
		{"deflated, sizes known", rawZip(t, rawEntry{"a.txt", zip.Deflate, 0, deflated(t, zeros), len(zeros)}, rawEntry{"b.pdf", zip.Deflate, 0, deflated(t, exe), len(exe)}), Limits{}, true},
		{"past an encrypted entry", rawZip(t, rawEntry{"a.txt", zip.Store, flagEncrypted, []byte("0123456789ab garbled"), 8}, rawEntry{"b.pdf", zip.Store, 0, exe, len(exe)}), Limits{}, true},
		{"past a method it cannot read", rawZip(t, rawEntry{"a.txt", 12, 0, []byte("BZh91AY&SY"), 100}, rawEntry{"b.pdf", zip.Store, 0, exe, len(exe)}), Limits{}, true},
		{"an encrypted program is not read", rawZip(t, rawEntry{"b.pdf", zip.Store, flagEncrypted, exe, len(exe)}), Limits{}, false},
		{"after the inflation limit", makeZip(t, "", zipEntry{name: "a.txt", data: zeros}, zipEntry{name: "b.pdf", data: exe}), Limits{MaxInflated: 1 << 20}, false},
		{"within the inflation limit", makeZip(t, "", zipEntry{name: "a.txt", data: zeros}, zipEntry{name: "b.pdf", data: exe}), Limits{MaxInflated: 3 << 20}, true},
		{"after the entry limit", makeZip(t, "", zipEntry{name: "a.txt", data: []byte("a")}, zipEntry{name: "b.pdf", data: exe}), Limits{MaxEntries: 1}, false},
		{"within the entry limit", makeZip(t, "", zipEntry{name: "a.txt", data: []byte("a")}, zipEntry{name: "b.pdf", data: exe}), Limits{MaxEntries: 2}, true},
		{"past a stored entry of unknown length", makeZip(t, "", zipEntry{name: "a.txt", data: []byte("hello"), store: true}, zipEntry{name: "b.pdf", data: exe}), Limits{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := NewInspector("docs.zip", Zip, tt.lim, DirectoryChecked())
			_, werr, verdict := feed(in, tt.data, 4096)
			var f *Finding
			found := errors.As(werr, &f) && f.Reason == ReasonContent && f.Entry == "b.pdf"
			if found != tt.want || !tt.want && (werr != nil || verdict != nil) {
				t.Errorf("%v, %v; want the program found: %v", werr, verdict, tt.want)
			}
		})
	}
}
