package blocked

import (
	"context"
	"io"
)

// MaxStreamDirBytes is the largest central directory the Inspector reads
// from a zip that streams past (a source with no Range reads: a Gmail
// attachment, a file a chat client hands over by URL). It is the
// directory compose allows a Drive zip, whose directory it reads by
// Range (4 MiB, tens of thousands of entries), so a zip is checkable or
// not whatever its source. The Inspector keeps that much of the end of
// the stream, plus the end record with the longest comment: at most
// MaxStreamDirBytes+64 KiB while one zip streams, and never more than the
// zip itself, as the kept tail grows with the stream.
//
// A directory larger than what is kept cannot be checked, so the zip is
// refused as too large to check (ReasonTooLarge), as CheckZip refuses one
// over its read budget; it is never passed unchecked. A stored inner zip
// whose bytes lie before the kept tail is left to Gmail, as CheckZip
// leaves one past its Range budget.
const MaxStreamDirBytes = 4 << 20

// zipStream checks a zip that can only be read once, front to back: it
// follows its entries as they pass (walkZip), keeps the last bytes of
// the stream, enough for a directory of min(lim.MaxDirBytes,
// MaxStreamDirBytes) and the end record, and when the stream ends reads
// the directory there with CheckZip. Of a zip whose directory was
// checked already, it only follows the entries.
func (in *Inspector) zipStream(r io.Reader) error {
	if in.dirChecked {
		return in.walkZip(r)
	}
	lim := in.lim
	lim.MaxDirBytes = min(lim.MaxDirBytes, MaxStreamDirBytes)
	t := &ringTail{max: int(lim.MaxDirBytes) + tailLen}
	tee := io.TeeReader(r, t)
	if err := in.walkZip(tee); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, tee); err != nil {
		return err
	}
	return CheckZip(context.Background(), t, t.total, in.name, lim)
}

// ringTail keeps the last max bytes written to it and reads them back by
// their offset in the whole stream. Its buffer grows with the stream, so
// a small zip holds no more than itself.
type ringTail struct {
	max   int
	buf   []byte // grows to max, then wraps at start
	start int    // index of the oldest byte once buf is full
	total int64  // bytes written in all
}

func (t *ringTail) Write(p []byte) (int, error) {
	n := len(p)
	t.total += int64(n)
	if len(p) > t.max {
		p = p[len(p)-t.max:]
	}
	for len(p) > 0 {
		if len(t.buf) < t.max {
			k := min(len(p), t.max-len(t.buf))
			t.grow(len(t.buf) + k)
			t.buf = append(t.buf, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(t.buf[t.start:], p)
		p = p[k:]
		t.start = (t.start + k) % t.max
	}
	return n, nil
}

// grow makes room for need bytes, doubling up to max and never past it.
func (t *ringTail) grow(need int) {
	if need <= cap(t.buf) {
		return
	}
	buf := make([]byte, len(t.buf), min(max(2*cap(t.buf), need, 64<<10), t.max))
	copy(buf, t.buf)
	t.buf = buf
}

// ReadAt reads bytes still held; an offset before them ends the read
// with ErrReadBudget, which CheckZip treats as a budget run out.
func (t *ringTail) ReadAt(p []byte, off int64) (int, error) {
	base := t.total - int64(len(t.buf))
	if off < base {
		return 0, ErrReadBudget
	}
	if off >= t.total {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && off+int64(n) < t.total {
		i := (t.start + int(off+int64(n)-base)) % len(t.buf)
		end := len(t.buf)
		if i < t.start {
			end = t.start
		}
		n += copy(p[n:], t.buf[i:end])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
