package mimemsg

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"
)

// node is one entity of a parsed message.
type node struct {
	mediaType string
	params    map[string]string
	disp      string
	filename  string // Content-Disposition filename, decoded
	name      string // Content-Type name, decoded
	contentID string
	body      []byte // decoded
	children  []*node
}

// shape renders the tree: "multipart/mixed[text/plain,application/pdf]".
func (n *node) shape() string {
	if len(n.children) == 0 {
		return n.mediaType
	}
	parts := make([]string, len(n.children))
	for i, c := range n.children {
		parts[i] = c.shape()
	}
	return n.mediaType + "[" + strings.Join(parts, ",") + "]"
}

// leaves lists the non-multipart entities in order.
func (n *node) leaves() []*node {
	if len(n.children) == 0 {
		return []*node{n}
	}
	var out []*node
	for _, c := range n.children {
		out = append(out, c.leaves()...)
	}
	return out
}

var wordDecoder = mime.WordDecoder{}

// parseGo parses a raw message with the standard library only:
// net/mail for the header, mime/multipart (raw parts) for the tree.
func parseGo(t testing.TB, raw []byte) (*mail.Message, *node) {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("net/mail: %v", err)
	}
	n, err := parseEntity(textHeader(msg.Header), msg.Body)
	if err != nil {
		t.Fatalf("parsing the tree: %v", err)
	}
	return msg, n
}

type getter interface{ Get(string) string }

func textHeader(h mail.Header) getter { return h }

func parseEntity(h getter, body io.Reader) (*node, error) {
	ct := h.Get("Content-Type")
	if ct == "" {
		ct = "text/plain"
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return nil, fmt.Errorf("Content-Type %q: %w", ct, err)
	}
	n := &node{mediaType: mt, params: params, contentID: h.Get("Content-Id")}
	n.name = params["name"] // mime.ParseMediaType decodes RFC 2231
	if cd := h.Get("Content-Disposition"); cd != "" {
		d, dp, err := mime.ParseMediaType(cd)
		if err != nil {
			return nil, fmt.Errorf("Content-Disposition %q: %w", cd, err)
		}
		n.disp, n.filename = d, dp["filename"]
	}
	if strings.HasPrefix(mt, "multipart/") {
		if params["boundary"] == "" {
			return nil, fmt.Errorf("%s without a boundary", mt)
		}
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			c, err := parseEntity(p.Header, p)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, c)
		}
		if len(n.children) == 0 {
			return nil, fmt.Errorf("%s with no parts", mt)
		}
		return n, nil
	}
	var r io.Reader = body
	switch cte := strings.ToLower(h.Get("Content-Transfer-Encoding")); cte {
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, body)
	case "quoted-printable":
		r = quotedprintable.NewReader(body)
	case "", "7bit", "8bit":
	default:
		return nil, fmt.Errorf("unexpected transfer encoding %q", cte)
	}
	if n.body, err = io.ReadAll(r); err != nil {
		return nil, fmt.Errorf("%s body: %w", mt, err)
	}
	return n, nil
}

// openString makes a Part's Open from a string, counting opens and closes.
type source struct {
	data   string
	opens  int
	closes int
	err    error // returned by Open
}

func (s *source) open(context.Context) (io.ReadCloser, error) {
	s.opens++
	if s.err != nil {
		return nil, s.err
	}
	return &closeCounter{Reader: strings.NewReader(s.data), n: &s.closes}, nil
}

type closeCounter struct {
	io.Reader
	n *int
}

func (c *closeCounter) Close() error { *c.n++; return nil }

func filePart(name, contentType, data string) Part {
	s := &source{data: data}
	return Part{Name: name, ContentType: contentType, Size: int64(len(data)), Open: s.open}
}

func inlinePart(name, contentType, cid, data string) Part {
	p := filePart(name, contentType, data)
	p.ContentID = cid
	return p
}

// build prepares and streams m, failing the test on any error.
func build(t testing.TB, m Message) ([]byte, Written) {
	t.Helper()
	p, err := Prepare(m)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	var b bytes.Buffer
	w, err := p.Stream(context.Background(), &b)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if w.Bytes != int64(b.Len()) {
		t.Fatalf("Written.Bytes = %d, wrote %d", w.Bytes, b.Len())
	}
	return b.Bytes(), w
}

// base is a valid message to vary.
func base() Message {
	return Message{From: "Sender <sender@example.com>", To: []string{"rcpt@example.org"}, Subject: "Hello"}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
