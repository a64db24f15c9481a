package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// OpenDocument media types (each is also the container's "mimetype" entry).
const (
	MimeODT  = "application/vnd.oasis.opendocument.text"
	MimeODS  = "application/vnd.oasis.opendocument.spreadsheet"
	MimeODP  = "application/vnd.oasis.opendocument.presentation"
	MimeEPUB = "application/epub+zip"
)

const odfNS = `xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ` +
	`xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" ` +
	`xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" ` +
	`xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" ` +
	`xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" ` +
	`xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" ` +
	`xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" ` +
	`xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" ` +
	`xmlns:dc="http://purl.org/dc/elements/1.1/" ` +
	`xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" office:version="1.2"`

// odfStart writes the parts every OpenDocument package shares: the stored
// mimetype first, the manifest and the metadata.
func odfStart(z *zipOut, mime, title, modified string, withStyles bool) error {
	if err := z.stored("mimetype", mime); err != nil {
		return err
	}
	var m strings.Builder
	m.WriteString(xmlHeader + `<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">`)
	fmt.Fprintf(&m, `<manifest:file-entry manifest:full-path="/" manifest:version="1.2" manifest:media-type="%s"/>`, mime)
	m.WriteString(`<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>`)
	m.WriteString(`<manifest:file-entry manifest:full-path="meta.xml" manifest:media-type="text/xml"/>`)
	if withStyles {
		m.WriteString(`<manifest:file-entry manifest:full-path="styles.xml" manifest:media-type="text/xml"/>`)
	}
	m.WriteString(`</manifest:manifest>`)
	return writeParts(z,
		[2]string{"META-INF/manifest.xml", m.String()},
		[2]string{"meta.xml", xmlHeader + `<office:document-meta ` + odfNS + `><office:meta><dc:title>` + xmlText(title) +
			`</dc:title><dc:date>` + modified + `</dc:date><meta:generator>drivemail emulator</meta:generator></office:meta></office:document-meta>`},
	)
}

// DocODT writes a Doc as an OpenDocument text file.
func DocODT(w io.Writer, d Doc) error {
	z := newZip(w, d.Modified)
	if err := odfStart(z, MimeODT, d.Title, w3cTime(d.Modified), false); err != nil {
		return err
	}
	err := z.stream("content.xml", func(ew io.Writer) error {
		if _, err := io.WriteString(ew, xmlHeader+`<office:document-content `+odfNS+`><office:body><office:text>`); err != nil {
			return err
		}
		inList := false
		if err := d.Body(func(p Paragraph) error {
			var b strings.Builder
			if p.Style == Bullet && !inList {
				b.WriteString(`<text:list>`)
			}
			if p.Style != Bullet && inList {
				b.WriteString(`</text:list>`)
			}
			inList = p.Style == Bullet
			text := xmlText(p.Text)
			switch p.Style {
			case Heading1, Heading2, Heading3:
				fmt.Fprintf(&b, `<text:h text:outline-level="%d">%s</text:h>`, int(p.Style-Heading1)+1, text)
			case Bullet:
				b.WriteString(`<text:list-item><text:p>` + text + `</text:p></text:list-item>`)
			default:
				b.WriteString(`<text:p>` + text + `</text:p>`)
			}
			_, err := io.WriteString(ew, b.String())
			return err
		}); err != nil {
			return err
		}
		tail := `</office:text></office:body></office:document-content>`
		if inList {
			tail = `</text:list>` + tail
		}
		_, err := io.WriteString(ew, tail)
		return err
	})
	if err != nil {
		return err
	}
	return z.close()
}

// WorkbookODS writes a workbook as an OpenDocument spreadsheet.
func WorkbookODS(w io.Writer, wb Workbook) error {
	z := newZip(w, wb.Modified)
	if err := odfStart(z, MimeODS, wb.Title, w3cTime(wb.Modified), false); err != nil {
		return err
	}
	err := z.stream("content.xml", func(ew io.Writer) error {
		if _, err := io.WriteString(ew, xmlHeader+`<office:document-content `+odfNS+`><office:body><office:spreadsheet>`); err != nil {
			return err
		}
		for i, t := range wb.Tabs {
			var b strings.Builder
			fmt.Fprintf(&b, `<table:table table:name="%s">`, xmlText(sheetName(t.Title, i)))
			for _, row := range t.Rows {
				b.WriteString(`<table:table-row>`)
				for _, cell := range row {
					if isNumber(cell) {
						fmt.Fprintf(&b, `<table:table-cell office:value-type="float" office:value="%s"><text:p>%s</text:p></table:table-cell>`, cell, cell)
					} else {
						fmt.Fprintf(&b, `<table:table-cell office:value-type="string"><text:p>%s</text:p></table:table-cell>`, xmlText(cell))
					}
				}
				b.WriteString(`</table:table-row>`)
			}
			if len(t.Rows) == 0 {
				b.WriteString(`<table:table-row><table:table-cell/></table:table-row>`)
			}
			b.WriteString(`</table:table>`)
			if _, err := io.WriteString(ew, b.String()); err != nil {
				return err
			}
		}
		_, err := io.WriteString(ew, `</office:spreadsheet></office:body></office:document-content>`)
		return err
	})
	if err != nil {
		return err
	}
	return z.close()
}

// odpStyles declares the page layout and master page the slides name.
const odpStyles = xmlHeader + `<office:document-styles ` + odfNS + `><office:automatic-styles>` +
	`<style:page-layout style:name="PM1"><style:page-layout-properties fo:page-width="25.4cm" fo:page-height="14.29cm" style:print-orientation="landscape"/></style:page-layout>` +
	`</office:automatic-styles><office:master-styles><style:master-page style:name="Default" style:page-layout-name="PM1"/></office:master-styles></office:document-styles>`

// DeckODP writes a deck as an OpenDocument presentation.
func DeckODP(w io.Writer, d Deck) error {
	z := newZip(w, d.Modified)
	if err := odfStart(z, MimeODP, d.Title, w3cTime(d.Modified), true); err != nil {
		return err
	}
	if err := z.text("styles.xml", odpStyles); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(xmlHeader + `<office:document-content ` + odfNS + `><office:body><office:presentation>`)
	for i, s := range d.Slides {
		fmt.Fprintf(&b, `<draw:page draw:name="page%d" draw:master-page-name="Default">`, i+1)
		b.WriteString(`<draw:frame svg:x="1.5cm" svg:y="1cm" svg:width="22cm" svg:height="2.5cm"><draw:text-box><text:p>` + xmlText(s.Title) + `</text:p></draw:text-box></draw:frame>`)
		b.WriteString(`<draw:frame svg:x="1.5cm" svg:y="4cm" svg:width="22cm" svg:height="9cm"><draw:text-box>`)
		for _, line := range s.Body {
			b.WriteString(`<text:p>` + xmlText(line) + `</text:p>`)
		}
		b.WriteString(`</draw:text-box></draw:frame></draw:page>`)
	}
	b.WriteString(`</office:presentation></office:body></office:document-content>`)
	if err := z.text("content.xml", b.String()); err != nil {
		return err
	}
	return z.close()
}

// DocEPUB writes a Doc as an EPUB 3 book with one chapter.
func DocEPUB(w io.Writer, d Doc) error {
	z := newZip(w, d.Modified)
	if err := z.stored("mimetype", MimeEPUB); err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(d.Title + "\x00" + w3cTime(d.Modified)))
	id := "urn:drivemail:" + hex.EncodeToString(sum[:16])
	title := xmlText(d.Title)
	err := writeParts(z,
		[2]string{"META-INF/container.xml", xmlHeader + `<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>` +
			`<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`},
		[2]string{"OEBPS/content.opf", xmlHeader + `<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="bookid">` +
			`<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="bookid">` + id + `</dc:identifier>` +
			`<dc:title>` + title + `</dc:title><dc:language>en</dc:language><meta property="dcterms:modified">` + w3cTime(d.Modified) + `</meta></metadata>` +
			`<manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>` +
			`<item id="content" href="content.xhtml" media-type="application/xhtml+xml"/></manifest>` +
			`<spine><itemref idref="content"/></spine></package>`},
		[2]string{"OEBPS/nav.xhtml", xmlHeader + `<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head><title>` + title +
			`</title></head><body><nav epub:type="toc"><ol><li><a href="content.xhtml">` + title + `</a></li></ol></nav></body></html>`},
	)
	if err != nil {
		return err
	}
	err = z.stream("OEBPS/content.xhtml", func(ew io.Writer) error {
		if _, err := io.WriteString(ew, xmlHeader+`<html xmlns="http://www.w3.org/1999/xhtml"><head><title>`+title+`</title></head><body>`); err != nil {
			return err
		}
		inList := false
		if err := d.Body(func(p Paragraph) error {
			var b strings.Builder
			if p.Style == Bullet && !inList {
				b.WriteString(`<ul>`)
			}
			if p.Style != Bullet && inList {
				b.WriteString(`</ul>`)
			}
			inList = p.Style == Bullet
			text := xmlText(p.Text)
			switch p.Style {
			case Heading1, Heading2, Heading3:
				fmt.Fprintf(&b, `<h%d>%s</h%d>`, int(p.Style-Heading1)+1, text, int(p.Style-Heading1)+1)
			case Bullet:
				b.WriteString(`<li>` + text + `</li>`)
			default:
				b.WriteString(`<p>` + text + `</p>`)
			}
			_, err := io.WriteString(ew, b.String())
			return err
		}); err != nil {
			return err
		}
		tail := `</body></html>`
		if inList {
			tail = `</ul>` + tail
		}
		_, err := io.WriteString(ew, tail)
		return err
	})
	if err != nil {
		return err
	}
	return z.close()
}
