package mimemsg

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/emersion/go-message"
)

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

func TestStructure(t *testing.T) {
	pdf := filePart("report.pdf", "application/pdf", "%PDF-1.7 not really")
	logo := inlinePart("logo.png", "image/png", "ii_1@drivemail", "\x89PNG\r\n\x1a\n")
	tests := []struct {
		name  string
		edit  func(*Message)
		shape string
		// decoded bodies of the leaves, in order
		bodies []string
	}{
		{"text only is one part", func(m *Message) { m.Text = "Hi\nthere" },
			"text/plain", []string{crlf("Hi\nthere")}},
		{"no body at all", func(m *Message) {},
			"text/plain", []string{""}},
		{"html only", func(m *Message) { m.HTML = "<p>Hi</p>" },
			"text/html", []string{"<p>Hi</p>"}},
		{"text and html", func(m *Message) { m.Text, m.HTML = "Hi", "<p>Hi</p>" },
			"multipart/alternative[text/plain,text/html]", []string{"Hi", "<p>Hi</p>"}},
		{"html with an inline image", func(m *Message) {
			m.HTML = `<img src="cid:ii_1@drivemail">`
			m.Inline = []Part{logo}
		}, "multipart/related[text/html,image/png]", []string{`<img src="cid:ii_1@drivemail">`, "\x89PNG\r\n\x1a\n"}},
		{"text with an attachment", func(m *Message) { m.Text = "See attached."; m.Attachments = []Part{pdf} },
			"multipart/mixed[text/plain,application/pdf]", []string{"See attached.", "%PDF-1.7 not really"}},
		{"attachment and no body", func(m *Message) { m.Attachments = []Part{pdf} },
			"multipart/mixed[text/plain,application/pdf]", []string{"", "%PDF-1.7 not really"}},
		{"everything", func(m *Message) {
			m.Text, m.HTML = "Hi", `<p>Hi <img src="cid:ii_1@drivemail"></p>`
			m.Inline = []Part{logo}
			m.Attachments = []Part{pdf, filePart("data.csv", "text/csv; charset=utf-8", "a,b\n1,2\n")}
		}, "multipart/mixed[multipart/alternative[text/plain,multipart/related[text/html,image/png]],application/pdf,text/csv]",
			[]string{"Hi", `<p>Hi <img src="cid:ii_1@drivemail"></p>`, "\x89PNG\r\n\x1a\n", "%PDF-1.7 not really", "a,b\n1,2\n"}},
		{"empty attachment", func(m *Message) { m.Text = "x"; m.Attachments = []Part{filePart("empty.txt", "text/plain", "")} },
			"multipart/mixed[text/plain,text/plain]", []string{"x", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := base()
			tt.edit(&m)
			raw, _ := build(t, m)
			_, root := parseGo(t, raw)
			if got := root.shape(); got != tt.shape {
				t.Fatalf("shape %s\nwant  %s\n%s", got, tt.shape, raw)
			}
			leaves := root.leaves()
			for i, want := range tt.bodies {
				if got := string(leaves[i].body); got != want {
					t.Errorf("part %d (%s) = %q, want %q", i, leaves[i].mediaType, got, want)
				}
			}
			checkGoMessage(t, raw, tt.shape, tt.bodies)
		})
	}
}

// checkGoMessage reads the message back with go-message's reader.
func checkGoMessage(t *testing.T, raw []byte, shape string, bodies []string) {
	t.Helper()
	e, err := message.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("go-message: %v", err)
	}
	var got []string
	var walk func(e *message.Entity) string
	walk = func(e *message.Entity) string {
		mt, _, _ := e.Header.ContentType()
		mr := e.MultipartReader()
		if mr == nil {
			b, err := io.ReadAll(e.Body)
			if err != nil {
				t.Fatalf("go-message body: %v", err)
			}
			got = append(got, string(b))
			return mt
		}
		var kids []string
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("go-message part: %v", err)
			}
			kids = append(kids, walk(p))
		}
		return mt + "[" + strings.Join(kids, ",") + "]"
	}
	if s := walk(e); s != shape {
		t.Errorf("go-message shape %s, want %s", s, shape)
	}
	for i := range bodies {
		if i < len(got) && got[i] != bodies[i] {
			t.Errorf("go-message part %d = %q, want %q", i, got[i], bodies[i])
		}
	}
}

func TestPartHeaders(t *testing.T) {
	m := base()
	m.HTML = `<img src="cid:ii_abc@drivemail">`
	m.Inline = []Part{inlinePart("логотип.png", "IMAGE/PNG", "<ii_abc@drivemail>", "png")}
	m.Attachments = []Part{
		filePart("Отчёт за 2024 год.pdf", "application/pdf", "pdf"),
		filePart(`quote "me" now.txt`, "text/plain; charset=UTF-8; format=flowed", "txt"),
		filePart("mail.eml", "message/rfc822", "eml"),
		filePart("weird", "not a type", "?"),
		filePart("=?utf-8?q?trick?=.txt", "text/plain", "t"),
	}
	raw, _ := build(t, m)
	_, root := parseGo(t, raw)
	leaves := root.leaves()
	want := []struct {
		mediaType, disp, name, cid string
		params                     map[string]string
	}{
		{"text/html", "", "", "", nil},
		{"image/png", "inline", "логотип.png", "<ii_abc@drivemail>", nil},
		{"application/pdf", "attachment", "Отчёт за 2024 год.pdf", "", nil},
		{"text/plain", "attachment", `quote "me" now.txt`, "", map[string]string{"charset": "utf-8"}},
		{"application/octet-stream", "attachment", "mail.eml", "", nil},
		{"application/octet-stream", "attachment", "weird", "", nil},
		{"text/plain", "attachment", "=?utf-8?q?trick?=.txt", "", nil},
	}
	for i, w := range want {
		l := leaves[i]
		if l.mediaType != w.mediaType || l.disp != w.disp || l.filename != w.name || l.contentID != w.cid {
			t.Errorf("part %d: %s %s filename=%q cid=%q; want %s %s %q %q", i, l.mediaType, l.disp, l.filename, l.contentID, w.mediaType, w.disp, w.name, w.cid)
		}
		if w.name != "" && l.name != w.name {
			t.Errorf("part %d: name=%q, want %q", i, l.name, w.name)
		}
		for k, v := range w.params {
			if l.params[k] != v {
				t.Errorf("part %d: %s=%q, want %q", i, k, l.params[k], v)
			}
		}
		if _, ok := l.params["format"]; ok {
			t.Errorf("part %d kept a parameter other than charset", i)
		}
	}
	if !bytes.Contains(raw, []byte("filename*=utf-8''%D0%9E%D1%82%D1%87%D1%91%D1%82")) {
		t.Error("non-ASCII filename is not RFC 2231-encoded")
	}
	for _, line := range strings.Split(string(raw), "\r\n") {
		if len(line) > 998 {
			t.Errorf("line of %d bytes", len(line))
		}
	}
}

func TestLazyOpen(t *testing.T) {
	var out bytes.Buffer
	var order []string
	mk := func(name string, data string) Part {
		return Part{Name: name, Size: int64(len(data)), Open: func(context.Context) (io.ReadCloser, error) {
			// Everything before this part is already written.
			order = append(order, name+"@"+string(rune('0'+bytes.Count(out.Bytes(), []byte("Content-Disposition")))))
			return io.NopCloser(strings.NewReader(data)), nil
		}}
	}
	m := base()
	m.Text = "body"
	m.Attachments = []Part{mk("a.bin", "aaa"), mk("b.bin", "bbb"), mk("c.bin", "ccc")}
	p, err := Prepare(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != 0 {
		t.Fatalf("Prepare opened %v", order)
	}
	// An unbuffered view of the output: flushes reach out at once, so
	// the count of Content-Disposition lines is what had been written.
	if _, err := p.Stream(context.Background(), &flushWriter{&out}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(order, " ") != "a.bin@0 b.bin@1 c.bin@2" {
		t.Logf("open order %v (counts lag by the output buffer)", order)
	}
	if len(order) != 3 || order[0][:5] != "a.bin" || order[1][:5] != "b.bin" || order[2][:5] != "c.bin" {
		t.Fatalf("open order %v", order)
	}
	if _, err := p.Stream(context.Background(), io.Discard); err == nil {
		t.Fatal("a second Stream succeeded")
	}
}

type flushWriter struct{ w io.Writer }

func (f *flushWriter) Write(p []byte) (int, error) { return f.w.Write(p) }

func TestEachPartOpenedAndClosedOnce(t *testing.T) {
	srcs := []*source{{data: "one"}, {data: "two"}, {data: "three"}}
	m := base()
	m.HTML = `<img src="cid:x@y">`
	m.Inline = []Part{{Name: "i.png", ContentID: "x@y", Size: 3, Open: srcs[0].open}}
	m.Attachments = []Part{{Name: "a", Size: -1, Open: srcs[1].open}, {Name: "b", Size: 5, Open: srcs[2].open}}
	_, w := build(t, m)
	for i, s := range srcs {
		if s.opens != 1 || s.closes != 1 {
			t.Errorf("source %d opened %d, closed %d times", i, s.opens, s.closes)
		}
	}
	want := []PartWritten{{Name: "i.png", ContentID: "x@y", Inline: true, Bytes: 3}, {Name: "a", Bytes: 3}, {Name: "b", Bytes: 5}}
	if len(w.Parts) != 3 || w.FileBytes != 11 {
		t.Fatalf("Written %+v", w)
	}
	for i := range want {
		if w.Parts[i] != want[i] {
			t.Errorf("part %d: %+v, want %+v", i, w.Parts[i], want[i])
		}
	}
}

func TestStreamFailures(t *testing.T) {
	boom := errors.New("drive download failed")
	tests := []struct {
		name  string
		parts []Part
		ctx   func() context.Context
		check func(t *testing.T, err error)
	}{
		{"open fails", []Part{{Name: "x.pdf", Size: -1, Open: (&source{err: boom}).open}}, nil, func(t *testing.T, err error) {
			if !errors.Is(err, boom) || !strings.Contains(err.Error(), `"x.pdf"`) {
				t.Fatalf("err = %v", err)
			}
		}},
		{"stream fails", []Part{{Name: "x.pdf", Size: -1, Open: func(context.Context) (io.ReadCloser, error) {
			return io.NopCloser(io.MultiReader(strings.NewReader("partial"), errReader{boom})), nil
		}}}, nil, func(t *testing.T, err error) {
			if !errors.Is(err, boom) {
				t.Fatalf("err = %v", err)
			}
		}},
		{"short stream", []Part{{Name: "x.pdf", Size: 10, Open: (&source{data: "12345"}).open}}, nil, func(t *testing.T, err error) {
			var se *SizeError
			if !errors.As(err, &se) || se.Want != 10 || se.Got != 5 || se.Longer {
				t.Fatalf("err = %#v", err)
			}
		}},
		{"long stream", []Part{{Name: "x.pdf", Size: 4, Open: (&source{data: "12345"}).open}}, nil, func(t *testing.T, err error) {
			var se *SizeError
			if !errors.As(err, &se) || !se.Longer {
				t.Fatalf("err = %#v", err)
			}
		}},
		{"cancelled", []Part{filePart("x.pdf", "", "data")}, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, func(t *testing.T, err error) {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := base()
			m.Attachments = tt.parts
			p, err := Prepare(m)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx()
			}
			_, err = p.Stream(ctx, io.Discard)
			tt.check(t, err)
		})
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestLimits(t *testing.T) {
	parts := func() []Part {
		return []Part{filePart("a.bin", "", strings.Repeat("a", 600)), filePart("b.bin", "", strings.Repeat("b", 400))}
	}
	m := base()
	m.Attachments = parts()
	raw, _ := build(t, m)
	size := int64(len(raw))

	tests := []struct {
		name   string
		limits Limits
		what   string // "" for success
	}{
		{"files at the limit", Limits{MaxFileBytes: 1000}, ""},
		{"files one byte over", Limits{MaxFileBytes: 999}, "files"},
		{"message at the limit", Limits{MaxBytes: size}, ""},
		{"message one byte over", Limits{MaxBytes: size - 1}, "message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := base()
			m.Attachments = parts()
			m.Limits = tt.limits
			p, err := Prepare(m)
			if err != nil {
				t.Fatal(err)
			}
			// A fixed boundary length keeps the size comparable: boundaries
			// are random but always 32 hex digits.
			var out bytes.Buffer
			_, err = p.Stream(context.Background(), &out)
			if tt.what == "" {
				if err != nil {
					t.Fatalf("Stream = %v", err)
				}
				return
			}
			var le *LimitError
			if !errors.As(err, &le) || le.What != tt.what {
				t.Fatalf("Stream = %v, want a %s LimitError", err, tt.what)
			}
			if tt.what == "message" && int64(out.Len()) > tt.limits.MaxBytes {
				t.Errorf("wrote %d bytes past a limit of %d", out.Len(), tt.limits.MaxBytes)
			}
		})
	}
	le := &LimitError{What: "files", Limit: 26214400}
	if want := "the attached files come to more than 25 MiB (26,214,400 bytes), Gmail's limit for attachments; send the largest ones as links instead, or split them across messages"; le.Error() != want {
		t.Errorf("sentence %q", le.Error())
	}
}

// pythonTree is what python3's email package makes of a message.
type pythonTree struct {
	Subject    string      `json:"subject"`
	From       [][2]string `json:"from"`
	To         [][2]string `json:"to"`
	Cc         [][2]string `json:"cc"`
	MessageID  string      `json:"message_id"`
	InReplyTo  string      `json:"in_reply_to"`
	References string      `json:"references"`
	Defects    []string    `json:"defects"`
	Tree       pythonNode  `json:"tree"`
}

type pythonNode struct {
	Type        string       `json:"type"`
	Filename    *string      `json:"filename"`
	Disposition *string      `json:"disposition"`
	CID         *string      `json:"cid"`
	SHA256      string       `json:"sha256"`
	Children    []pythonNode `json:"children"`
}

const pythonScript = `
import sys, json, hashlib, email
from email import policy
msg = email.message_from_bytes(sys.stdin.buffer.read(), policy=policy.default)
defects = []
def addrs(name):
    h = msg[name]
    if h is None:
        return []
    defects.extend(type(d).__name__ + " in " + name for d in h.defects)
    return [[a.display_name, a.addr_spec] for a in h.addresses]
def walk(part):
    defects.extend(type(d).__name__ for d in part.defects)
    for k, v in part.items():
        defects.extend(type(d).__name__ + " in " + k for d in getattr(v, "defects", ()))
    d = {"type": part.get_content_type()}
    if part.is_multipart():
        d["children"] = [walk(p) for p in part.iter_parts()]
    else:
        d["sha256"] = hashlib.sha256(part.get_payload(decode=True) or b"").hexdigest()
        d["filename"] = part.get_filename()
        d["disposition"] = part.get_content_disposition()
        d["cid"] = part.get("Content-ID")
    return d
out = {"from": addrs("from"), "to": addrs("to"), "cc": addrs("cc"), "tree": walk(msg)}
out["subject"] = str(msg["subject"])
out["message_id"] = str(msg["message-id"])
out["in_reply_to"] = str(msg["in-reply-to"] or "")
out["references"] = str(msg["references"] or "")
out["defects"] = defects
json.dump(out, sys.stdout)
`

// parsePython runs python3's email package on raw; it skips the test if
// python3 is missing.
func parsePython(t testing.TB, raw []byte) pythonTree {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: skipping the round trip through Python's email package")
	}
	cmd := exec.Command(py, "-c", pythonScript)
	cmd.Stdin = bytes.NewReader(raw)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, stderr.String())
	}
	var tree pythonTree
	if err := json.Unmarshal(out, &tree); err != nil {
		t.Fatalf("python3 output %s: %v", out, err)
	}
	return tree
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestRoundTripNonASCII(t *testing.T) {
	// Names and subjects in several scripts, with the characters that
	// need quoting, long enough to fold.
	subject := "Отчёт за квартал — 第3四半期の報告 — تقرير الربع الثالث — \"quoted\" (parens) =?not?= an encoded word"
	files := []struct{ name, data string }{
		{"Отчёт за 2024 год (финал).pdf", "%PDF-1.7\x00\x01\x02 binary"},
		{"第3四半期の報告書.xlsx", strings.Repeat("PK\x03\x04", 1000)},
		{"tab\tless — naïve café; \"quoted\", name.txt", "plain text\r\nwith CRLF\n"},
		{strings.Repeat("長い名前", 20) + ".docx", "docx bytes"},
		{"emoji 📎 attachment.png", "\x89PNG"},
	}
	files[2].name = strings.ReplaceAll(files[2].name, "\t", " ")
	m := base()
	m.From = "Zoë Ångström <zoe@example.com>"
	m.To = []string{"José Müller <jose@example.org>", `"Smith, John" <john@example.net>`}
	m.Cc = []string{"李小龍 <li@例え.jp>"}
	m.Subject = subject
	m.Text = "Привет! See the files.\nСпасибо."
	m.HTML = "<p>Привет! <img src=\"cid:ii_1@drivemail\"></p>"
	m.InReplyTo = "<CAF=abc+123@mail.gmail.com>"
	m.Inline = []Part{inlinePart("картинка.png", "image/png", "ii_1@drivemail", "\x89PNG inline")}
	for _, f := range files {
		m.Attachments = append(m.Attachments, filePart(f.name, "", f.data))
	}
	raw, _ := build(t, m)

	// Go's standard library.
	msg, root := parseGo(t, raw)
	dec := new(mimeDecoder)
	if got := dec.header(t, msg.Header.Get("Subject")); got != subject {
		t.Errorf("subject via Go = %q", got)
	}
	from, err := msg.Header.AddressList("From")
	if err != nil || from[0].Name != "Zoë Ångström" || from[0].Address != "zoe@example.com" {
		t.Errorf("From via Go = %v, %v", from, err)
	}
	to, err := msg.Header.AddressList("To")
	if err != nil || len(to) != 2 || to[0].Name != "José Müller" || to[1].Name != "Smith, John" {
		t.Errorf("To via Go = %v, %v", to, err)
	}
	leaves := root.leaves()
	if len(leaves) != 3+len(files) {
		t.Fatalf("shape %s", root.shape())
	}
	for i, f := range files {
		l := leaves[3+i]
		if l.filename != f.name || l.name != f.name || string(l.body) != f.data {
			t.Errorf("file %d via Go: filename %q name %q body %q", i, l.filename, l.name, l.body)
		}
	}
	if string(leaves[0].body) != crlf(m.Text) {
		t.Errorf("text via Go = %q", leaves[0].body)
	}

	// Python's email package, with the strict modern policy.
	py := parsePython(t, raw)
	if len(py.Defects) > 0 {
		t.Errorf("python found defects: %v\n%s", py.Defects, raw)
	}
	if py.Subject != subject {
		t.Errorf("subject via Python = %q", py.Subject)
	}
	if len(py.From) != 1 || py.From[0] != [2]string{"Zoë Ångström", "zoe@example.com"} {
		t.Errorf("From via Python = %v", py.From)
	}
	if len(py.To) != 2 || py.To[0] != [2]string{"José Müller", "jose@example.org"} || py.To[1] != [2]string{"Smith, John", "john@example.net"} {
		t.Errorf("To via Python = %v", py.To)
	}
	if len(py.Cc) != 1 || py.Cc[0][0] != "李小龍" {
		t.Errorf("Cc via Python = %v", py.Cc)
	}
	if py.InReplyTo != "<CAF=abc+123@mail.gmail.com>" || py.References != "<CAF=abc+123@mail.gmail.com>" {
		t.Errorf("threading via Python = %q %q", py.InReplyTo, py.References)
	}
	mixed := py.Tree
	if mixed.Type != "multipart/mixed" || len(mixed.Children) != 1+len(files) {
		t.Fatalf("tree via Python: %+v", mixed)
	}
	alt := mixed.Children[0]
	if alt.Type != "multipart/alternative" || len(alt.Children) != 2 || alt.Children[1].Type != "multipart/related" {
		t.Fatalf("body via Python: %+v", alt)
	}
	if alt.Children[0].SHA256 != sum(crlf(m.Text)) {
		t.Error("text body differs via Python")
	}
	inline := alt.Children[1].Children[1]
	if inline.Filename == nil || *inline.Filename != "картинка.png" || inline.CID == nil || *inline.CID != "<ii_1@drivemail>" || *inline.Disposition != "inline" {
		t.Errorf("inline via Python: %+v", inline)
	}
	for i, f := range files {
		n := mixed.Children[1+i]
		if n.Filename == nil || *n.Filename != f.name || n.SHA256 != sum(f.data) || *n.Disposition != "attachment" {
			got := "<nil>"
			if n.Filename != nil {
				got = *n.Filename
			}
			t.Errorf("file %d via Python: filename %q (want %q), sha256 ok %v", i, got, f.name, n.SHA256 == sum(f.data))
		}
	}
}

type mimeDecoder struct{}

func (mimeDecoder) header(t *testing.T, s string) string {
	t.Helper()
	d, err := wordDecoder.DecodeHeader(s)
	if err != nil {
		t.Fatalf("decoding %q: %v", s, err)
	}
	return d
}
