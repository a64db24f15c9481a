package gmailsvc

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"strconv"
	"strings"

	"github.com/emersion/go-message/textproto"
)

// Bounds on the structure the emulator walks in one message.
const (
	maxParts = 1000
	maxDepth = 16
	// maxKeep bounds the text and HTML bodies kept in memory per message
	// for the outbox page and snippets.
	maxKeep = 2 << 20
)

// field is one header field with its name as written.
type field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// part is one MIME part of a stored message, numbered as Gmail numbers
// them: "" for the whole message, "0", "1" for its children, "0.1" below.
type part struct {
	ID          string
	MIMEType    string
	Filename    string
	ContentID   string // without the angle brackets
	Disposition string // "attachment", "inline" or ""
	Headers     []field
	Size        int64 // decoded body bytes; 0 for a multipart
	Parts       []*part
}

// isAttachment reports whether Gmail would list the part as an attachment
// (it has a file name) rather than a body.
func (p *part) isAttachment() bool { return p.Filename != "" }

// find returns the part with id, or nil.
func (p *part) find(id string) *part {
	if p.ID == id {
		return p
	}
	for _, c := range p.Parts {
		if strings.HasPrefix(id, c.ID) {
			if f := c.find(id); f != nil {
				return f
			}
		}
	}
	return nil
}

// leaves lists the parts that carry content, in order.
func (p *part) leaves() []*part {
	if len(p.Parts) == 0 && !strings.HasPrefix(p.MIMEType, "multipart/") {
		return []*part{p}
	}
	var out []*part
	for _, c := range p.Parts {
		out = append(out, c.leaves()...)
	}
	return out
}

// parsed is what the emulator learns from a message once, as it stores it.
type parsed struct {
	headers   []field // the message's header, in order
	headerLen int64   // bytes up to and including the blank line after the header
	crlf      bool    // the header ends its lines with CRLF
	root      *part
	text      string // first text/plain body that is not an attachment
	html      string // first text/html body that is not an attachment
	snippet   string // the start of the text, as Gmail lists it
}

// get returns the first value of the header name (case-insensitive).
func (p *parsed) get(name string) string {
	for _, f := range p.headers {
		if strings.EqualFold(f.Name, name) {
			return f.Value
		}
	}
	return ""
}

// errBadHeader reports a message whose header cannot be read.
var errBadHeader = errors.New("the message header cannot be read")

// parseMessage walks a message's structure and keeps its text bodies.
func parseMessage(r io.Reader) (*parsed, error) {
	cr := &countingReader{r: r}
	br := bufio.NewReader(cr)
	crlf := peekCRLF(br)
	h, err := textproto.ReadHeader(br)
	if err != nil {
		// The reader's detail quotes the message itself: keep it out of the answer.
		return nil, errBadHeader
	}
	p := &parsed{headers: fieldsOf(h), headerLen: cr.n - int64(br.Buffered()), crlf: crlf}
	w := walker{keep: p}
	p.root = newPart("", h)
	if err := w.walk(p.root, h, br, 0); err != nil {
		return nil, err
	}
	p.snippet = makeSnippet(p.text, p.html)
	return p, nil
}

// openPart streams the decoded body of part id of the message in r; the
// reader is valid while r is.
func openPart(r io.Reader, id string) (io.Reader, error) {
	br := bufio.NewReader(r)
	h, err := textproto.ReadHeader(br)
	if err != nil {
		return nil, errBadHeader
	}
	var found io.Reader
	stop := errors.New("found")
	w := walker{visit: func(p *part, body io.Reader) error {
		if p.ID == id {
			found = body
			return stop
		}
		return nil
	}}
	if err := w.walk(newPart("", h), h, br, 0); err != nil && !errors.Is(err, stop) {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("part %q: not found", id)
	}
	return found, nil
}

// readBodies returns the decoded bodies of the parts ids names, at most
// limit bytes of each, in one pass over the message in r. Content that
// does not decode counts as far as it decodes, as in parseMessage.
func readBodies(r io.Reader, ids map[string]bool, limit int64) (map[string][]byte, error) {
	br := bufio.NewReader(r)
	h, err := textproto.ReadHeader(br)
	if err != nil {
		return nil, errBadHeader
	}
	out := map[string][]byte{}
	w := walker{visit: func(p *part, body io.Reader) error {
		if ids[p.ID] {
			out[p.ID], _ = io.ReadAll(io.LimitReader(body, limit))
		}
		return nil
	}}
	if err := w.walk(newPart("", h), h, br, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// walker visits the leaves of a MIME tree.
type walker struct {
	visit func(p *part, body io.Reader) error // may read body or not
	keep  *parsed                             // collects the text bodies
	count int
}

func (w *walker) walk(p *part, h textproto.Header, body io.Reader, depth int) error {
	_, params, _ := mime.ParseMediaType(h.Get("Content-Type"))
	if strings.HasPrefix(p.MIMEType, "multipart/") && params["boundary"] != "" && depth < maxDepth {
		mr := textproto.NewMultipartReader(body, params["boundary"])
		for i := 0; ; i++ {
			np, err := mr.NextPart()
			if err != nil {
				// io.EOF ends the parts; a malformed multipart is read as
				// far as it goes, as mail clients do.
				return nil
			}
			if w.count++; w.count > maxParts {
				return fmt.Errorf("the message has more than %d MIME parts", maxParts)
			}
			id := strconv.Itoa(i)
			if p.ID != "" {
				id = p.ID + "." + id
			}
			child := newPart(id, np.Header)
			p.Parts = append(p.Parts, child)
			if err := w.walk(child, np.Header, np, depth+1); err != nil {
				return err
			}
		}
	}
	cr := &countingReader{r: decodeTransfer(h.Get("Content-Transfer-Encoding"), body)}
	if w.visit != nil {
		if err := w.visit(p, cr); err != nil {
			return err
		}
	}
	if w.keep != nil && !p.isAttachment() && p.Disposition != "attachment" {
		switch {
		case p.MIMEType == "text/plain" && w.keep.text == "":
			w.keep.text = readKeep(cr)
		case p.MIMEType == "text/html" && w.keep.html == "":
			w.keep.html = readKeep(cr)
		}
	}
	// Undecodable content counts as far as it decodes.
	_, _ = io.Copy(io.Discard, cr)
	p.Size = cr.n
	return nil
}

func readKeep(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, maxKeep))
	return string(b)
}

// newPart describes a part from its header.
func newPart(id string, h textproto.Header) *part {
	p := &part{ID: id, MIMEType: "text/plain", Headers: fieldsOf(h)}
	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err == nil {
		p.MIMEType = mt
	}
	disp, dparams, derr := mime.ParseMediaType(h.Get("Content-Disposition"))
	if derr == nil {
		p.Disposition = disp
		p.Filename = decodeWords(dparams["filename"])
	}
	if p.Filename == "" {
		p.Filename = decodeWords(params["name"])
	}
	p.ContentID = strings.Trim(strings.TrimSpace(h.Get("Content-Id")), "<>")
	return p
}

// fieldsOf lists a header's fields in order with their names as written.
func fieldsOf(h textproto.Header) []field {
	var out []field
	fs := h.Fields()
	for fs.Next() {
		name := fs.Key()
		if raw, err := fs.Raw(); err == nil {
			if i := bytes.IndexByte(raw, ':'); i > 0 {
				name = strings.TrimSpace(string(raw[:i]))
			}
		}
		out = append(out, field{Name: name, Value: fs.Value()})
	}
	return out
}

// decodeTransfer undoes a Content-Transfer-Encoding; unknown ones pass through.
func decodeTransfer(enc string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "base64":
		// The decoder skips the CR and LF of base64 folded into lines.
		return base64.NewDecoder(base64.StdEncoding, r)
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	default:
		return r
	}
}

var wordDecoder = mime.WordDecoder{}

// decodeWords decodes RFC 2047 encoded words, keeping the text when it cannot.
func decodeWords(s string) string {
	d, err := wordDecoder.DecodeHeader(s)
	if err != nil {
		return s
	}
	return d
}

// addresses parses an address list header; empty is no addresses.
func addresses(v string) ([]*mail.Address, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	return (&mail.AddressParser{WordDecoder: &wordDecoder}).ParseList(v)
}

func peekCRLF(br *bufio.Reader) bool {
	b, _ := br.Peek(4096)
	i := bytes.IndexByte(b, '\n')
	return i > 0 && b[i-1] == '\r'
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
