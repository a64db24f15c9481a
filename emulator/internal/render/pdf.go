package render

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf16"
)

// Fonts every emulator PDF declares (PDF standard 14 fonts need no embedding).
const (
	fontRegular = "F1"
	fontBold    = "F2"
	fontMono    = "F3"
)

// Fixed object numbers; pages follow from firstPageObj in pairs (page, content).
const (
	objCatalog = 1
	objPages   = 2
	objFont1   = 3
	objFont2   = 4
	objFont3   = 5
	objInfo    = 6
	firstFree  = 7
)

type pdfLine struct {
	text string
	size float64
	font string
}

// pdfDoc writes a PDF object by object, remembering each offset for the
// cross-reference table, so pages stream out as soon as they are full.
type pdfDoc struct {
	cw      *countWriter
	offsets map[int]int64
	next    int
	kids    []int
	width   float64
	height  float64
	margin  float64
	y       float64
	page    []pdfLine
	cursorY []float64
}

func newPDF(w io.Writer, width, height float64, title string, modified time.Time) *pdfDoc {
	p := &pdfDoc{
		cw:      &countWriter{w: w},
		offsets: map[int]int64{},
		next:    firstFree,
		width:   width,
		height:  height,
		margin:  54,
	}
	p.y = height - p.margin
	// The second line's high bytes mark the file as binary, as PDF 1.4 asks.
	p.cw.str("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	p.object(objFont1, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	p.object(objFont2, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
	p.object(objFont3, "<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>")
	if modified.IsZero() {
		modified = time.Unix(0, 0)
	}
	p.object(objInfo, fmt.Sprintf("<< /Title %s /Producer (drivemail emulator) /CreationDate (D:%s) >>",
		pdfTextString(title), modified.UTC().Format("20060102150405Z")))
	return p
}

func (p *pdfDoc) object(num int, body string) {
	p.offsets[num] = p.cw.n
	p.cw.str(fmt.Sprintf("%d 0 obj\n%s\nendobj\n", num, body))
}

// addText lays out text at size in font, wrapping to the page width and
// starting new pages as needed.
func (p *pdfDoc) addText(text string, size float64, font string) {
	charW := size * 0.52
	if font == fontMono {
		charW = size * 0.6
	}
	width := max(int((p.width-2*p.margin)/charW), 10)
	for _, line := range wrap(text, width) {
		p.addLine(pdfLine{text: line, size: size, font: font})
	}
}

func (p *pdfDoc) addLine(l pdfLine) {
	lead := l.size * 1.35
	if p.y-lead < p.margin {
		p.flushPage()
	}
	p.y -= lead
	p.page = append(p.page, l)
	p.cursorY = append(p.cursorY, p.y)
}

// space adds vertical room (between paragraphs).
func (p *pdfDoc) space(pt float64) {
	if p.y-pt < p.margin {
		p.flushPage()
		return
	}
	p.y -= pt
}

// flushPage writes the current page, even an empty one, and starts another.
func (p *pdfDoc) flushPage() {
	var c strings.Builder
	c.WriteString("BT\n")
	for i, l := range p.page {
		fmt.Fprintf(&c, "/%s %.1f Tf 1 0 0 1 %.1f %.1f Tm %s Tj\n", l.font, l.size, p.margin, p.cursorY[i], pdfString(l.text))
	}
	c.WriteString("ET\n")
	content := c.String()
	pageObj, contentObj := p.next, p.next+1
	p.next += 2
	p.object(pageObj, fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %.0f %.0f] /Resources << /Font << /%s %d 0 R /%s %d 0 R /%s %d 0 R >> >> /Contents %d 0 R >>",
		objPages, p.width, p.height, fontRegular, objFont1, fontBold, objFont2, fontMono, objFont3, contentObj))
	p.object(contentObj, fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(content), content))
	p.kids = append(p.kids, pageObj)
	p.page, p.cursorY = p.page[:0], p.cursorY[:0]
	p.y = p.height - p.margin
}

// close writes the last page, the page tree, the catalog, the
// cross-reference table and the trailer.
func (p *pdfDoc) close() error {
	if len(p.page) > 0 || len(p.kids) == 0 {
		p.flushPage()
	}
	var kids strings.Builder
	for i, k := range p.kids {
		if i > 0 {
			kids.WriteByte(' ')
		}
		fmt.Fprintf(&kids, "%d 0 R", k)
	}
	p.object(objPages, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids.String(), len(p.kids)))
	p.object(objCatalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", objPages))
	xref := p.cw.n
	size := p.next
	p.cw.str(fmt.Sprintf("xref\n0 %d\n0000000000 65535 f \n", size))
	for n := 1; n < size; n++ {
		p.cw.str(fmt.Sprintf("%010d 00000 n \n", p.offsets[n]))
	}
	p.cw.str(fmt.Sprintf("trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", size, objCatalog, objInfo, xref))
	return p.cw.err
}

// winAnsi maps the few non-Latin-1 characters WinAnsiEncoding has.
var winAnsi = map[rune]byte{
	'€': 0x80, '‚': 0x82, 'ƒ': 0x83, '„': 0x84, '…': 0x85, '†': 0x86, '‡': 0x87,
	'ˆ': 0x88, '‰': 0x89, 'Š': 0x8a, '‹': 0x8b, 'Œ': 0x8c, 'Ž': 0x8e, '‘': 0x91,
	'’': 0x92, '“': 0x93, '”': 0x94, '•': 0x95, '–': 0x96, '—': 0x97, '˜': 0x98,
	'™': 0x99, 'š': 0x9a, '›': 0x9b, 'œ': 0x9c, 'ž': 0x9e, 'Ÿ': 0x9f,
}

// pdfString encodes s as a PDF literal string in WinAnsiEncoding; runes
// the encoding lacks become '?'.
func pdfString(s string) string {
	var b strings.Builder
	b.WriteByte('(')
	for _, r := range s {
		var c byte
		switch {
		case r >= 0x20 && r < 0x7f:
			c = byte(r)
		case r >= 0xa0 && r <= 0xff:
			c = byte(r)
		case r == '\t':
			c = ' '
		default:
			if m, ok := winAnsi[r]; ok {
				c = m
			} else {
				c = '?'
			}
		}
		switch {
		case c == '(' || c == ')' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x80:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(')')
	return b.String()
}

// pdfTextString encodes s for the document information dictionary, whose
// strings are PDFDocEncoding or UTF-16BE with a byte order mark (not the
// fonts' WinAnsi): plain ASCII stays literal, anything else goes UTF-16.
func pdfTextString(s string) string {
	ascii := true
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			ascii = false
			break
		}
	}
	if ascii {
		return pdfString(s)
	}
	var b strings.Builder
	b.WriteString("<FEFF")
	for _, u := range utf16.Encode([]rune(s)) {
		fmt.Fprintf(&b, "%04X", u)
	}
	b.WriteByte('>')
	return b.String()
}

// US Letter portrait, and 16:9 for slides.
const (
	letterW, letterH = 612, 792
	slideW, slideH   = 720, 405
)

// DocPDF writes a Doc as a PDF, streaming page by page.
func DocPDF(w io.Writer, d Doc) error {
	p := newPDF(w, letterW, letterH, d.Title, d.Modified)
	err := d.Body(func(par Paragraph) error {
		switch par.Style {
		case Heading1:
			p.space(8)
			p.addText(par.Text, 18, fontBold)
		case Heading2:
			p.space(6)
			p.addText(par.Text, 14, fontBold)
		case Heading3:
			p.space(4)
			p.addText(par.Text, 12, fontBold)
		case Bullet:
			p.addText("• "+par.Text, 11, fontRegular)
		default:
			p.addText(par.Text, 11, fontRegular)
			p.space(4)
		}
		return p.cw.err
	})
	if err != nil {
		return err
	}
	return p.close()
}

// WorkbookPDF writes every tab of a workbook, each from a new page, in a
// fixed-width font with columns separated by two spaces.
func WorkbookPDF(w io.Writer, wb Workbook) error {
	p := newPDF(w, letterW, letterH, wb.Title, wb.Modified)
	for i, tab := range wb.Tabs {
		if i > 0 {
			p.flushPage()
		}
		p.addText(tab.Title, 14, fontBold)
		p.space(6)
		widths := columnWidths(tab.Rows)
		for _, row := range tab.Rows {
			var b strings.Builder
			for c, cell := range row {
				if c > 0 {
					b.WriteString("  ")
				}
				b.WriteString(cell)
				if c < len(row)-1 {
					b.WriteString(strings.Repeat(" ", widths[c]-len([]rune(cell))))
				}
			}
			p.addText(b.String(), 9, fontMono)
		}
		if p.cw.err != nil {
			return p.cw.err
		}
	}
	return p.close()
}

func columnWidths(rows [][]string) []int {
	var w []int
	for _, row := range rows {
		for c, cell := range row {
			if c >= len(w) {
				w = append(w, 0)
			}
			w[c] = max(w[c], len([]rune(cell)))
		}
	}
	return w
}

// DeckPDF writes one landscape page per slide.
func DeckPDF(w io.Writer, d Deck) error {
	p := newPDF(w, slideW, slideH, d.Title, d.Modified)
	for i, s := range d.Slides {
		if i > 0 {
			p.flushPage()
		}
		p.addText(s.Title, 24, fontBold)
		p.space(10)
		for _, line := range s.Body {
			p.addText(line, 14, fontRegular)
		}
	}
	return p.close()
}

// DrawingPDF writes a drawing's text on one page.
func DrawingPDF(w io.Writer, d Drawing) error {
	p := newPDF(w, slideW, slideH, d.Title, d.Modified)
	p.addText(d.Title, 20, fontBold)
	for _, line := range d.Lines {
		p.addText(line, 14, fontRegular)
	}
	return p.close()
}
