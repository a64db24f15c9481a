package mimemsg

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// base64Of is data as base64Lines writes it.
func base64Of(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := &base64Lines{w: &b}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestBase64LenIsTheEncodersLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{}
	for n := 0; n <= 3*lineBytes+5; n++ {
		sizes = append(sizes, n)
	}
	for range 20 {
		sizes = append(sizes, rng.IntN(3<<20))
	}
	for _, n := range sizes {
		data := make([]byte, n)
		if got, want := base64Len(int64(n)), int64(len(base64Of(t, data))); got != want {
			t.Errorf("base64Len(%d) = %d; the encoder writes %d", n, got, want)
		}
	}
}

// shape is one message to size: which bodies and parts it has, and
// their names, sizes and texts.
type shape struct {
	name string
	m    Message
}

// names a part may have: plain, quoted, RFC 2231 (non-ASCII, double
// spaces), long enough to fold.
var partNames = []string{"a.pdf", `say "hi".txt`, "résumé.docx", "two  spaces.png", "日本語のファイル名.xlsx",
	strings.Repeat("long-name-", 20) + ".bin", strings.Repeat("é", 100) + ".zip"}

var partSizes = []int{0, 1, 2, 3, 56, 57, 58, 113, 114, 115, 1000, 4096, 100_000, 1 << 20}

// shapes are the fixed shapes, then random ones from a fixed seed.
func shapes() []shape {
	text := "Hello,\nthe files.\n"
	long := strings.Repeat("word ", 60) + "\n" + strings.Repeat("x", 200) + "\n"
	nonASCII := strings.Repeat("日本語のテキスト。", 40)
	html := "<p>Hello <b>there</b></p>"
	out := []shape{
		{"text only", Message{Text: text}},
		{"no body", Message{}},
		{"html only", Message{HTML: html}},
		{"text and html", Message{Text: text, HTML: html}},
		{"quoted-printable soft breaks", Message{Text: long, HTML: "<p>" + long + "</p>"}},
		{"base64 text", Message{Text: nonASCII, HTML: "<p>" + nonASCII + "</p>"}},
		{"one attachment", Message{Text: text, Attachments: []Part{filePart("a.pdf", "application/pdf", "%PDF-1.4")}}},
		{"inline and attached", Message{Text: text, HTML: `<img src="cid:logo">`,
			Inline: []Part{inlinePart("logo.png", "image/png", "logo", "PNGDATA")}, Attachments: []Part{filePart("b.bin", "", "xyz")}}},
		{"empty file", Message{Text: text, Attachments: []Part{filePart("empty.txt", "text/plain", "")}}},
	}
	rng := rand.New(rand.NewPCG(24, 24))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	for i := range 60 {
		m := Message{}
		switch rng.IntN(4) {
		case 0:
			m.Text = pick([]string{text, long, nonASCII})
		case 1:
			m.HTML = pick([]string{html, "<p>" + long + "</p>", "<p>" + nonASCII + "</p>"})
		case 2:
			m.Text, m.HTML = pick([]string{text, long, nonASCII}), pick([]string{html, "<p>" + nonASCII + "</p>"})
		}
		if m.HTML != "" && rng.IntN(2) == 0 {
			for j := range rng.IntN(3) + 1 {
				data := strings.Repeat("i", partSizes[rng.IntN(len(partSizes))])
				m.Inline = append(m.Inline, inlinePart(pick(partNames), "image/png", fmt.Sprintf("img%d.%d@x", i, j), data))
			}
		}
		for range rng.IntN(5) {
			data := strings.Repeat("a", partSizes[rng.IntN(len(partSizes))]+rng.IntN(3))
			m.Attachments = append(m.Attachments, filePart(pick(partNames), pick([]string{"application/pdf", "", "text/csv; charset=UTF-8", "bogus"}), data))
		}
		out = append(out, shape{fmt.Sprintf("random %d", i), m})
	}
	for i := range out {
		m := &out[i].m
		m.From = pick([]string{"Sender <sender@example.com>", "Ünïcödé Nàme <u@example.com>", "plain@example.com"})
		m.To = []string{"rcpt@example.org"}
		for j := range rng.IntN(30) {
			m.Cc = append(m.Cc, fmt.Sprintf("Person %d <p%d@example.net>", j, j))
		}
		m.Subject = pick([]string{"Hello", "Grüße aus Köln", strings.Repeat("a long subject ", 30), "=?not-a-word?="})
		if rng.IntN(3) == 0 {
			m.InReplyTo = "<abc@mail.example.com>"
		}
	}
	return out
}

var boundary = regexp.MustCompile(`[0-9a-f]{32}`)

// TestEncodedSizeIsWhatStreamWrites: for every shape, the size computed
// before any part is opened is the length of the message Stream writes,
// byte for byte: what the counting pass writes is the streamed message
// with each file's base64 left out (boundaries, random, aside).
func TestEncodedSizeIsWhatStreamWrites(t *testing.T) {
	for _, sh := range shapes() {
		t.Run(sh.name, func(t *testing.T) {
			p, err := Prepare(sh.m)
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			n, ok := p.EncodedSize()
			if !ok {
				t.Fatal("every size is known, yet no size")
			}
			var real bytes.Buffer
			bound, err := p.Bind(opensOf(sh.m))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := bound.Stream(context.Background(), &real); err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if n != int64(real.Len()) {
				t.Errorf("EncodedSize = %d; Stream wrote %d", n, real.Len())
			}
			var skeleton bytes.Buffer
			s := &streamer{ctx: context.Background(), p: p, out: &skeleton, counting: true}
			if err := s.message(); err != nil {
				t.Fatal(err)
			}
			want := real.Bytes()
			for _, part := range append(append([]Part(nil), sh.m.Inline...), sh.m.Attachments...) {
				data := make([]byte, part.Size)
				rc, _ := part.Open(context.Background())
				_, _ = rc.Read(data)
				if enc := base64Of(t, data); len(enc) > 0 {
					want = bytes.Replace(want, enc, nil, 1)
				}
			}
			got := boundary.ReplaceAll(skeleton.Bytes(), []byte("B"))
			if want = boundary.ReplaceAll(want, []byte("B")); !bytes.Equal(got, want) {
				t.Errorf("the counting pass wrote\n%q\nStream wrote, less the files\n%q", got, want)
			}
		})
	}
}

// opensOf are the Open functions of m's parts, in Bind's order.
func opensOf(m Message) []func(context.Context) (io.ReadCloser, error) {
	var opens []func(context.Context) (io.ReadCloser, error)
	for _, p := range append(append([]Part(nil), m.Inline...), m.Attachments...) {
		opens = append(opens, p.Open)
	}
	return opens
}

func TestEncodedSizeNeedsEverySize(t *testing.T) {
	m := base()
	m.Text = "x"
	export := filePart("sheet.csv", "text/csv", "a,b")
	export.Size = -1
	m.Attachments = []Part{filePart("a.pdf", "application/pdf", "%PDF"), export}
	p, err := Prepare(m)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := p.EncodedSize(); ok {
		t.Errorf("a part of unknown size, yet EncodedSize = %d", n)
	}
}
