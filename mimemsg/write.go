package mimemsg

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/emersion/go-message/textproto"
)

// Buffer sizes of Stream: output is batched so that the caller's writer
// (often an io.Pipe) sees large writes, not go-message's line-sized ones.
const (
	outBufSize  = 64 << 10
	copyBufSize = 32 << 10
)

// StreamBuffers is the memory one Stream holds in its own buffers,
// whatever the message's size.
const StreamBuffers = outBufSize + copyBufSize

// SizeError is a part whose stream did not yield the bytes its Size
// promised: a download cut short, or a file that changed.
type SizeError struct {
	Name      string
	Want, Got int64
	Longer    bool // the stream ran past Want (Got is then Want+1 at least)
}

func (e *SizeError) Error() string {
	if e.Longer {
		return fmt.Sprintf("%q: the content is longer than its expected %d bytes", e.Name, e.Want)
	}
	return fmt.Sprintf("%q: the content ended after %d of %d bytes", e.Name, e.Got, e.Want)
}

// Stream writes the message to w in one pass, opening each part when it
// is reached. On error the output is incomplete and must be discarded
// (with io.Pipe: CloseWithError, never Close). Errors: *LimitError,
// *SizeError, errors from Open and the part streams (wrapped, with the
// part's name), ctx's error, and errors from w. A Prepared streams once.
func (p *Prepared) Stream(ctx context.Context, w io.Writer) (Written, error) {
	if p.streamed {
		return Written{}, errors.New("mimemsg: a prepared message can be streamed only once")
	}
	p.streamed = true
	cw := &countingWriter{w: w, max: p.limits.MaxBytes}
	bw := bufio.NewWriterSize(cw, outBufSize)
	s := &streamer{ctx: ctx, p: p, out: bw, buf: make([]byte, copyBufSize)}
	err := s.message()
	if err == nil {
		err = bw.Flush()
	}
	return Written{Bytes: cw.n, FileBytes: s.fileBytes, Parts: s.parts}, err
}

// streamer holds the state of one Stream call.
type streamer struct {
	ctx       context.Context
	p         *Prepared
	out       io.Writer
	buf       []byte
	fileBytes int64
	parts     []PartWritten
	// counting writes no file part's content but counts its base64 in
	// counted (EncodedSize): no part is opened.
	counting bool
	counted  int64
}

// create makes the writer of one entity: the message itself, or a part of
// a multipart entity.
type create func(fields []field) (*entity, error)

func (s *streamer) message() error {
	top := func(fields []field) (*entity, error) {
		return createTop(s.out, header(append(append([]field(nil), s.p.top...), fields...)))
	}
	if len(s.p.attach) == 0 {
		return s.body(top)
	}
	mw, err := top(multipartFields("mixed", ""))
	if err != nil {
		return err
	}
	if err := s.body(partOf(mw)); err != nil {
		return err
	}
	for _, a := range s.p.attach {
		if err := s.filePart(partOf(mw), a, false); err != nil {
			return err
		}
	}
	return mw.Close()
}

// body writes the text and HTML bodies, as one part or as alternatives.
func (s *streamer) body(c create) error {
	switch {
	case s.p.text != "" && s.p.html != "":
		aw, err := c(multipartFields("alternative", ""))
		if err != nil {
			return err
		}
		if err := s.textPart(partOf(aw), "text/plain", s.p.text); err != nil {
			return err
		}
		if err := s.htmlBody(partOf(aw)); err != nil {
			return err
		}
		return aw.Close()
	case s.p.html != "":
		return s.htmlBody(c)
	default:
		return s.textPart(c, "text/plain", s.p.text)
	}
}

// htmlBody writes the HTML, wrapped with its inline parts in
// multipart/related when there are any.
func (s *streamer) htmlBody(c create) error {
	if len(s.p.inline) == 0 {
		return s.textPart(c, "text/html", s.p.html)
	}
	rw, err := c(multipartFields("related", "text/html"))
	if err != nil {
		return err
	}
	if err := s.textPart(partOf(rw), "text/html", s.p.html); err != nil {
		return err
	}
	for _, in := range s.p.inline {
		if err := s.filePart(partOf(rw), in, true); err != nil {
			return err
		}
	}
	return rw.Close()
}

// textPart writes a UTF-8 body: quoted-printable when it is mostly ASCII
// (readable in the raw message), base64 otherwise (smaller).
func (s *streamer) textPart(c create, mediaType, body string) error {
	cte := "quoted-printable"
	if mostlyNonASCII(body) {
		cte = "base64"
		body = strings.ReplaceAll(body, "\n", "\r\n")
	}
	tw, err := c([]field{
		{"Content-Type", mediaType + "; charset=utf-8"},
		{"Content-Transfer-Encoding", cte},
	})
	if err != nil {
		return err
	}
	if _, err := io.WriteString(tw, body); err != nil {
		return err
	}
	return tw.Close()
}

// filePart writes one file, base64, reading it as it goes.
func (s *streamer) filePart(c create, pp preparedPart, inline bool) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	pw, err := c(pp.fields)
	if err != nil {
		return err
	}
	if s.counting {
		s.counted += base64Len(pp.Size)
		return pw.Close()
	}
	rc, err := pp.Open(s.ctx)
	if err != nil {
		return fmt.Errorf("opening %q: %w", pp.Name, err)
	}
	r := &partReader{ctx: s.ctx, r: rc, s: s, name: pp.Name, size: pp.Size}
	n, err := io.CopyBuffer(pw, r, s.buf)
	closeErr := rc.Close()
	s.parts = append(s.parts, PartWritten{Name: pp.Name, ContentID: pp.ContentID, Inline: inline, Bytes: n})
	switch {
	case r.err != nil:
		return r.err // the reader's own verdict, unwrapped
	case err != nil:
		return err
	case pp.Size >= 0 && n != pp.Size:
		return &SizeError{Name: pp.Name, Want: pp.Size, Got: n}
	case closeErr != nil:
		return fmt.Errorf("closing %q: %w", pp.Name, closeErr)
	}
	return pw.Close()
}

// partReader reads a part's stream, counting its bytes against the
// part's Size and the message's MaxFileBytes, and stopping on ctx.
type partReader struct {
	ctx  context.Context
	r    io.Reader
	s    *streamer
	name string
	size int64
	n    int64
	err  error // a limit or size verdict, returned as is by filePart
}

func (r *partReader) Read(b []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := r.r.Read(b)
	r.n += int64(n)
	r.s.fileBytes += int64(n)
	if r.size >= 0 && r.n > r.size {
		r.err = &SizeError{Name: r.name, Want: r.size, Got: r.n, Longer: true}
		return n, r.err
	}
	if max := r.s.p.limits.MaxFileBytes; max > 0 && r.s.fileBytes > max {
		r.err = &LimitError{What: "files", Limit: max}
		return n, r.err
	}
	if err != nil && err != io.EOF {
		return n, fmt.Errorf("reading %q: %w", r.name, err)
	}
	return n, err
}

// countingWriter counts what reaches w and refuses to pass max.
type countingWriter struct {
	w   io.Writer
	n   int64
	max int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	if c.max > 0 && c.n+int64(len(b)) > c.max {
		return 0, &LimitError{What: "message", Limit: c.max}
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// partOf makes the create function of a multipart writer's parts.
func partOf(mw *entity) create {
	return func(fields []field) (*entity, error) {
		return mw.CreatePart(header(fields))
	}
}

// multipartFields is the Content-Type of a multipart entity, with a
// boundary set here so that go-message keeps the field where it is.
func multipartFields(subtype, relatedType string) []field {
	v := "multipart/" + subtype + "; boundary=\"" + newBoundary() + "\""
	if relatedType != "" {
		v += "; type=\"" + relatedType + "\""
	}
	return []field{{"Content-Type", v}}
}

// header builds a go-message header whose fields are written in the
// order given (go-message writes the most recently added first).
func header(fields []field) textproto.Header {
	var h textproto.Header
	for i := len(fields) - 1; i >= 0; i-- {
		h.Add(fields[i].k, fields[i].v)
	}
	return h
}

// newBoundary is 128 random bits in hex.
func newBoundary() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// mostlyNonASCII reports whether more than a third of s's bytes are not
// ASCII, where base64 is smaller than quoted-printable.
func mostlyNonASCII(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			n++
		}
	}
	return n*3 > len(s)
}
