package mimemsg

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"slices"
	"strings"

	"github.com/emersion/go-message/textproto"
)

// entity writes one MIME entity: the parts of a multipart one, or a
// leaf's content in its transfer encoding. It writes what go-message's
// message.Writer writes, on go-message's textproto layer, with its own
// base64 encoder: go-message wraps base64 lines with two small writes per
// 76 characters, about 70 ms of CPU for a 25 MiB attachment, three times
// what the encoding itself costs (BenchmarkBase64Part).
type entity struct {
	mw *textproto.MultipartWriter // a multipart entity's parts
	w  io.Writer                  // a leaf's content, encoded
	c  io.Closer                  // what Close ends
}

// entityOf reads how an entity whose header is h writes its body, and
// returns the maker of its writer, once the header is out: a multipart
// one writes parts with the boundary its Content-Type names (and carries
// no Content-Transfer-Encoding, as go-message has it), a leaf encodes by
// its Content-Transfer-Encoding.
func entityOf(h *textproto.Header) (func(w io.Writer) *entity, error) {
	mediaType, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err == nil && strings.HasPrefix(mediaType, "multipart/") {
		boundary := params["boundary"]
		if err := textproto.NewMultipartWriter(io.Discard).SetBoundary(boundary); err != nil {
			return nil, fmt.Errorf("mimemsg: multipart boundary: %w", err)
		}
		h.Del("Content-Transfer-Encoding")
		return func(w io.Writer) *entity {
			mw := textproto.NewMultipartWriter(w)
			_ = mw.SetBoundary(boundary) // checked above
			return &entity{mw: mw}
		}, nil
	}
	switch cte := strings.ToLower(h.Get("Content-Transfer-Encoding")); cte {
	case "base64":
		return func(w io.Writer) *entity {
			b := &base64Lines{w: w}
			return &entity{w: b, c: b}
		}, nil
	case "quoted-printable":
		return func(w io.Writer) *entity {
			q := quotedprintable.NewWriter(w)
			return &entity{w: q, c: q}
		}, nil
	default:
		return nil, fmt.Errorf("mimemsg: no writer for the transfer encoding %q", cte)
	}
}

// createTop writes the message's header to w, with MIME-Version when the
// fields lack it, and returns the writer of its body.
func createTop(w io.Writer, h textproto.Header) (*entity, error) {
	if !h.Has("Mime-Version") {
		h.Set("MIME-Version", "1.0")
	}
	mk, err := entityOf(&h)
	if err != nil {
		return nil, err
	}
	if err := textproto.WriteHeader(w, h); err != nil {
		return nil, err
	}
	return mk(w), nil
}

// Write writes a leaf's content.
func (e *entity) Write(p []byte) (int, error) {
	if e.w == nil {
		return 0, errors.New("mimemsg: a multipart entity has parts, not content")
	}
	return e.w.Write(p)
}

// CreatePart starts the next part of a multipart entity, writing its
// delimiter and header.
func (e *entity) CreatePart(h textproto.Header) (*entity, error) {
	if e.mw == nil {
		return nil, errors.New("mimemsg: a part in an entity that is not multipart")
	}
	e.c = e.mw // parts were made: Close writes the closing delimiter
	mk, err := entityOf(&h)
	if err != nil {
		return nil, err
	}
	pw, err := e.mw.CreatePart(h)
	if err != nil {
		return nil, err
	}
	return mk(pw), nil
}

// Close ends the entity: a leaf's last encoded bytes, a multipart one's
// closing delimiter (when it has parts).
func (e *entity) Close() error {
	if e.c == nil {
		return nil
	}
	return e.c.Close()
}

// MIME base64 (RFC 2045 §6.8): lines of 76 characters, each from 57
// bytes, joined by CRLF.
const (
	lineBytes  = 57
	lineChars  = 76
	blockLines = 512 // lines encoded into the output buffer before it is written
)

// base64Lines encodes MIME base64: whole lines are encoded a block at a
// time straight from the caller's bytes into one reused buffer, and only
// the last, short line waits for Close. As go-message's writer, it writes
// no line break after the last line (the multipart delimiter begins with
// one).
type base64Lines struct {
	w       io.Writer
	held    [lineBytes]byte // the start of a line not yet whole
	n       int             // bytes in held
	out     []byte
	started bool // a line was written: the next one begins with CRLF
}

func (b *base64Lines) Write(p []byte) (int, error) {
	total := len(p)
	b.out = b.out[:0]
	if b.n > 0 {
		k := copy(b.held[b.n:], p)
		b.n += k
		p = p[k:]
		if b.n < lineBytes {
			return total, nil
		}
		b.lines(b.held[:])
		b.n = 0
	}
	for len(p) >= lineBytes {
		whole := min(len(p)/lineBytes, blockLines) * lineBytes
		b.lines(p[:whole])
		p = p[whole:]
		if err := b.flush(); err != nil {
			return total - len(p), err
		}
	}
	b.n = copy(b.held[:], p)
	return total, b.flush()
}

// lines appends src, whole lines' bytes, encoded.
func (b *base64Lines) lines(src []byte) {
	o := len(b.out)
	b.out = slices.Grow(b.out, len(src)/lineBytes*(lineChars+2))[:o+len(src)/lineBytes*(lineChars+2)]
	for ; len(src) > 0; src = src[lineBytes:] {
		if b.started {
			b.out[o], b.out[o+1] = '\r', '\n'
			o += 2
		}
		b.started = true
		base64.StdEncoding.Encode(b.out[o:o+lineChars], src[:lineBytes])
		o += lineChars
	}
	b.out = b.out[:o]
}

// last appends the last line: fewer than lineBytes bytes, padded.
func (b *base64Lines) last(src []byte) {
	if b.started {
		b.out = append(b.out, '\r', '\n')
	}
	b.started = true
	at := len(b.out)
	b.out = append(b.out, make([]byte, base64.StdEncoding.EncodedLen(len(src)))...)
	base64.StdEncoding.Encode(b.out[at:], src)
}

func (b *base64Lines) flush() error {
	if len(b.out) == 0 {
		return nil
	}
	_, err := b.w.Write(b.out)
	b.out = b.out[:0]
	return err
}

// Close writes the last, short line.
func (b *base64Lines) Close() error {
	b.out = b.out[:0]
	if b.n > 0 {
		b.last(b.held[:b.n])
		b.n = 0
	}
	return b.flush()
}
