package blocked

import (
	"context"
	"io"
)

// StreamZipWindow is how much of a zip the Inspector keeps while it
// streams past: the end of the archive, where its central directory is.
// A directory that does not fit (tens of thousands of entries) is
// refused as too large to check, as CheckZip refuses one over its read
// budget; inner archives whose bytes are no longer held are left to
// Gmail, as CheckZip leaves those past its Range budget.
const StreamZipWindow = 1<<20 + tailLen

// zipStream checks a zip that can only be read once, front to back (a
// file whose host answers no Range requests): it keeps the last
// StreamZipWindow bytes and, when the stream ends, reads the central
// directory there with CheckZip.
func (in *Inspector) zipStream(r io.Reader) error {
	t := &ringTail{max: StreamZipWindow}
	if _, err := io.Copy(t, r); err != nil {
		return err
	}
	lim := in.lim
	lim.MaxDirBytes = min(lim.MaxDirBytes, StreamZipWindow-tailLen)
	return CheckZip(context.Background(), t, t.total, in.name, lim)
}

// ringTail keeps the last max bytes written to it and reads them back by
// their offset in the whole stream.
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
