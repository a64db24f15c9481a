package render

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"html"
	"io"
	"strings"
)

// DocTXT writes a Doc as Google does: a UTF-8 byte order mark, then one
// paragraph per CRLF-terminated line.
func DocTXT(w io.Writer, d Doc) error {
	bw := bufio.NewWriter(w)
	if _, err := bw.WriteString("\ufeff"); err != nil {
		return err
	}
	err := d.Body(func(p Paragraph) error {
		text := p.Text
		if p.Style == Bullet {
			text = "* " + text
		}
		_, err := bw.WriteString(text + "\r\n")
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// DocMD writes a Doc as Markdown.
func DocMD(w io.Writer, d Doc) error {
	bw := bufio.NewWriter(w)
	prevBullet := false
	err := d.Body(func(p Paragraph) error {
		text := mdEscape(p.Text)
		var s string
		switch p.Style {
		case Heading1:
			s = "# " + text + "\n\n"
		case Heading2:
			s = "## " + text + "\n\n"
		case Heading3:
			s = "### " + text + "\n\n"
		case Bullet:
			s = "- " + text + "\n"
		default:
			s = text + "\n\n"
		}
		if prevBullet && p.Style != Bullet {
			s = "\n" + s
		}
		prevBullet = p.Style == Bullet
		_, err := bw.WriteString(s)
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// mdEscape escapes the characters that would start Markdown markup.
func mdEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "#", `\#`, "[", `\[`, "]", `\]`, "<", `\<`)
	return r.Replace(s)
}

// DocHTML writes a Doc as one HTML page.
func DocHTML(w io.Writer, d Doc) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title></head><body>\n", html.EscapeString(d.Title))
	inList := false
	err := d.Body(func(p Paragraph) error {
		if p.Style == Bullet && !inList {
			bw.WriteString("<ul>\n")
		}
		if p.Style != Bullet && inList {
			bw.WriteString("</ul>\n")
		}
		inList = p.Style == Bullet
		text := html.EscapeString(p.Text)
		var err error
		switch p.Style {
		case Heading1:
			_, err = fmt.Fprintf(bw, "<h1>%s</h1>\n", text)
		case Heading2:
			_, err = fmt.Fprintf(bw, "<h2>%s</h2>\n", text)
		case Heading3:
			_, err = fmt.Fprintf(bw, "<h3>%s</h3>\n", text)
		case Bullet:
			_, err = fmt.Fprintf(bw, "<li>%s</li>\n", text)
		default:
			_, err = fmt.Fprintf(bw, "<p>%s</p>\n", text)
		}
		return err
	})
	if err != nil {
		return err
	}
	if inList {
		bw.WriteString("</ul>\n")
	}
	bw.WriteString("</body></html>\n")
	return bw.Flush()
}

// DocHTMLZip writes a Doc as Google's zipped web page: one TITLE.html entry.
func DocHTMLZip(w io.Writer, d Doc) error {
	z := newZip(w, d.Modified)
	if err := z.stream(safeFileName(d.Title, "document")+".html", func(ew io.Writer) error { return DocHTML(ew, d) }); err != nil {
		return err
	}
	return z.close()
}

// DocRTF writes a Doc as Rich Text.
func DocRTF(w io.Writer, d Doc) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\fswiss Arial;}}\n{\\info{\\title " + rtfEscape(d.Title) + "}}\n\\f0\\fs22\n")
	err := d.Body(func(p Paragraph) error {
		var err error
		switch p.Style {
		case Heading1:
			_, err = bw.WriteString("{\\pard\\b\\fs36 " + rtfEscape(p.Text) + "\\par}\n")
		case Heading2:
			_, err = bw.WriteString("{\\pard\\b\\fs28 " + rtfEscape(p.Text) + "\\par}\n")
		case Heading3:
			_, err = bw.WriteString("{\\pard\\b\\fs24 " + rtfEscape(p.Text) + "\\par}\n")
		case Bullet:
			_, err = bw.WriteString("{\\pard\\li360\\bullet\\tab " + rtfEscape(p.Text) + "\\par}\n")
		default:
			_, err = bw.WriteString("{\\pard " + rtfEscape(p.Text) + "\\par}\n")
		}
		return err
	})
	if err != nil {
		return err
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// rtfEscape escapes RTF control characters and writes non-ASCII as \uN?.
func rtfEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\' || r == '{' || r == '}':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString("\\tab ")
		case r < 0x20:
			b.WriteByte(' ')
		case r < 0x80:
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, "\\u%d?", int16(uint16(r)))
		default:
			// Outside the BMP: RTF wants a UTF-16 surrogate pair.
			r -= 0x10000
			hi, lo := 0xd800+(r>>10), 0xdc00+(r&0x3ff)
			fmt.Fprintf(&b, "\\u%d?\\u%d?", int16(uint16(hi)), int16(uint16(lo)))
		}
	}
	return b.String()
}

// TabCSV writes one tab as RFC 4180 CSV with CRLF line ends.
func TabCSV(w io.Writer, t Tab) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	for _, row := range t.Rows {
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// TabTSV writes one tab as tab-separated values; tabs and line breaks
// inside a cell become spaces, since TSV has no quoting.
func TabTSV(w io.Writer, t Tab) error {
	bw := bufio.NewWriter(w)
	clean := strings.NewReplacer("\t", " ", "\r\n", " ", "\n", " ", "\r", " ")
	for _, row := range t.Rows {
		for i, cell := range row {
			if i > 0 {
				bw.WriteByte('\t')
			}
			bw.WriteString(clean.Replace(cell))
		}
		if _, err := bw.WriteString("\r\n"); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// TabHTML writes one tab as an HTML table.
func TabHTML(w io.Writer, t Tab) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title><link rel=\"stylesheet\" href=\"resources/sheet.css\"></head><body>\n<table class=\"waffle\">\n", html.EscapeString(t.Title))
	for _, row := range t.Rows {
		bw.WriteString("<tr>")
		for _, cell := range row {
			fmt.Fprintf(bw, "<td>%s</td>", html.EscapeString(cell))
		}
		bw.WriteString("</tr>\n")
	}
	bw.WriteString("</table></body></html>\n")
	return bw.Flush()
}

// WorkbookHTMLZip writes a workbook as Google's zipped web page: one
// TAB.html per tab and a shared style sheet.
func WorkbookHTMLZip(w io.Writer, wb Workbook) error {
	z := newZip(w, wb.Modified)
	used := map[string]bool{}
	for i, t := range wb.Tabs {
		name := safeFileName(t.Title, fmt.Sprintf("Sheet%d", i+1))
		for used[name] {
			name += "_"
		}
		used[name] = true
		if err := z.stream(name+".html", func(ew io.Writer) error { return TabHTML(ew, t) }); err != nil {
			return err
		}
	}
	if err := z.text("resources/sheet.css", ".waffle{border-collapse:collapse}.waffle td{border:1px solid #ccc;padding:2px 4px}\n"); err != nil {
		return err
	}
	return z.close()
}

// DeckTXT writes each slide's title and body, slides separated by a blank line.
func DeckTXT(w io.Writer, d Deck) error {
	bw := bufio.NewWriter(w)
	for i, s := range d.Slides {
		if i > 0 {
			bw.WriteString("\n")
		}
		bw.WriteString(s.Title + "\n")
		for _, line := range s.Body {
			bw.WriteString(line + "\n")
		}
	}
	return bw.Flush()
}
