package drivesvc

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"html"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/emulator/internal/render"
)

// A Doc's body is stored as a blob with one paragraph per line, each line
// a style character ('P' normal, '1'-'3' heading, 'B' bullet) followed by
// the text, so a body of any size streams from disk and exports stream too.

var styleChars = map[render.Style]byte{render.Normal: 'P', render.Heading1: '1', render.Heading2: '2', render.Heading3: '3', render.Bullet: 'B'}

func styleOf(c byte) render.Style {
	for st, sc := range styleChars {
		if sc == c {
			return st
		}
	}
	return render.Normal
}

// docBody writes a Doc's body blob and gathers its searchable text.
type docBody struct {
	bw    *core.BlobWriter
	buf   *bufio.Writer
	index strings.Builder
}

func newDocBody(blobs *core.Blobs) (*docBody, error) {
	bw, err := blobs.Create()
	if err != nil {
		return nil, err
	}
	return &docBody{bw: bw, buf: bufio.NewWriterSize(bw, 64<<10)}, nil
}

var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// add appends a paragraph; one longer than maxParagraph is split so every
// stored line stays bounded.
func (d *docBody) add(p render.Paragraph) error {
	text := strings.ToValidUTF8(lineBreaks.Replace(p.Text), "\ufffd")
	if d.index.Len() < maxIndexLen {
		d.index.WriteString(strings.ToLower(text))
		d.index.WriteByte('\n')
	}
	for {
		part := text
		if len(part) > maxParagraph {
			cut := maxParagraph
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			part, text = text[:cut], text[cut:]
		} else {
			text = ""
		}
		if err := d.buf.WriteByte(styleChars[p.Style]); err != nil {
			return err
		}
		if _, err := d.buf.WriteString(part + "\n"); err != nil {
			return err
		}
		if text == "" {
			return nil
		}
	}
}

// size is the bytes written so far.
func (d *docBody) size() int64 { return d.bw.Size() + int64(d.buf.Buffered()) }

func (d *docBody) commit() (core.Blob, string, error) {
	if err := d.buf.Flush(); err != nil {
		d.bw.Abort()
		return core.Blob{}, "", err
	}
	b, err := d.bw.Commit()
	return b, d.index.String(), err
}

func (d *docBody) abort() { d.bw.Abort() }

// docSource reads a stored Doc body, opening the blob afresh on every call.
func docSource(blobs *core.Blobs, id string) render.ParagraphSource {
	return func(fn func(render.Paragraph) error) error {
		f, err := blobs.Open(id)
		if err != nil {
			return fmt.Errorf("doc body: %w", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), maxParagraph+8)
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				continue
			}
			if err := fn(render.Paragraph{Style: styleOf(line[0]), Text: line[1:]}); err != nil {
				return err
			}
		}
		return sc.Err()
	}
}

// scanLines splits at line ends, and cuts a line longer than maxParagraph
// (at a rune boundary) so no single line needs unbounded memory.
func scanLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 && i <= maxParagraph {
		return i + 1, bytes.TrimSuffix(data[:i], []byte("\r")), nil
	}
	if len(data) > maxParagraph {
		cut := maxParagraph
		for cut > 0 && cut < len(data) && !utf8.RuneStart(data[cut]) {
			cut--
		}
		return cut, data[:cut], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), bytes.TrimSuffix(data, []byte("\r")), nil
	}
	return 0, nil, nil
}

// textParagraphs reads r line by line. Plain text makes one normal
// paragraph per line, as Google's text/plain conversion does; otherwise
// the emulator's notation applies ("# " headings, "- " bullets) and blank
// lines only separate paragraphs.
func textParagraphs(r io.Reader, plain bool, fn func(render.Paragraph) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxParagraph+1)
	sc.Split(scanLines)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			line = strings.TrimPrefix(line, "\ufeff")
			first = false
		}
		if !utf8.ValidString(line) {
			line = strings.ToValidUTF8(line, "\ufffd")
		}
		p := render.Paragraph{Text: line}
		if !plain {
			if strings.TrimSpace(line) == "" {
				continue
			}
			p = render.ParseParagraph(line)
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	return sc.Err()
}

// maxHTMLConvert bounds an HTML document converted to a Doc: the tag
// scan reads it whole.
const maxHTMLConvert = 16 << 20

var (
	htmlDrop = regexp.MustCompile(`(?is)<(head|script|style|title)\b.*?</(head|script|style|title)\s*>|<!--.*?-->|<![^>]*>|<\?[^>]*>`)
	htmlTag  = regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*>`)
	spaces   = regexp.MustCompile(`\s+`)
)

var htmlBlocks = setOf("p", "div", "br", "li", "ul", "ol", "tr", "table", "blockquote", "pre",
	"section", "article", "header", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "body")

// htmlParagraphs converts an HTML document to paragraphs: h1-h3 become
// headings, li bullets, other block elements paragraphs; tags are dropped
// and entities decoded.
func htmlParagraphs(r io.Reader, fn func(render.Paragraph) error) error {
	b, err := io.ReadAll(io.LimitReader(r, maxHTMLConvert+1))
	if err != nil {
		return err
	}
	if len(b) > maxHTMLConvert {
		return errTooLargeToConvert
	}
	doc := htmlDrop.ReplaceAllString(strings.ToValidUTF8(string(b), "\ufffd"), " ")
	style := render.Normal
	var text strings.Builder
	flush := func() error {
		t := strings.TrimSpace(spaces.ReplaceAllString(html.UnescapeString(text.String()), " "))
		text.Reset()
		if t == "" {
			return nil
		}
		return fn(render.Paragraph{Style: style, Text: t})
	}
	last := 0
	for _, m := range htmlTag.FindAllStringSubmatchIndex(doc, -1) {
		text.WriteString(doc[last:m[0]])
		last = m[1]
		closing, name := doc[m[2]:m[3]] == "/", strings.ToLower(doc[m[4]:m[5]])
		if !htmlBlocks[name] {
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		switch {
		case closing:
			style = render.Normal
		case name == "h1":
			style = render.Heading1
		case name == "h2":
			style = render.Heading2
		case name == "h3", name == "h4", name == "h5", name == "h6":
			style = render.Heading3
		case name == "li":
			style = render.Bullet
		}
	}
	text.WriteString(doc[last:])
	return flush()
}

var errTooLargeToConvert = errors.New("the document is too large to convert")

// csvTab reads a CSV (or, with comma '\t', a TSV) into a tab.
func csvTab(r io.Reader, title string, comma rune) (*tab, error) {
	return csvTabLimit(r, title, comma, maxCellsPerFile)
}

func csvTabLimit(r io.Reader, title string, comma rune, maxCells int) (*tab, error) {
	cr := csv.NewReader(r)
	cr.Comma = comma
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	t := &tab{title: title}
	cells := 0
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return t, nil
		}
		if err != nil {
			return nil, fmt.Errorf("csv: %w", err)
		}
		if cells += len(rec); cells > maxCells {
			return nil, errTooManyCells
		}
		t.rows = append(t.rows, rec)
	}
}

var errTooManyCells = fmt.Errorf("a spreadsheet holds at most %d cells in the emulator", maxCellsPerFile)

// slidesFromText splits text into slides at lines that are exactly "---";
// each slide's first non-empty line is its title, the rest its body.
func slidesFromText(text string) []slide {
	var out []slide
	var cur []string
	emit := func() {
		var s slide
		for _, l := range cur {
			switch {
			case s.title == "" && strings.TrimSpace(l) == "":
			case s.title == "":
				s.title = strings.TrimSpace(strings.TrimLeft(l, "# "))
			default:
				s.body = append(s.body, l)
			}
		}
		for len(s.body) > 0 && strings.TrimSpace(s.body[len(s.body)-1]) == "" {
			s.body = s.body[:len(s.body)-1]
		}
		if s.title != "" || len(s.body) > 0 {
			out = append(out, s)
		}
		cur = nil
	}
	for line := range strings.SplitSeq(strings.ReplaceAll(strings.TrimPrefix(text, "\ufeff"), "\r\n", "\n"), "\n") {
		if strings.TrimSpace(line) == "---" {
			emit()
			continue
		}
		cur = append(cur, line)
	}
	emit()
	return out
}

// indexOfTabs is the searchable text of a spreadsheet.
func indexOfTabs(tabs []*tab) string {
	var b strings.Builder
	for _, t := range tabs {
		b.WriteString(strings.ToLower(t.title) + "\n")
		for _, row := range t.rows {
			for _, c := range row {
				if b.Len() >= maxIndexLen {
					return b.String()
				}
				b.WriteString(strings.ToLower(c) + " ")
			}
		}
	}
	return b.String()
}

// indexOfLines is the searchable text of slides or a drawing.
func indexOfLines(lines ...string) string {
	s := strings.ToLower(strings.Join(lines, "\n"))
	if len(s) > maxIndexLen {
		s = s[:maxIndexLen]
	}
	return s
}

// textual reports whether binary content of this MIME type is indexed for fullText.
func textual(mimeType string) bool {
	return strings.HasPrefix(mimeType, "text/") || mimeType == "application/json" ||
		mimeType == "application/xml" || mimeType == "application/pdf"
}

var pdfTextRun = regexp.MustCompile(`\(((?:[^()\\]|\\.)*)\)\s*Tj`)

// indexOfContent reads the start of textual content for fullText: text as
// is, a PDF's uncompressed text runs (enough for simple PDFs).
func indexOfContent(blobs *core.Blobs, b core.Blob, mimeType string) string {
	if !textual(mimeType) {
		return ""
	}
	f, err := blobs.Open(b.ID)
	if err != nil {
		return ""
	}
	defer f.Close()
	head, _ := io.ReadAll(io.LimitReader(f, 4*maxIndexLen))
	if mimeType == "application/pdf" {
		var t strings.Builder
		for _, m := range pdfTextRun.FindAllSubmatch(head, -1) {
			t.Write(m[1])
			t.WriteByte(' ')
		}
		head = []byte(t.String())
	}
	s := strings.ToLower(strings.ToValidUTF8(string(head), ""))
	if len(s) > maxIndexLen {
		s = s[:maxIndexLen]
	}
	return s
}
