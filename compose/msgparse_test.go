package compose_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"os/exec"
	"strings"
	"testing"
)

// mpart is one entity of a parsed message.
type mpart struct {
	Type        string
	Filename    string
	ContentID   string
	Disposition string
	Body        []byte // decoded, leaves only
	Children    []*mpart
}

// goParse parses raw with Go's net/mail and mime/multipart, decoding each
// leaf, and fails the test on anything malformed.
func goParse(t *testing.T, raw []byte) (mail.Header, *mpart) {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("net/mail: %v", err)
	}
	root, err := parseEntity(textprotoHeader(m.Header), m.Body, 0)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return m.Header, root
}

type headerGetter interface{ Get(string) string }

func textprotoHeader(h mail.Header) headerGetter { return h }

func parseEntity(h headerGetter, body io.Reader, depth int) (*mpart, error) {
	ct := h.Get("Content-Type")
	if ct == "" {
		ct = "text/plain"
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return nil, err
	}
	p := &mpart{Type: mt, ContentID: strings.Trim(h.Get("Content-ID"), "<> ")}
	if cd := h.Get("Content-Disposition"); cd != "" {
		d, dp, err := mime.ParseMediaType(cd)
		if err != nil {
			return nil, err
		}
		p.Disposition, p.Filename = d, dp["filename"]
	}
	if strings.HasPrefix(mt, "multipart/") {
		if depth > 5 {
			return nil, io.ErrUnexpectedEOF
		}
		mr := multipart.NewReader(body, params["boundary"])
		for {
			np, err := mr.NextRawPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			c, err := parseEntity(np.Header, np, depth+1)
			if err != nil {
				return nil, err
			}
			p.Children = append(p.Children, c)
		}
		return p, nil
	}
	var r io.Reader = body
	switch strings.ToLower(h.Get("Content-Transfer-Encoding")) {
	case "base64":
		r = base64Reader(body)
	case "quoted-printable":
		r = quotedprintable.NewReader(body)
	}
	p.Body, err = io.ReadAll(r)
	return p, err
}

func (p *mpart) shape() string {
	if len(p.Children) == 0 {
		return p.Type
	}
	var cs []string
	for _, c := range p.Children {
		cs = append(cs, c.shape())
	}
	return p.Type + "(" + strings.Join(cs, ",") + ")"
}

func (p *mpart) leaves() []*mpart {
	if len(p.Children) == 0 {
		return []*mpart{p}
	}
	var out []*mpart
	for _, c := range p.Children {
		out = append(out, c.leaves()...)
	}
	return out
}

// pyMessage is what testdata/parse_mail.py prints.
type pyMessage struct {
	Subject string   `json:"subject"`
	From    string   `json:"from"`
	To      string   `json:"to"`
	Shape   string   `json:"shape"`
	Defects []string `json:"defects"`
	Parts   []struct {
		Type        string  `json:"type"`
		Filename    *string `json:"filename"`
		ContentID   *string `json:"content_id"`
		Disposition *string `json:"disposition"`
		SHA256      string  `json:"sha256"`
		Text        *string `json:"text"`
	} `json:"parts"`
}

// pyParse parses raw with Python 3's email package, or skips the test's
// Python half with a message when python3 is missing.
func pyParse(t *testing.T, raw []byte) (pyMessage, bool) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("python3 not found: skipping the Python email parser check")
		return pyMessage{}, false
	}
	cmd := exec.Command(py, "testdata/parse_mail.py")
	cmd.Stdin = bytes.NewReader(raw)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("python email parser: %v\n%s", err, stderr.String())
	}
	var m pyMessage
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("python output: %v\n%s", err, out.String())
	}
	return m, true
}

func base64Reader(r io.Reader) io.Reader {
	return base64.NewDecoder(base64.StdEncoding, &stripCRLF{r: r})
}

// stripCRLF drops line breaks, which base64 bodies carry every 76 chars.
type stripCRLF struct{ r io.Reader }

func (s *stripCRLF) Read(p []byte) (int, error) {
	for {
		n, err := s.r.Read(p)
		j := 0
		for _, c := range p[:n] {
			if c != '\r' && c != '\n' {
				p[j] = c
				j++
			}
		}
		if j > 0 || err != nil {
			return j, err
		}
	}
}
