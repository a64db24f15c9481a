package render

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"image/jpeg"
	"image/png"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

var modified = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

func sampleDoc() Doc {
	return Doc{
		Title:    "Q3 <Plan> & \"Notes\"",
		Modified: modified,
		Body: ParagraphsOf(
			Paragraph{Heading1, "Quarterly plan"},
			Paragraph{Normal, "Revenue grew (a lot) in Zürich — 12% \\ up."},
			Paragraph{Bullet, "Hire two engineers"},
			Paragraph{Bullet, "Ship the emulator"},
			Paragraph{Heading2, "Risks"},
			Paragraph{Normal, "Nothing * major_ yet. 日本"},
		),
	}
}

func sampleWorkbook() Workbook {
	return Workbook{Title: "Budget", Modified: modified, Tabs: []Tab{
		{Title: "Summary", Rows: [][]string{{"Item", "Amount"}, {"Rent", "1200"}, {"Coffee, beans", "35.50"}}},
		{Title: "Q1", Rows: [][]string{{"Month", "Spend"}, {"Jan", "007"}, {"Line\nbreak", "tab\there"}}},
		{Title: "Heads/Count", Rows: nil},
	}}
}

func sampleDeck() Deck {
	return Deck{Title: "Kickoff", Modified: modified, Slides: []Slide{
		{Title: "Welcome", Body: []string{"Agenda", "Goals for Q3"}},
		{Title: "Timeline", Body: []string{"June: plan", "July: build"}},
	}}
}

func render(t *testing.T, fn func(io.Writer) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := fn(&buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	// Determinism: a second rendering must give the same bytes, because
	// the export handler counts one rendering and sends another.
	var again bytes.Buffer
	if err := fn(&again); err != nil {
		t.Fatalf("render again: %v", err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Fatal("two renderings differ")
	}
	return buf.Bytes()
}

func TestPDFsAreStructurallyValidAndCarryText(t *testing.T) {
	tests := []struct {
		name      string
		fn        func(io.Writer) error
		wantPages int
		wantText  []string
	}{
		{"doc", func(w io.Writer) error { return DocPDF(w, sampleDoc()) }, 1, []string{"Quarterly plan", "Revenue grew (a lot) in Z\u00fcrich", "Hire two engineers", "Risks"}},
		{"workbook", func(w io.Writer) error { return WorkbookPDF(w, sampleWorkbook()) }, 3, []string{"Summary", "Coffee, beans", "Heads/Count"}},
		{"deck", func(w io.Writer) error { return DeckPDF(w, sampleDeck()) }, 2, []string{"Welcome", "July: build"}},
		{"drawing", func(w io.Writer) error {
			return DrawingPDF(w, Drawing{Title: "Org chart", Lines: []string{"CEO", "CTO"}})
		}, 1, []string{"Org chart", "CTO"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := render(t, tt.fn)
			pages, text, err := CheckPDF(b)
			if err != nil {
				t.Fatal(err)
			}
			if pages != tt.wantPages {
				t.Errorf("pages = %d, want %d", pages, tt.wantPages)
			}
			for _, want := range tt.wantText {
				if !strings.Contains(text, want) {
					t.Errorf("text lacks %q; got:\n%s", want, text)
				}
			}
		})
	}
}

func TestLongDocPDFHasManyPagesAndValidXref(t *testing.T) {
	const paras = 2000
	d := Doc{Title: "Long", Body: func(fn func(Paragraph) error) error {
		for i := range paras {
			if err := fn(Paragraph{Normal, fmt.Sprintf("Paragraph %d of a long document that wraps over more than one line because it keeps going and going.", i)}); err != nil {
				return err
			}
		}
		return nil
	}}
	b := render(t, func(w io.Writer) error { return DocPDF(w, d) })
	pages, text, err := CheckPDF(b)
	if err != nil {
		t.Fatal(err)
	}
	if pages < 50 {
		t.Errorf("pages = %d, want dozens", pages)
	}
	if !strings.Contains(text, "Paragraph 1999 of") {
		t.Error("last paragraph missing")
	}
}

func TestCheckPDFRejectsBrokenFiles(t *testing.T) {
	good := render(t, func(w io.Writer) error { return DocPDF(w, sampleDoc()) })
	shifted := bytes.Replace(good, []byte("%PDF-1.4\n"), []byte("%PDF-1.4\n\n"), 1)
	tests := map[string][]byte{
		"no header":      good[1:],
		"truncated":      good[:len(good)-20],
		"shifted offset": shifted,
	}
	for name, b := range tests {
		if _, _, err := CheckPDF(b); err == nil {
			t.Errorf("%s: CheckPDF accepted a broken file", name)
		}
	}
}

func TestZipFormats(t *testing.T) {
	tests := []struct {
		name      string
		fn        func(io.Writer) error
		mime      string
		wantNames []string
		wantText  []string
	}{
		{"docx", func(w io.Writer) error { return DocDOCX(w, sampleDoc()) }, "",
			[]string{"[Content_Types].xml", "_rels/.rels", "word/document.xml", "word/styles.xml", "docProps/core.xml"},
			[]string{"Quarterly plan", "Hire two engineers", "日本"}},
		{"xlsx", func(w io.Writer) error { return WorkbookXLSX(w, sampleWorkbook()) }, "",
			[]string{"[Content_Types].xml", "_rels/.rels", "xl/workbook.xml", "xl/_rels/workbook.xml.rels", "xl/worksheets/sheet1.xml", "xl/worksheets/sheet3.xml"},
			[]string{"Coffee, beans", "1200", "007"}},
		{"pptx", func(w io.Writer) error { return DeckPPTX(w, sampleDeck()) }, "",
			[]string{"[Content_Types].xml", "ppt/presentation.xml", "ppt/slides/slide1.xml", "ppt/slides/slide2.xml", "ppt/slideMasters/slideMaster1.xml", "ppt/slideLayouts/slideLayout1.xml", "ppt/theme/theme1.xml"},
			[]string{"Welcome", "July: build"}},
		{"odt", func(w io.Writer) error { return DocODT(w, sampleDoc()) }, MimeODT,
			[]string{"mimetype", "META-INF/manifest.xml", "meta.xml", "content.xml"},
			[]string{"Quarterly plan", "Ship the emulator"}},
		{"ods", func(w io.Writer) error { return WorkbookODS(w, sampleWorkbook()) }, MimeODS,
			[]string{"mimetype", "META-INF/manifest.xml", "content.xml"},
			[]string{"Coffee, beans", "Jan"}},
		{"odp", func(w io.Writer) error { return DeckODP(w, sampleDeck()) }, MimeODP,
			[]string{"mimetype", "META-INF/manifest.xml", "styles.xml", "content.xml"},
			[]string{"Timeline", "Agenda"}},
		{"epub", func(w io.Writer) error { return DocEPUB(w, sampleDoc()) }, MimeEPUB,
			[]string{"mimetype", "META-INF/container.xml", "OEBPS/content.opf", "OEBPS/nav.xhtml", "OEBPS/content.xhtml"},
			[]string{"Quarterly plan", "Risks"}},
		{"doc html zip", func(w io.Writer) error { return DocHTMLZip(w, sampleDoc()) }, "",
			[]string{"Q3 _Plan_ & _Notes_.html"},
			[]string{"<h1>Quarterly plan</h1>", "<li>Hire two engineers</li>"}},
		{"sheet html zip", func(w io.Writer) error { return WorkbookHTMLZip(w, sampleWorkbook()) }, "",
			[]string{"Summary.html", "Q1.html", "Heads_Count.html", "resources/sheet.css"},
			[]string{"<td>Coffee, beans</td>", "<td>Jan</td>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := render(t, tt.fn)
			names, text, err := CheckZip(b, tt.mime)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range tt.wantNames {
				if !slices.Contains(names, n) {
					t.Errorf("entries %v lack %q", names, n)
				}
			}
			for _, want := range tt.wantText {
				if !strings.Contains(text, want) {
					t.Errorf("text lacks %q; got %q", want, text)
				}
			}
		})
	}
}

func TestCheckZipRejectsCompressedMimetype(t *testing.T) {
	// A DOCX has no stored mimetype entry, so asking for one must fail.
	b := render(t, func(w io.Writer) error { return DocDOCX(w, sampleDoc()) })
	if _, _, err := CheckZip(b, MimeODT); err == nil {
		t.Fatal("CheckZip accepted a container without a stored mimetype")
	}
}

func TestDocTextFormats(t *testing.T) {
	txt := string(render(t, func(w io.Writer) error { return DocTXT(w, sampleDoc()) }))
	if !strings.HasPrefix(txt, "\ufeffQuarterly plan\r\n") {
		t.Errorf("txt should start with a BOM and CRLF lines, got %q", txt[:min(40, len(txt))])
	}
	if !strings.Contains(txt, "* Hire two engineers\r\n") {
		t.Errorf("txt bullets: %q", txt)
	}

	md := string(render(t, func(w io.Writer) error { return DocMD(w, sampleDoc()) }))
	for _, want := range []string{"# Quarterly plan\n", "- Hire two engineers\n- Ship the emulator\n\n## Risks", `Nothing \* major\_ yet.`} {
		if !strings.Contains(md, want) {
			t.Errorf("md lacks %q:\n%s", want, md)
		}
	}

	h := string(render(t, func(w io.Writer) error { return DocHTML(w, sampleDoc()) }))
	for _, want := range []string{"<title>Q3 &lt;Plan&gt; &amp; &#34;Notes&#34;</title>", "<ul>\n<li>Hire two engineers</li>", "</ul>\n<h2>Risks</h2>"} {
		if !strings.Contains(h, want) {
			t.Errorf("html lacks %q:\n%s", want, h)
		}
	}

	rtf := string(render(t, func(w io.Writer) error { return DocRTF(w, sampleDoc()) }))
	if !strings.HasPrefix(rtf, `{\rtf1`) || strings.Count(rtf, "{")-strings.Count(rtf, `\{`) != strings.Count(rtf, "}")-strings.Count(rtf, `\}`) {
		t.Errorf("rtf is not a balanced group: %s", rtf)
	}
	for _, want := range []string{`Z\u252?rich`, `\\ up`, `\u26085?\u26412?`} {
		if !strings.Contains(rtf, want) {
			t.Errorf("rtf lacks %q:\n%s", want, rtf)
		}
	}
}

func TestTabCSVAndTSV(t *testing.T) {
	tab := sampleWorkbook().Tabs[1]
	b := render(t, func(w io.Writer) error { return TabCSV(w, tab) })
	if !bytes.Contains(b, []byte("Month,Spend\r\n")) {
		t.Errorf("csv lines should end in CRLF: %q", b)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(rows, tab.Rows, slices.Equal) {
		t.Errorf("csv round trip = %q, want %q", rows, tab.Rows)
	}
	tsv := string(render(t, func(w io.Writer) error { return TabTSV(w, tab) }))
	if want := "Month\tSpend\r\nJan\t007\r\nLine break\ttab here\r\n"; tsv != want {
		t.Errorf("tsv = %q, want %q", tsv, want)
	}
}

func TestImagesDecodeAndCarryText(t *testing.T) {
	d := sampleDeck()
	pngBytes := render(t, func(w io.Writer) error { return DeckPNG(w, d) })
	if _, err := png.Decode(bytes.NewReader(pngBytes)); err != nil {
		t.Fatalf("png: %v", err)
	}
	if !bytes.Contains(pngBytes, []byte("tEXtDescription\x00Welcome\nAgenda")) {
		t.Error("png lacks the first slide's text chunk")
	}
	if bytes.Contains(pngBytes, []byte("Timeline")) {
		t.Error("png export carries more than the first slide")
	}
	jpg := render(t, func(w io.Writer) error { return DrawingJPEG(w, Drawing{Title: "Org", Lines: []string{"CEO"}}) })
	if _, err := jpeg.Decode(bytes.NewReader(jpg)); err != nil {
		t.Fatalf("jpeg: %v", err)
	}
	if !bytes.Contains(jpg, []byte("Org\nCEO")) {
		t.Error("jpeg lacks its comment")
	}
	svg := render(t, func(w io.Writer) error { return DrawingSVG(w, Drawing{Title: "A & B", Lines: []string{"<x>"}}) })
	text, err := xmlCharData(svg)
	if err != nil {
		t.Fatalf("svg: %v", err)
	}
	if !strings.Contains(text, "A & B") || !strings.Contains(text, "<x>") {
		t.Errorf("svg text = %q", text)
	}
}

func TestLimitWriterStopsRendering(t *testing.T) {
	lw := &LimitWriter{Limit: 100}
	err := DocPDF(lw, sampleDoc())
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("err = %v, want ErrLimit", err)
	}
	var exact bytes.Buffer
	if err := DocTXT(&exact, sampleDoc()); err != nil {
		t.Fatal(err)
	}
	at := &LimitWriter{Limit: int64(exact.Len())}
	if err := DocTXT(at, sampleDoc()); err != nil {
		t.Errorf("output of exactly the limit: %v", err)
	}
	over := &LimitWriter{Limit: int64(exact.Len() - 1)}
	if err := DocTXT(over, sampleDoc()); !errors.Is(err, ErrLimit) {
		t.Errorf("one byte over the limit: err = %v", err)
	}
}

func TestWrap(t *testing.T) {
	tests := []struct {
		in    string
		width int
		want  []string
	}{
		{"", 10, []string{""}},
		{"short", 10, []string{"short"}},
		{"hello world again", 11, []string{"hello world", "again"}},
		{"hello world again", 10, []string{"hello", "world", "again"}},
		{"abcdefghijkl", 5, []string{"abcde", "fghij", "kl"}},
		{"ünïcödé wörds", 7, []string{"ünïcödé", "wörds"}},
	}
	for _, tt := range tests {
		if got := wrap(tt.in, tt.width); !slices.Equal(got, tt.want) {
			t.Errorf("wrap(%q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
		}
	}
}

func TestParagraphNotationRoundTrips(t *testing.T) {
	for _, line := range []string{"# H1", "## H2", "### H3", "- item", "plain", "#nospace"} {
		if got := FormatParagraph(ParseParagraph(line)); got != line {
			t.Errorf("round trip %q = %q", line, got)
		}
	}
}

func TestColumnName(t *testing.T) {
	for c, want := range map[int]string{0: "A", 25: "Z", 26: "AA", 27: "AB", 701: "ZZ", 702: "AAA"} {
		if got := ColumnName(c); got != want {
			t.Errorf("ColumnName(%d) = %q, want %q", c, got, want)
		}
	}
}

func TestPDFInfoTitleIsUTF16WhenNotASCII(t *testing.T) {
	if got := pdfTextString("Plan (v2)"); got != `(Plan \(v2\))` {
		t.Errorf("ASCII title = %s", got)
	}
	if got := pdfTextString("Zürich €"); got != "<FEFF005A00FC0072006900630068002020AC>" {
		t.Errorf("non-ASCII title = %s", got)
	}
	b := render(t, func(w io.Writer) error { return DocPDF(w, Doc{Title: "日本", Body: ParagraphsOf()}) })
	if !bytes.Contains(b, []byte("/Title <FEFF65E5672C>")) {
		t.Error("info dictionary lacks the UTF-16 title")
	}
}
