package stream

import (
	"fmt"
	"io"
)

// LimitError is a stream that went on past its limit. It wraps the
// caller's own error, so errors.Is finds that, and errors.As the limit.
type LimitError struct {
	Limit int64
	Err   error
}

// Error is the caller's error's text, which callers have chosen for
// their place; without one, the limit.
func (e *LimitError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("stream: more than %d bytes", e.Limit)
}

func (e *LimitError) Unwrap() error { return e.Err }

// Limited reads at most its limit from a stream. A stream that ends
// within the limit reads to its own end, io.EOF included, even one that
// ends exactly at it; one that goes on past it fails with a *LimitError
// (the byte that showed it is dropped), and every later read fails the
// same way.
type Limited struct {
	r      io.Reader
	limit  int64
	left   int64
	err    error // the caller's error, wrapped on failure
	failed error
}

// Limit returns a Limited reading at most n bytes of r, failing past them
// with a *LimitError wrapping err.
func Limit(r io.Reader, n int64, err error) *Limited {
	return &Limited{r: r, limit: n, left: n, err: err}
}

// Left is how many more bytes the limit lets through.
func (l *Limited) Left() int64 { return max(l.left, 0) }

// Extend lets n more bytes through, from wherever the stream now is.
func (l *Limited) Extend(n int64) {
	l.limit += n
	l.left += n
}

func (l *Limited) Read(p []byte) (int, error) {
	if l.failed != nil {
		return 0, l.failed
	}
	if len(p) == 0 {
		return 0, nil
	}
	if l.left <= 0 {
		// At the limit: one more byte says whether the stream goes on.
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			l.failed = &LimitError{Limit: l.limit, Err: l.err}
			return 0, l.failed
		}
		return 0, err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
