package blocked

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// TestInspectorChecksAZipAsItStreams: a zip that can only be read front
// to back is judged by its central directory when the stream ends, also
// when its first entries are far larger than the window kept.
func TestInspectorChecksAZipAsItStreams(t *testing.T) {
	big := make([]byte, 3*StreamZipWindow)
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
	fits := (StreamZipWindow - tailLen - 4096) / (46 + 108)
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
