package gmail

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/internal/stream"
)

// users.messages.attachments.get answers the attachment's bytes as
// base64url inside JSON: {"size": N, "data": "…"} (and attachmentId). The
// client library decodes that whole, holding the JSON and the bytes at
// once; for an attachment of 25 MiB that is about 60 MiB per call. So
// OpenAttachment reads the answer itself, as it arrives: a small JSON
// scanner walks the object, and the "data" string flows through a
// base64url decoder to the caller. Memory is a read buffer, whatever the
// attachment's size.

// DefaultIdleTimeout is how long an attachment download may go without a
// byte from Gmail before it fails with ErrStalled.
const DefaultIdleTimeout = 60 * time.Second

// Bounds on the answer's JSON apart from "data".
const (
	maxKeyLen   = 64
	maxOtherLen = 64 << 10 // every other member together
	maxDepthAtt = 16
)

// OpenAttachment streams the bytes of attachment a of message msgID. The
// stream yields exactly a.Size bytes or fails: with ErrCorrupt when
// Gmail's bytes differ from its own description, with ErrStalled when
// Gmail sends nothing for the idle timeout. Bytes Gmail sent inline with
// the message come from memory.
func (c *Client) OpenAttachment(ctx context.Context, msgID string, a Attachment) (io.ReadCloser, error) {
	const op = "messages.attachments.get"
	if a.ID == "" {
		if a.data == nil {
			// Gmail gave neither an id nor the bytes: read the message again
			// with its bodies, which carry them.
			m, err := c.Message(ctx, msgID, true)
			if err != nil {
				return nil, err
			}
			full, ok := m.partByID(a.PartID)
			if !ok || full.data == nil {
				return nil, &Error{Op: "messages.get", Err: fmt.Errorf("part %s has neither data nor an attachment id: %w", a.PartID, ErrCorrupt)}
			}
			a = full
		}
		if int64(len(a.data)) != a.Size {
			return nil, &Error{Op: "messages.get", Err: ErrCorrupt}
		}
		return io.NopCloser(bytes.NewReader(a.data)), nil
	}
	u := apiBase(c.endpoints) + "gmail/v1/users/me/messages/" + url.PathEscape(msgID) + "/attachments/" + url.PathEscape(a.ID) + "?alt=json&prettyPrint=false"
	idle := c.idle
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	// The clock runs only while the reader waits on Gmail: for the
	// answer's headers, then inside each read of its body.
	ctx, watch := stream.Start(ctx, idle)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		watch.Stop()
		return nil, &Error{Op: op, Err: err}
	}
	res, err := c.http.Do(req)
	watch.Pause()
	if err != nil {
		fired := watch.Fired() != nil
		watch.Stop()
		if fired {
			return nil, &Error{Op: op, Err: ErrStalled}
		}
		return nil, c.wrap(op, err)
	}
	if err := googleapi.CheckResponse(res); err != nil {
		res.Body.Close()
		watch.Stop()
		return nil, c.wrap(op, err)
	}
	body := stream.IdleBody(res.Body, watch, nil)
	return &attachmentReader{
		body: body, watch: watch,
		sc: newScanner(body), want: a.Size, size: -1,
	}, nil
}

// partByID finds an attachment by its part id.
func (m Message) partByID(id string) (Attachment, bool) {
	for _, a := range m.Attachments {
		if a.PartID == id {
			return a, true
		}
	}
	return Attachment{}, false
}

// apiBase is the Gmail API's root URL, as the client library's BasePath.
func apiBase(e google.Endpoints) string {
	if e.Emulated() {
		return e.Base + "/"
	}
	return "https://gmail.googleapis.com/"
}

// attachmentReader yields the decoded "data" of an attachments.get answer.
type attachmentReader struct {
	body  io.ReadCloser // read under watch
	watch *stream.Watch
	sc    *scanner
	dec   io.Reader // the base64url decoder over "data", once found
	done  bool      // "data" ended: the rest of the object was checked
	want  int64     // the size the message's metadata gave
	size  int64     // the answer's own "size", -1 until read
	n     int64
	err   error
}

func (r *attachmentReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.read(p)
	r.n += int64(n)
	if err == nil && r.n > r.want {
		err = ErrCorrupt
	}
	if err != nil {
		r.err = r.fail(err)
		return n, r.err
	}
	return n, nil
}

// read is Read before counting: the object up to "data", its bytes, and
// after them the rest of the object.
func (r *attachmentReader) read(p []byte) (int, error) {
	if r.dec == nil {
		found, err := r.sc.untilData(r)
		if err != nil {
			return 0, err
		}
		if !found {
			// Google leaves an empty bytes field out of its JSON.
			if r.want == 0 && r.size <= 0 {
				return 0, io.EOF
			}
			return 0, fmt.Errorf("the answer has no data: %w", ErrCorrupt)
		}
		r.dec = base64.NewDecoder(base64.RawURLEncoding, &dataString{sc: r.sc})
	}
	if !r.done {
		n, err := r.dec.Read(p)
		if err != io.EOF {
			if err != nil && !isTransport(err) {
				err = fmt.Errorf("%w: %v", ErrCorrupt, err)
			}
			return n, err
		}
		r.done = true
		if found, err := r.sc.untilData(r); err != nil || found {
			if err == nil {
				err = fmt.Errorf("the answer has data twice: %w", ErrCorrupt)
			}
			return n, err
		}
		if n > 0 {
			return n, nil
		}
	}
	if r.n != r.want || r.size >= 0 && r.size != r.n {
		return 0, ErrCorrupt
	}
	return 0, io.EOF
}

// fail turns a read failure into the error the caller sees.
func (r *attachmentReader) fail(err error) error {
	const op = "messages.attachments.get"
	switch {
	case err == io.EOF:
		return io.EOF
	case r.watch.Fired() != nil:
		return &Error{Op: op, Err: ErrStalled}
	case errors.Is(err, ErrCorrupt):
		return &Error{Op: op, Err: ErrCorrupt}
	}
	return &Error{Op: op, Err: google.WithoutURL(err)}
}

func (r *attachmentReader) Close() error { return r.body.Close() }

// member takes a member other than "data" while the scanner walks the
// object: only "size" is read.
func (r *attachmentReader) member(key string, raw []byte) error {
	if key != "size" {
		return nil
	}
	s := string(bytes.Trim(raw, `"`))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("the answer's size is %q: %w", s, ErrCorrupt)
	}
	r.size = n
	return nil
}

// isTransport reports whether err came from the connection, not the
// content.
func isTransport(err error) bool {
	var ce base64.CorruptInputError
	return !errors.As(err, &ce) && !errors.Is(err, ErrCorrupt)
}

// scanner walks the top-level JSON object of an attachments.get answer.
type scanner struct {
	br      *bufio.Reader
	started bool
	ended   bool
	other   int // bytes of members other than "data" so far
}

func newScanner(r io.Reader) *scanner { return &scanner{br: bufio.NewReaderSize(r, 32<<10)} }

// untilData reads members until the "data" string begins (true: the
// scanner stands just after its opening quote) or the object ends
// (false). Each other member goes to m.member.
func (s *scanner) untilData(m interface{ member(string, []byte) error }) (bool, error) {
	if s.ended {
		return false, nil
	}
	if !s.started {
		if err := s.expect('{'); err != nil {
			return false, err
		}
		s.started = true
		if c, err := s.peek(); err != nil {
			return false, unexpectedEOF(err)
		} else if c == '}' {
			_, _ = s.br.ReadByte()
			s.ended = true
			return false, s.end()
		}
	} else if end, err := s.afterMember(); end || err != nil {
		return false, err
	}
	for {
		key, err := s.key()
		if err != nil {
			return false, err
		}
		if key == "data" {
			return true, s.expect('"')
		}
		raw, err := s.value()
		if err != nil {
			return false, err
		}
		if err := m.member(key, raw); err != nil {
			return false, err
		}
		if end, err := s.afterMember(); end || err != nil {
			return false, err
		}
	}
}

// afterMember reads what follows a member: a comma before the next, or
// the end of the object (true).
func (s *scanner) afterMember() (bool, error) {
	c, err := s.next()
	if err != nil {
		return false, unexpectedEOF(err)
	}
	switch c {
	case '}':
		s.ended = true
		return true, s.end()
	case ',':
		return false, nil
	}
	return false, fmt.Errorf("unexpected %q after a member: %w", c, ErrCorrupt)
}

// end checks that nothing but white space follows the object.
func (s *scanner) end() error {
	if _, err := s.next(); err != io.EOF {
		if err == nil {
			return fmt.Errorf("text after the answer: %w", ErrCorrupt)
		}
		return err
	}
	return nil
}

// next is the next byte that is not JSON white space.
func (s *scanner) next() (byte, error) {
	for {
		c, err := s.br.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c, nil
	}
}

// peek is next without taking the byte.
func (s *scanner) peek() (byte, error) {
	c, err := s.next()
	if err == nil {
		err = s.br.UnreadByte()
	}
	return c, err
}

func (s *scanner) expect(want byte) error {
	c, err := s.next()
	if err != nil {
		return unexpectedEOF(err)
	}
	if c != want {
		return fmt.Errorf("want %q, got %q: %w", want, c, ErrCorrupt)
	}
	return nil
}

// key reads a member's name and its colon.
func (s *scanner) key() (string, error) {
	if err := s.expect('"'); err != nil {
		return "", err
	}
	raw, err := s.str(maxKeyLen)
	if err != nil {
		return "", err
	}
	if err := s.expect(':'); err != nil {
		return "", err
	}
	return string(raw), nil
}

// str reads the rest of a string (after its opening quote), at most max
// bytes of it; escapes are kept as written, which no key or number here
// needs undone.
func (s *scanner) str(max int) ([]byte, error) {
	var out []byte
	for {
		c, err := s.br.ReadByte()
		if err != nil {
			return nil, unexpectedEOF(err)
		}
		switch c {
		case '"':
			return out, nil
		case '\\':
			out = append(out, c)
			if c, err = s.br.ReadByte(); err != nil {
				return nil, unexpectedEOF(err)
			}
		}
		out = append(out, c)
		if s.other++; len(out) > max || s.other > maxOtherLen {
			return nil, fmt.Errorf("a member too long: %w", ErrCorrupt)
		}
	}
}

// value reads one value other than "data" and returns it as written,
// within maxOtherLen for all of them.
func (s *scanner) value() ([]byte, error) {
	c, err := s.next()
	if err != nil {
		return nil, unexpectedEOF(err)
	}
	if c == '"' {
		raw, err := s.str(maxOtherLen)
		return append(append([]byte{'"'}, raw...), '"'), err
	}
	out := []byte{c}
	depth := 0
	if c == '{' || c == '[' {
		depth = 1
	}
	for {
		if depth == 0 {
			b, err := s.br.Peek(1)
			if err != nil || b[0] == ',' || b[0] == '}' || b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t' {
				return out, unexpectedEOF(err)
			}
		}
		c, err := s.br.ReadByte()
		if err != nil {
			return nil, unexpectedEOF(err)
		}
		out = append(out, c)
		if s.other++; s.other > maxOtherLen {
			return nil, fmt.Errorf("the answer's other members are too long: %w", ErrCorrupt)
		}
		switch c {
		case '"':
			raw, err := s.str(maxOtherLen)
			if err != nil {
				return nil, err
			}
			out = append(append(out, raw...), '"')
		case '{', '[':
			if depth++; depth > maxDepthAtt {
				return nil, fmt.Errorf("nested too deep: %w", ErrCorrupt)
			}
		case '}', ']':
			depth--
			if depth == 0 {
				return out, nil
			}
		}
	}
}

// unexpectedEOF reads the end of the answer inside the object as a cut
// transfer, not as its end; nil stays nil.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// dataString reads the characters of the "data" string as the base64url
// decoder wants them: escapes undone, padding dropped, the standard
// alphabet's + and / taken as - and _; io.EOF at its closing quote.
type dataString struct {
	sc   *scanner
	done bool
}

func (d *dataString) Read(p []byte) (int, error) {
	if d.done {
		return 0, io.EOF
	}
	br := d.sc.br
	n := 0
	for n < len(p) {
		if n > 0 && br.Buffered() == 0 {
			return n, nil // hand over what is here before waiting for more
		}
		buf, err := br.Peek(max(1, min(br.Buffered(), len(p)-n)))
		if len(buf) == 0 {
			return n, unexpectedEOF(err)
		}
		used := 0
	scan:
		for _, c := range buf {
			switch c {
			case '"':
				used++
				d.done = true
				break scan
			case '\\':
				break scan
			case '=':
			case '+':
				p[n] = '-'
				n++
			case '/':
				p[n] = '_'
				n++
			default:
				p[n] = c
				n++
			}
			used++
		}
		_, _ = br.Discard(used) // used ≤ the bytes Peek returned, which Discard cannot fail on
		if d.done {
			if n == 0 {
				return 0, io.EOF
			}
			return n, nil
		}
		if used < len(buf) { // a backslash
			c, err := d.escape()
			if err != nil {
				return n, err
			}
			if c != 0 {
				p[n] = c
				n++
			}
		}
	}
	return n, nil
}

// escape reads one escape sequence (the backslash is next) and returns
// the character it stands for, or 0 for one the decoder skips (padding,
// white space).
func (d *dataString) escape() (byte, error) {
	br := d.sc.br
	if _, err := br.Discard(1); err != nil {
		return 0, unexpectedEOF(err)
	}
	c, err := br.ReadByte()
	if err != nil {
		return 0, unexpectedEOF(err)
	}
	switch c {
	case '/':
		return '_', nil
	case 'n', 'r':
		return 0, nil
	case 'u':
		var hex [4]byte
		if _, err := io.ReadFull(br, hex[:]); err != nil {
			return 0, unexpectedEOF(err)
		}
		v, err := strconv.ParseUint(string(hex[:]), 16, 16)
		if err != nil || v >= 0x80 {
			return 0, fmt.Errorf("an escape that is not base64: %w", ErrCorrupt)
		}
		switch b := byte(v); b {
		case '=', '\n', '\r':
			return 0, nil
		case '+':
			return '-', nil
		case '/':
			return '_', nil
		default:
			return b, nil
		}
	}
	return 0, fmt.Errorf("an escape that is not base64: %w", ErrCorrupt)
}

// WithIdleTimeout sets how long an attachment download may wait for
// Gmail's next byte (default DefaultIdleTimeout); d <= 0 keeps it.
func WithIdleTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.idle = d
		}
	}
}
