package mimemsg

import (
	"context"
	"io"
)

// EncodedSize is the exact length of the message Stream will write, in
// bytes, when every file part's Size is known; ok is false when one is
// not (an export, whose size nobody knows until it is rendered). The
// header, the bodies and every part's header are written as Stream
// writes them, to a counter (multipart boundaries are always the same
// length); a file part's base64 is counted, not encoded. So a sender
// may announce the length before the first byte (one upload request of
// that Content-Length). A part whose stream yields other than its Size
// fails Stream (*SizeError), so a message Stream completes is exactly
// this long.
func (p *Prepared) EncodedSize() (n int64, ok bool) {
	for _, parts := range [][]preparedPart{p.inline, p.attach} {
		for _, pp := range parts {
			if pp.Size < 0 {
				return 0, false
			}
		}
	}
	cw := &countingWriter{w: io.Discard}
	s := &streamer{ctx: context.Background(), p: p, out: cw, counting: true}
	if err := s.message(); err != nil {
		return 0, false // nothing but a part's own bytes can fail, and none is read
	}
	return cw.n + s.counted, true
}

// base64Len is the length of n bytes in MIME base64 as base64Lines writes
// it: lines of 76 characters (57 bytes), the last one shorter and padded,
// CRLF between lines and none after the last.
func base64Len(n int64) int64 {
	if n <= 0 {
		return 0
	}
	lines := (n + lineBytes - 1) / lineBytes
	return (n+2)/3*4 + 2*(lines-1)
}
