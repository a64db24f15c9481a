package blocked

import (
	"bytes"
	crand "crypto/rand"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// streamWindow is what the Inspector keeps of a zip with default Limits.
const streamWindow = MaxStreamDirBytes + tailLen

// TestInspectorChecksAZipAsItStreams: a zip that can only be read front
// to back is judged by its central directory when the stream ends, also
// when its first entries are far larger than the window kept.
func TestInspectorChecksAZipAsItStreams(t *testing.T) {
	big := make([]byte, 3*streamWindow)
	_, _ = io.ReadFull(pattern{}, big)
	tests := []struct {
		name   string
		data   []byte
		reason Reason // 0: accepted
		entry  string
	}{
		{"clean", makeZip(t, "", zipEntry{name: "a.pdf", data: big, store: true}, zipEntry{name: "b.txt", data: []byte("x")}), 0, ""},
		{"a program after a large entry", makeZip(t, "", zipEntry{name: "a.pdf", data: big, store: true}, zipEntry{name: "tools/setup.exe", data: []byte("MZ")}), ReasonExtension, "tools/setup.exe"},
		{"a script", makeZip(t, "", zipEntry{name: "run.js", data: []byte("x")}), ReasonExtension, "run.js"},
		{"password-protected", makeZip(t, "", zipEntry{name: "a.txt", data: []byte("x"), flags: flagEncrypted}), ReasonEncrypted, "a.txt"},
		{"not a zip", []byte("PK but nothing more"), ReasonUnreadable, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := NewInspector("bundle.zip", Zip, Limits{})
			accepted, werr, verdict := feed(in, tc.data, 32<<10)
			if werr != nil || accepted != len(tc.data) {
				t.Fatalf("accepted %d of %d, Write %v: a zip is judged at its end", accepted, len(tc.data), werr)
			}
			if tc.reason == 0 {
				if verdict != nil {
					t.Fatalf("verdict %v, want none", verdict)
				}
				return
			}
			f := finding(t, verdict)
			if f.Reason != tc.reason || f.Entry != tc.entry {
				t.Fatalf("finding %+v, want reason %v entry %q", f, tc.reason, tc.entry)
			}
		})
	}
}

// TestInspectorZipDirectoryPastTheWindow: a directory larger than the
// window cannot be checked, and says so; one that just fits is read.
func TestInspectorZipDirectoryPastTheWindow(t *testing.T) {
	many := func(n int) []byte {
		var entries []zipEntry
		for i := range n {
			entries = append(entries, zipEntry{name: fmt.Sprintf("dir/%0100d.txt", i), store: true})
		}
		return makeZip(t, "", entries...)
	}
	// Each directory entry is 46 bytes and a 108-byte name.
	fits := (streamWindow - tailLen - 4096) / (46 + 108)
	in := NewInspector("many.zip", Zip, Limits{})
	if _, _, verdict := feed(in, many(fits), 64<<10); verdict != nil {
		t.Fatalf("%d entries: %v, want accepted", fits, verdict)
	}
	in = NewInspector("many.zip", Zip, Limits{})
	_, _, verdict := feed(in, many(fits*2), 64<<10)
	if f := finding(t, verdict); f.Reason != ReasonTooLarge {
		t.Fatalf("%d entries: %+v, want too large to check", fits*2, f)
	}
}

// TestRingTail holds the window against a plain copy of the stream.
func TestRingTail(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		window := 1 + r.IntN(300)
		tail := &ringTail{max: window}
		var all []byte
		for range r.IntN(20) {
			p := make([]byte, r.IntN(2*window))
			for i := range p {
				p[i] = byte(r.Uint32())
			}
			all = append(all, p...)
			tail.Write(p)
		}
		base := max(0, len(all)-window)
		for off := base; off < len(all); off++ {
			n := 1 + r.IntN(len(all)-off)
			got := make([]byte, n)
			if k, err := tail.ReadAt(got, int64(off)); k != n || err != nil || !bytes.Equal(got, all[off:off+n]) {
				t.Fatalf("round %d: ReadAt(%d bytes at %d) = %d, %v, bytes equal %v", round, n, off, k, err, bytes.Equal(got, all[off:off+n]))
			}
		}
		if base > 0 {
			if _, err := tail.ReadAt(make([]byte, 1), int64(base-1)); err != ErrReadBudget {
				t.Fatalf("round %d: a read before the window gave %v", round, err)
			}
		}
	}
}

// streamZip writes data through an Inspector in pieces of n bytes and
// returns its verdict.
func streamZip(data []byte, n int, lim Limits) error {
	in := NewInspector("photos.zip", Zip, lim)
	_, werr, verdict := feed(in, data, n)
	if werr != nil {
		return werr
	}
	return verdict
}

// TestInspectorZipInAnyPieces: the verdict does not depend on how the
// stream is cut, down to single bytes; an inner zip stored in the kept
// tail is opened, and a comment in the end record is read past.
func TestInspectorZipInAnyPieces(t *testing.T) {
	noise := make([]byte, 300<<10)
	_, _ = crand.Read(noise)
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

// TestInspectorZipKeepsOnlyTheTail: what is kept is the directory limit
// and the end record, never more than the zip; an inner zip before the
// tail is left to Gmail; a directory past the tail is refused, at and
// just past its edge.
func TestInspectorZipKeepsOnlyTheTail(t *testing.T) {
	noise := make([]byte, 2<<20)
	_, _ = crand.Read(noise)
	bad := makeZip(t, "", zipEntry{name: "inner/setup.exe", data: []byte("MZ")})
	early := makeZip(t, "", zipEntry{name: "bundle.zip", data: bad, store: true}, zipEntry{name: "big.bin", data: noise, store: true})
	lim := Limits{MaxDirBytes: 64 << 10}
	if err := streamZip(early, 32<<10, lim); err != nil {
		t.Errorf("an inner zip before the tail: %v, want it left to Gmail", err)
	}

	// The tail kept: the directory limit and the end record, capped by
	// the stream's own length, and by MaxStreamDirBytes.
	for _, tt := range []struct {
		lim     Limits
		written int
		want    int
	}{
		{lim, len(early), int(lim.MaxDirBytes) + tailLen},
		{Limits{}, 100, 100},
		{Limits{}, 3 * streamWindow, streamWindow},
		{Limits{MaxDirBytes: 2 * MaxStreamDirBytes}, 3 * streamWindow, streamWindow},
	} {
		ring := &ringTail{max: int(min(tt.lim.withDefaults().MaxDirBytes, MaxStreamDirBytes)) + tailLen}
		_, _ = ring.Write(make([]byte, tt.written))
		if len(ring.buf) != tt.want || cap(ring.buf) > ring.max {
			t.Errorf("limit %d, %d bytes written: keeps %d (capacity %d), want %d", tt.lim.MaxDirBytes, tt.written, len(ring.buf), cap(ring.buf), tt.want)
		}
	}

	// A directory larger than the tail is refused as too large to check;
	// one that fits the limit exactly is read.
	entries := func(n int) []zipEntry {
		var out []zipEntry
		for i := range n {
			out = append(out, zipEntry{name: fmt.Sprintf("%040d.txt", i), store: true})
		}
		return out
	}
	one := int64(46 + 44) // a directory entry: 46 bytes and its 44-byte name
	for _, tt := range []struct {
		n      int
		reason Reason // 0: accepted
	}{
		{int(lim.MaxDirBytes / one), 0},
		{int(lim.MaxDirBytes/one) + 1, ReasonTooLarge},
		{2000, ReasonTooLarge},
	} {
		err := streamZip(makeZip(t, "", entries(tt.n)...), 4096, lim)
		if tt.reason == 0 {
			if err != nil {
				t.Errorf("%d entries (%d directory bytes, limit %d): %v, want accepted", tt.n, int64(tt.n)*one, lim.MaxDirBytes, err)
			}
			continue
		}
		if r := finding(t, err); r.Reason != tt.reason {
			t.Errorf("%d entries (%d directory bytes, limit %d): %+v, want too large to check", tt.n, int64(tt.n)*one, lim.MaxDirBytes, r)
		}
	}
}
