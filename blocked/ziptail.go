package blocked

import (
	"context"
	"fmt"
	"io"
)

// ZipTail checks a zip archive that streams past, for a source that has
// no Range reads (a Gmail attachment arrives whole, in one answer). A
// zip's directory is at its end, so ZipTail keeps the last bytes of the
// stream, enough for a directory of lim.MaxDirBytes and the end record
// with the longest comment, and checks them at Close as CheckZip would.
// Memory is that tail, at most the archive's size.
//
// What the tail cannot show is treated as CheckZip treats a spent read
// budget: a stored inner zip whose bytes lie before the tail is left to
// Gmail, and a directory larger than the tail is refused as too large to
// check.
type ZipTail struct {
	name string
	lim  Limits
	buf  []byte // a ring of the last len(buf) bytes written
	n    int64  // bytes written in all
}

// NewZipTail starts checking a zip of the given size (the bytes to come;
// a stream that turns out longer keeps only the last of them).
func NewZipTail(name string, size int64, lim Limits) *ZipTail {
	lim = lim.withDefaults()
	keep := min(max(size, 0), lim.MaxDirBytes+tailLen)
	return &ZipTail{name: name, lim: lim, buf: make([]byte, keep)}
}

// Write keeps the end of what has passed; it never fails.
func (z *ZipTail) Write(p []byte) (int, error) {
	k := int64(len(z.buf))
	if k == 0 {
		z.n += int64(len(p))
		return len(p), nil
	}
	q := p
	if int64(len(q)) > k {
		q = q[int64(len(q))-k:]
	}
	start := (z.n + int64(len(p)-len(q))) % k
	c := copy(z.buf[start:], q)
	copy(z.buf, q[c:])
	z.n += int64(len(p))
	return len(p), nil
}

// Close checks the archive whose bytes have passed and returns the
// verdict: nil, a *Finding, or an error of the check itself.
func (z *ZipTail) Close() error {
	k := int64(len(z.buf))
	kept := min(z.n, k)
	tail := make([]byte, kept)
	if kept > 0 {
		start := (z.n - kept) % k
		c := copy(tail, z.buf[start:])
		copy(tail[c:], z.buf[:kept-int64(c)])
	}
	z.buf = nil
	return CheckZip(context.Background(), tailReader{tail: tail, from: z.n - kept}, z.n, z.name, z.lim)
}

// tailReader reads the kept tail at its offsets in the archive; anything
// before it is past the budget.
type tailReader struct {
	tail []byte
	from int64
}

var errBeforeTail = fmt.Errorf("bytes before the kept tail of a streamed zip: %w", ErrReadBudget)

func (t tailReader) ReadAt(p []byte, off int64) (int, error) {
	if off < t.from {
		return 0, errBeforeTail
	}
	i := off - t.from
	if i >= int64(len(t.tail)) {
		return 0, io.EOF
	}
	n := copy(p, t.tail[i:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
