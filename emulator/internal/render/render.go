// Package render writes the export documents of the emulated Drive: PDF,
// the OOXML and OpenDocument zip containers, EPUB, RTF, HTML, Markdown,
// CSV/TSV and small images, each carrying the source document's text.
//
// Every writer streams: a Doc's paragraphs come from a callback that may
// read a large file, and nothing proportional to the document is held in
// memory except where a format needs it (a PDF page, one spreadsheet tab,
// which are small). Output is deterministic for a given input, so a caller
// may render once to count bytes and again to send them.
package render

import (
	"errors"
	"io"
	"strings"
	"time"
)

// Style is a paragraph's role in a document.
type Style int

// Paragraph styles a Doc supports.
const (
	Normal Style = iota
	Heading1
	Heading2
	Heading3
	Bullet
)

// Paragraph is one block of a Doc.
type Paragraph struct {
	Style Style
	Text  string
}

// ParagraphSource calls fn for each paragraph in order and stops at the
// first error fn returns, returning it.
type ParagraphSource func(fn func(Paragraph) error) error

// Doc is a text document (a Google Doc).
type Doc struct {
	Title    string
	Modified time.Time
	Body     ParagraphSource
}

// Tab is one sheet of a workbook.
type Tab struct {
	Title string
	Rows  [][]string
}

// Workbook is a spreadsheet (a Google Sheet).
type Workbook struct {
	Title    string
	Modified time.Time
	Tabs     []Tab
}

// Slide is one slide: a title and lines of body text.
type Slide struct {
	Title string
	Body  []string
}

// Deck is a presentation (Google Slides).
type Deck struct {
	Title    string
	Modified time.Time
	Slides   []Slide
}

// Drawing is a Google Drawing: a title and lines of text.
type Drawing struct {
	Title    string
	Modified time.Time
	Lines    []string
}

// ParagraphsOf is a ParagraphSource over a fixed list.
func ParagraphsOf(ps ...Paragraph) ParagraphSource {
	return func(fn func(Paragraph) error) error {
		for _, p := range ps {
			if err := fn(p); err != nil {
				return err
			}
		}
		return nil
	}
}

// ParseParagraph reads one line of the emulator's Doc body notation:
// "# ", "## ", "### " start headings and "- " or "* " a bullet.
func ParseParagraph(line string) Paragraph {
	switch {
	case strings.HasPrefix(line, "### "):
		return Paragraph{Heading3, line[4:]}
	case strings.HasPrefix(line, "## "):
		return Paragraph{Heading2, line[3:]}
	case strings.HasPrefix(line, "# "):
		return Paragraph{Heading1, line[2:]}
	case strings.HasPrefix(line, "- "), strings.HasPrefix(line, "* "):
		return Paragraph{Bullet, line[2:]}
	default:
		return Paragraph{Normal, line}
	}
}

// FormatParagraph is the inverse of ParseParagraph.
func FormatParagraph(p Paragraph) string {
	switch p.Style {
	case Heading1:
		return "# " + p.Text
	case Heading2:
		return "## " + p.Text
	case Heading3:
		return "### " + p.Text
	case Bullet:
		return "- " + p.Text
	default:
		return p.Text
	}
}

// ErrLimit is returned by a LimitWriter once more than its limit was written.
var ErrLimit = errors.New("render: output over the limit")

// LimitWriter counts what is written and fails with ErrLimit past Limit
// bytes; W may be nil to only count.
type LimitWriter struct {
	W     io.Writer
	Limit int64
	N     int64
}

// Write implements io.Writer.
func (l *LimitWriter) Write(p []byte) (int, error) {
	if l.N+int64(len(p)) > l.Limit {
		l.N += int64(len(p))
		return 0, ErrLimit
	}
	l.N += int64(len(p))
	if l.W == nil {
		return len(p), nil
	}
	return l.W.Write(p)
}

// countWriter tracks the offset of a stream (PDF needs byte offsets).
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

func (c *countWriter) str(s string) { _, _ = io.WriteString(c, s) }

// wrap breaks text into lines of at most width runes, at spaces where it can.
func wrap(text string, width int) []string {
	rs := []rune(text)
	var out []string
	for len(rs) > width {
		cut := width
		for i := width; i > 0; i-- {
			if rs[i] == ' ' {
				cut = i
				break
			}
		}
		out = append(out, strings.TrimRight(string(rs[:cut]), " "))
		rs = rs[cut:]
		for len(rs) > 0 && rs[0] == ' ' {
			rs = rs[1:]
		}
	}
	return append(out, string(rs))
}

// safeFileName turns a title into a file name for entries inside archives.
func safeFileName(title, fallback string) string {
	var b strings.Builder
	for _, r := range title {
		switch {
		case r < 0x20, strings.ContainsRune(`/\:*?"<>|`, r):
			b.WriteRune('_')
		default:
			b.WriteRune(r)
		}
	}
	s := strings.TrimSpace(b.String())
	if s == "" || s == "." || s == ".." {
		return fallback
	}
	return s
}

// xmlText escapes s for XML character data and attribute values and drops
// the control characters XML 1.0 forbids.
func xmlText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&apos;")
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteRune(r)
		case r < 0x20, r == 0xfffe, r == 0xffff, r >= 0xd800 && r <= 0xdfff:
			// not allowed in XML 1.0
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// xmlHeader starts every XML part.
const xmlHeader = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"

// w3cTime formats t as the W3CDTF timestamps document metadata uses.
func w3cTime(t time.Time) string {
	if t.IsZero() {
		t = time.Unix(0, 0)
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}
