package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Office Open XML namespaces and relationship types.
const (
	nsContentTypes = "http://schemas.openxmlformats.org/package/2006/content-types"
	nsPackageRels  = "http://schemas.openxmlformats.org/package/2006/relationships"
	nsWord         = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
	nsSheet        = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
	nsPres         = "http://schemas.openxmlformats.org/presentationml/2006/main"
	nsDrawing      = "http://schemas.openxmlformats.org/drawingml/2006/main"
	nsOfficeRels   = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
	relOfficeDoc   = nsOfficeRels + "/officeDocument"
	relCoreProps   = "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties"
	ctRels         = "application/vnd.openxmlformats-package.relationships+xml"
	ctCore         = "application/vnd.openxmlformats-package.core-properties+xml"
)

type rel struct{ id, typ, target string }

func relsXML(rels ...rel) string {
	var b strings.Builder
	b.WriteString(xmlHeader + `<Relationships xmlns="` + nsPackageRels + `">`)
	for _, r := range rels {
		fmt.Fprintf(&b, `<Relationship Id="%s" Type="%s" Target="%s"/>`, r.id, r.typ, xmlText(r.target))
	}
	b.WriteString(`</Relationships>`)
	return b.String()
}

// contentTypesXML lists the default rels/xml types and one override per part.
func contentTypesXML(overrides ...[2]string) string {
	var b strings.Builder
	b.WriteString(xmlHeader + `<Types xmlns="` + nsContentTypes + `">`)
	b.WriteString(`<Default Extension="rels" ContentType="` + ctRels + `"/>`)
	b.WriteString(`<Default Extension="xml" ContentType="application/xml"/>`)
	for _, o := range overrides {
		fmt.Fprintf(&b, `<Override PartName="%s" ContentType="%s"/>`, o[0], o[1])
	}
	b.WriteString(`</Types>`)
	return b.String()
}

func corePropsXML(title string, modified string) string {
	return xmlHeader + `<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
		`<dc:title>` + xmlText(title) + `</dc:title>` +
		`<dcterms:modified xsi:type="dcterms:W3CDTF">` + modified + `</dcterms:modified></cp:coreProperties>`
}

// writeParts writes fixed parts in order, then returns the first error.
func writeParts(z *zipOut, parts ...[2]string) error {
	for _, p := range parts {
		if err := z.text(p[0], p[1]); err != nil {
			return err
		}
	}
	return nil
}

// DocDOCX writes a Doc as a Word document.
func DocDOCX(w io.Writer, d Doc) error {
	z := newZip(w, d.Modified)
	err := writeParts(z,
		[2]string{"[Content_Types].xml", contentTypesXML(
			[2]string{"/word/document.xml", "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"},
			[2]string{"/word/styles.xml", "application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"},
			[2]string{"/docProps/core.xml", ctCore})},
		[2]string{"_rels/.rels", relsXML(rel{"rId1", relOfficeDoc, "word/document.xml"}, rel{"rId2", relCoreProps, "docProps/core.xml"})},
		[2]string{"docProps/core.xml", corePropsXML(d.Title, w3cTime(d.Modified))},
		[2]string{"word/_rels/document.xml.rels", relsXML(rel{"rId1", nsOfficeRels + "/styles", "styles.xml"})},
		[2]string{"word/styles.xml", docxStyles},
	)
	if err != nil {
		return err
	}
	err = z.stream("word/document.xml", func(ew io.Writer) error {
		if _, err := io.WriteString(ew, xmlHeader+`<w:document xmlns:w="`+nsWord+`"><w:body>`); err != nil {
			return err
		}
		if err := d.Body(func(p Paragraph) error {
			style := ""
			switch p.Style {
			case Heading1:
				style = "Heading1"
			case Heading2:
				style = "Heading2"
			case Heading3:
				style = "Heading3"
			case Bullet:
				style = "ListBullet"
			}
			var b strings.Builder
			b.WriteString("<w:p>")
			if style != "" {
				b.WriteString(`<w:pPr><w:pStyle w:val="` + style + `"/></w:pPr>`)
			}
			b.WriteString(`<w:r><w:t xml:space="preserve">` + xmlText(p.Text) + `</w:t></w:r></w:p>`)
			_, err := io.WriteString(ew, b.String())
			return err
		}); err != nil {
			return err
		}
		_, err := io.WriteString(ew, `<w:sectPr><w:pgSz w:w="12240" w:h="15840"/></w:sectPr></w:body></w:document>`)
		return err
	})
	if err != nil {
		return err
	}
	return z.close()
}

const docxStyles = xmlHeader + `<w:styles xmlns:w="` + nsWord + `">` +
	`<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/><w:rPr><w:b/><w:sz w:val="36"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/><w:basedOn w:val="Normal"/><w:rPr><w:b/><w:sz w:val="28"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Heading3"><w:name w:val="heading 3"/><w:basedOn w:val="Normal"/><w:rPr><w:b/><w:sz w:val="24"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="ListBullet"><w:name w:val="List Bullet"/><w:basedOn w:val="Normal"/><w:pPr><w:ind w:left="720"/></w:pPr></w:style>` +
	`</w:styles>`

// ColumnName is the spreadsheet letter of a zero-based column: 0 → A, 26 → AA.
func ColumnName(c int) string {
	name := ""
	for c++; c > 0; c = (c - 1) / 26 {
		name = string(rune('A'+(c-1)%26)) + name
	}
	return name
}

// isNumber reports whether a cell reads as a plain number a spreadsheet
// would store as one (no leading zeros to lose, no exotic spellings).
func isNumber(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		return false
	}
	t := strings.TrimPrefix(s, "-")
	if len(t) > 1 && t[0] == '0' && t[1] != '.' {
		return false
	}
	return !strings.ContainsAny(s, "eEinfINFxX_+") && !strings.HasSuffix(s, ".")
}

// sheetName makes a tab title acceptable to spreadsheet programs.
func sheetName(title string, i int) string {
	clean := strings.Map(func(r rune) rune {
		if strings.ContainsRune(`[]:*?/\`, r) {
			return '_'
		}
		return r
	}, title)
	if r := []rune(clean); len(r) > 31 {
		clean = string(r[:31])
	}
	if strings.TrimSpace(clean) == "" {
		clean = fmt.Sprintf("Sheet%d", i+1)
	}
	return clean
}

// WorkbookXLSX writes a workbook as an Excel file, one worksheet per tab.
func WorkbookXLSX(w io.Writer, wb Workbook) error {
	z := newZip(w, wb.Modified)
	over := [][2]string{
		{"/xl/workbook.xml", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"},
		{"/docProps/core.xml", ctCore},
	}
	wbRels := []rel{}
	var sheets strings.Builder
	for i, t := range wb.Tabs {
		over = append(over, [2]string{fmt.Sprintf("/xl/worksheets/sheet%d.xml", i+1), "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"})
		wbRels = append(wbRels, rel{fmt.Sprintf("rId%d", i+1), nsOfficeRels + "/worksheet", fmt.Sprintf("worksheets/sheet%d.xml", i+1)})
		fmt.Fprintf(&sheets, `<sheet name="%s" sheetId="%d" r:id="rId%d"/>`, xmlText(sheetName(t.Title, i)), i+1, i+1)
	}
	err := writeParts(z,
		[2]string{"[Content_Types].xml", contentTypesXML(over...)},
		[2]string{"_rels/.rels", relsXML(rel{"rId1", relOfficeDoc, "xl/workbook.xml"}, rel{"rId2", relCoreProps, "docProps/core.xml"})},
		[2]string{"docProps/core.xml", corePropsXML(wb.Title, w3cTime(wb.Modified))},
		[2]string{"xl/workbook.xml", xmlHeader + `<workbook xmlns="` + nsSheet + `" xmlns:r="` + nsOfficeRels + `"><sheets>` + sheets.String() + `</sheets></workbook>`},
		[2]string{"xl/_rels/workbook.xml.rels", relsXML(wbRels...)},
	)
	if err != nil {
		return err
	}
	for i, t := range wb.Tabs {
		err := z.stream(fmt.Sprintf("xl/worksheets/sheet%d.xml", i+1), func(ew io.Writer) error {
			if _, err := io.WriteString(ew, xmlHeader+`<worksheet xmlns="`+nsSheet+`"><sheetData>`); err != nil {
				return err
			}
			for r, row := range t.Rows {
				var b strings.Builder
				fmt.Fprintf(&b, `<row r="%d">`, r+1)
				for c, cell := range row {
					if cell == "" {
						continue
					}
					ref := ColumnName(c) + strconv.Itoa(r+1)
					if isNumber(cell) {
						fmt.Fprintf(&b, `<c r="%s"><v>%s</v></c>`, ref, cell)
					} else {
						fmt.Fprintf(&b, `<c r="%s" t="inlineStr"><is><t xml:space="preserve">%s</t></is></c>`, ref, xmlText(cell))
					}
				}
				b.WriteString(`</row>`)
				if _, err := io.WriteString(ew, b.String()); err != nil {
					return err
				}
			}
			_, err := io.WriteString(ew, `</sheetData></worksheet>`)
			return err
		})
		if err != nil {
			return err
		}
	}
	return z.close()
}

// DeckPPTX writes a deck as a PowerPoint file: one slide master, one blank
// layout, a theme, and one slide per slide with a title and a body box.
func DeckPPTX(w io.Writer, d Deck) error {
	z := newZip(w, d.Modified)
	over := [][2]string{
		{"/ppt/presentation.xml", "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"},
		{"/ppt/slideMasters/slideMaster1.xml", "application/vnd.openxmlformats-officedocument.presentationml.slideMaster+xml"},
		{"/ppt/slideLayouts/slideLayout1.xml", "application/vnd.openxmlformats-officedocument.presentationml.slideLayout+xml"},
		{"/ppt/theme/theme1.xml", "application/vnd.openxmlformats-officedocument.theme+xml"},
		{"/docProps/core.xml", ctCore},
	}
	presRels := []rel{
		{"rId1", nsOfficeRels + "/slideMaster", "slideMasters/slideMaster1.xml"},
		{"rId2", nsOfficeRels + "/theme", "theme/theme1.xml"},
	}
	var ids strings.Builder
	for i := range d.Slides {
		over = append(over, [2]string{fmt.Sprintf("/ppt/slides/slide%d.xml", i+1), "application/vnd.openxmlformats-officedocument.presentationml.slide+xml"})
		presRels = append(presRels, rel{fmt.Sprintf("rId%d", i+3), nsOfficeRels + "/slide", fmt.Sprintf("slides/slide%d.xml", i+1)})
		fmt.Fprintf(&ids, `<p:sldId id="%d" r:id="rId%d"/>`, 256+i, i+3)
	}
	sldIDs := ""
	if ids.Len() > 0 {
		sldIDs = `<p:sldIdLst>` + ids.String() + `</p:sldIdLst>`
	}
	err := writeParts(z,
		[2]string{"[Content_Types].xml", contentTypesXML(over...)},
		[2]string{"_rels/.rels", relsXML(rel{"rId1", relOfficeDoc, "ppt/presentation.xml"}, rel{"rId2", relCoreProps, "docProps/core.xml"})},
		[2]string{"docProps/core.xml", corePropsXML(d.Title, w3cTime(d.Modified))},
		[2]string{"ppt/presentation.xml", xmlHeader + `<p:presentation xmlns:a="` + nsDrawing + `" xmlns:r="` + nsOfficeRels + `" xmlns:p="` + nsPres + `">` +
			`<p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst>` + sldIDs +
			`<p:sldSz cx="9144000" cy="5143500"/><p:notesSz cx="6858000" cy="9144000"/></p:presentation>`},
		[2]string{"ppt/_rels/presentation.xml.rels", relsXML(presRels...)},
		[2]string{"ppt/slideMasters/slideMaster1.xml", pptxMaster},
		[2]string{"ppt/slideMasters/_rels/slideMaster1.xml.rels", relsXML(
			rel{"rId1", nsOfficeRels + "/slideLayout", "../slideLayouts/slideLayout1.xml"},
			rel{"rId2", nsOfficeRels + "/theme", "../theme/theme1.xml"})},
		[2]string{"ppt/slideLayouts/slideLayout1.xml", pptxLayout},
		[2]string{"ppt/slideLayouts/_rels/slideLayout1.xml.rels", relsXML(rel{"rId1", nsOfficeRels + "/slideMaster", "../slideMasters/slideMaster1.xml"})},
		[2]string{"ppt/theme/theme1.xml", pptxTheme},
	)
	if err != nil {
		return err
	}
	for i, s := range d.Slides {
		err := writeParts(z,
			[2]string{fmt.Sprintf("ppt/slides/slide%d.xml", i+1), pptxSlide(s)},
			[2]string{fmt.Sprintf("ppt/slides/_rels/slide%d.xml.rels", i+1), relsXML(rel{"rId1", nsOfficeRels + "/slideLayout", "../slideLayouts/slideLayout1.xml"})},
		)
		if err != nil {
			return err
		}
	}
	return z.close()
}

const pptxNS = `xmlns:a="` + nsDrawing + `" xmlns:r="` + nsOfficeRels + `" xmlns:p="` + nsPres + `"`

const pptxEmptyTree = `<p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/></p:spTree>`

const pptxMaster = xmlHeader + `<p:sldMaster ` + pptxNS + `><p:cSld>` + pptxEmptyTree + `</p:cSld>` +
	`<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/>` +
	`<p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst></p:sldMaster>`

const pptxLayout = xmlHeader + `<p:sldLayout ` + pptxNS + ` type="blank"><p:cSld name="Blank">` + pptxEmptyTree + `</p:cSld>` +
	`<p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>`

func pptxColor(name, hex string) string {
	return `<a:` + name + `><a:srgbClr val="` + hex + `"/></a:` + name + `>`
}

var pptxTheme = xmlHeader + `<a:theme xmlns:a="` + nsDrawing + `" name="Emulator"><a:themeElements>` +
	`<a:clrScheme name="Emulator">` +
	`<a:dk1><a:sysClr val="windowText" lastClr="000000"/></a:dk1><a:lt1><a:sysClr val="window" lastClr="FFFFFF"/></a:lt1>` +
	pptxColor("dk2", "1F1F1F") + pptxColor("lt2", "EEEEEE") + pptxColor("accent1", "4285F4") + pptxColor("accent2", "EA4335") +
	pptxColor("accent3", "FBBC04") + pptxColor("accent4", "34A853") + pptxColor("accent5", "FF6D01") + pptxColor("accent6", "46BDC6") +
	pptxColor("hlink", "1155CC") + pptxColor("folHlink", "1155CC") + `</a:clrScheme>` +
	`<a:fontScheme name="Emulator"><a:majorFont><a:latin typeface="Arial"/><a:ea typeface=""/><a:cs typeface=""/></a:majorFont>` +
	`<a:minorFont><a:latin typeface="Arial"/><a:ea typeface=""/><a:cs typeface=""/></a:minorFont></a:fontScheme>` +
	`<a:fmtScheme name="Emulator"><a:fillStyleLst>` + strings.Repeat(`<a:solidFill><a:schemeClr val="phClr"/></a:solidFill>`, 3) + `</a:fillStyleLst>` +
	`<a:lnStyleLst>` + strings.Repeat(`<a:ln w="9525"><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:ln>`, 3) + `</a:lnStyleLst>` +
	`<a:effectStyleLst>` + strings.Repeat(`<a:effectStyle><a:effectLst/></a:effectStyle>`, 3) + `</a:effectStyleLst>` +
	`<a:bgFillStyleLst>` + strings.Repeat(`<a:solidFill><a:schemeClr val="phClr"/></a:solidFill>`, 3) + `</a:bgFillStyleLst>` +
	`</a:fmtScheme></a:themeElements></a:theme>`

// pptxSlide is one slide with a title box and a body box.
func pptxSlide(s Slide) string {
	var body strings.Builder
	for _, line := range s.Body {
		body.WriteString(`<a:p><a:r><a:rPr lang="en-US" sz="1800"/><a:t>` + xmlText(line) + `</a:t></a:r></a:p>`)
	}
	if body.Len() == 0 {
		body.WriteString(`<a:p><a:endParaRPr lang="en-US"/></a:p>`)
	}
	box := func(id int, name string, y, h int, paras string) string {
		return fmt.Sprintf(`<p:sp><p:nvSpPr><p:cNvPr id="%d" name="%s"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>`+
			`<p:spPr><a:xfrm><a:off x="457200" y="%d"/><a:ext cx="8229600" cy="%d"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr>`+
			`<p:txBody><a:bodyPr wrap="square"/><a:lstStyle/>%s</p:txBody></p:sp>`, id, name, y, h, paras)
	}
	title := `<a:p><a:r><a:rPr lang="en-US" sz="3200" b="1"/><a:t>` + xmlText(s.Title) + `</a:t></a:r></a:p>`
	return xmlHeader + `<p:sld ` + pptxNS + `><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>` +
		box(2, "Title", 342900, 914400, title) + box(3, "Body", 1371600, 3429000, body.String()) +
		`</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>`
}
