package blocked

import (
	"bytes"
	"crypto/rand"
	"testing"
)

// streamZip writes data through a ZipTail in pieces of n bytes.
func streamZip(data []byte, n int, lim Limits) error {
	z := NewZipTail("photos.zip", int64(len(data)), lim)
	for rest := data; len(rest) > 0; {
		k := min(n, len(rest))
		z.Write(rest[:k])
		rest = rest[k:]
	}
	return z.Close()
}

func TestZipTailChecksTheDirectoryAsItStreams(t *testing.T) {
	noise := make([]byte, 300<<10)
	rand.Read(noise)
	bad := makeZip(t, "", zipEntry{name: "inner/setup.exe", data: []byte("MZ")})
	tests := []struct {
		name  string
		data  []byte
		entry string // "" for accepted
	}{
		{"clean", makeZip(t, "", zipEntry{name: "a.jpg", data: noise, store: true}, zipEntry{name: "b.txt", data: []byte("x")}), ""},
		{"blocked entry after large data", makeZip(t, "", zipEntry{name: "a.jpg", data: noise, store: true}, zipEntry{name: "run.bat", data: []byte("x")}), "run.bat"},
		{"stored inner zip in the tail", makeZip(t, "", zipEntry{name: "bundle.zip", data: bad, store: true}), "bundle.zip/inner/setup.exe"},
		{"comment", makeZip(t, "a comment", zipEntry{name: "tool.exe"}), "tool.exe"},
	}
	for _, tt := range tests {
		for _, piece := range []int{1, 7, 64 << 10, len(tt.data)} {
			err := streamZip(tt.data, piece, Limits{})
			if tt.entry == "" {
				if err != nil {
					t.Errorf("%s in pieces of %d: %v", tt.name, piece, err)
				}
				continue
			}
			if r := finding(t, err); r.Entry != tt.entry {
				t.Errorf("%s in pieces of %d: finding %+v, want %s", tt.name, piece, r, tt.entry)
			}
		}
	}
}

func TestZipTailKeepsOnlyTheTail(t *testing.T) {
	noise := make([]byte, 2<<20)
	rand.Read(noise)
	bad := makeZip(t, "", zipEntry{name: "inner/setup.exe", data: []byte("MZ")})
	// A stored inner zip before the kept tail is left to Gmail, as a
	// spent read budget leaves it.
	early := makeZip(t, "", zipEntry{name: "bundle.zip", data: bad, store: true}, zipEntry{name: "big.bin", data: noise, store: true})
	lim := Limits{MaxDirBytes: 64 << 10}
	z := NewZipTail("photos.zip", int64(len(early)), lim)
	if got, want := len(z.buf), int(lim.MaxDirBytes+tailLen); got != want {
		t.Errorf("keeps %d bytes, want %d (the directory limit and the end record)", got, want)
	}
	if err := streamZip(early, 32<<10, lim); err != nil {
		t.Errorf("an inner zip before the tail: %v, want it left to Gmail", err)
	}
	// A directory larger than the tail is refused as too large to check.
	var entries []zipEntry
	for i := 0; i < 2000; i++ {
		entries = append(entries, zipEntry{name: string(bytes.Repeat([]byte{'a' + byte(i%26)}, 40)) + ".txt", store: true})
	}
	big := makeZip(t, "", entries...)
	if r := finding(t, streamZip(big, 4096, Limits{MaxDirBytes: 16 << 10})); r.Reason != ReasonTooLarge {
		t.Errorf("a directory past the tail: %+v, want too large", r)
	}
	// A small archive keeps no more than itself.
	if z := NewZipTail("s.zip", 100, Limits{}); len(z.buf) != 100 {
		t.Errorf("a 100-byte zip keeps %d bytes", len(z.buf))
	}
}
