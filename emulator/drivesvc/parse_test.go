package drivesvc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/emulator/internal/render"
)

func TestParseA1(t *testing.T) {
	tabs := []*tab{{id: 0, title: "Sheet1"}, {id: 5, title: "It's mine"}, {id: 6, title: "A1"}}
	tests := []struct {
		in   string
		want string // tab:startRow-endRow:startCol-endCol
	}{
		{"Sheet1!A1:C3", "Sheet1:0-3:0-3"},
		{"Sheet1", "Sheet1:0--1:0--1"},
		{"sheet1", "Sheet1:0--1:0--1"},
		{"B2:C", "Sheet1:1--1:1-3"},
		{"'It''s mine'!B:B", "It's mine:0--1:1-2"},
		{"'It''s mine'", "It's mine:0--1:0--1"},
		{"Sheet1!3:4", "Sheet1:2-4:0--1"},
		{"Sheet1!AA10", "Sheet1:9-10:26-27"},
		{"A1", "A1:0--1:0--1"}, // a tab named A1 wins over the cell
		{"'A1'!B2", "A1:1-2:1-2"},
	}
	for _, tt := range tests {
		g, err := parseA1(tt.in, tabs)
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		got := fmt.Sprintf("%s:%d-%d:%d-%d", g.tab.title, g.startRow, g.endRow, g.startCol, g.endCol)
		if got != tt.want {
			t.Errorf("%q = %s, want %s", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{"Nope!A1", "Sheet1!A0", "Sheet1!", "Sheet1!1A", "Sheet1!A1:B0", "'unterminated!A1", "Sheet1!A99999999999", "Sheet1!ZZZZZZZ1"} {
		if _, err := parseA1(bad, tabs); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if got := quoteTitle("It's mine"); got != "'It''s mine'" {
		t.Errorf("quoteTitle = %s", got)
	}
	if got := quoteTitle("Sheet1"); got != "Sheet1" {
		t.Errorf("quoteTitle(Sheet1) = %s", got)
	}
	if got := quoteTitle("B2"); got != "'B2'" {
		t.Errorf("a title that reads as a cell must be quoted: %s", got)
	}
}

func TestTokenizeEscapes(t *testing.T) {
	toks, err := tokenize(`name = 'it\'s a \\ path' and trashed!=false`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range toks {
		got = append(got, tk.text)
	}
	if fmt.Sprintf("%q", got) != `["name" "=" "it's a \\ path" "and" "trashed" "!=" "false"]` {
		t.Errorf("tokens %q", got)
	}
	for _, bad := range []string{`'a\`, `'a\x'`, `name ! 'a'`, "name = 'a' ; x", "'open"} {
		if _, err := tokenize(bad); err == nil {
			t.Errorf("%q tokenized", bad)
		}
	}
}

func TestWordPrefix(t *testing.T) {
	tests := []struct {
		hay, needle string
		want        bool
	}{
		{"helloworld", "hello", true},
		{"helloworld", "world", false},
		{"hello world", "world", true},
		{"q3-report.pdf", "report", true},
		{"q3-report.pdf", ".pdf", true}, // a needle that starts with punctuation matches anywhere
		{"zürich office", "zür", true},
		{"abc", "", true},
		{"abcabc", "cab", false},
		{"ab ab", "b", false},
	}
	for _, tt := range tests {
		if got := wordPrefix(tt.hay, tt.needle); got != tt.want {
			t.Errorf("wordPrefix(%q, %q) = %v", tt.hay, tt.needle, got)
		}
	}
}

func TestHTMLParagraphs(t *testing.T) {
	var got []string
	err := htmlParagraphs(strings.NewReader(`<!DOCTYPE html><html><head><title>T</title><script>var x = "<p>no</p>";</script></head>
<body><h1>Big&nbsp;title</h1><!-- <p>hidden</p> --><div>Line <b>bold</b>
 text</div><ul><li>one</li><li>two &amp; three</li></ul><h4>small</h4><p>end</p></body></html>`), func(p render.Paragraph) error {
		got = append(got, render.FormatParagraph(p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `["# Big` + "\u00a0" + `title" "Line bold text" "- one" "- two & three" "### small" "end"]`
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", []string{"# Big\u00a0title", "Line bold text", "- one", "- two & three", "### small", "end"}) {
		t.Errorf("paragraphs %q, want %s", got, want)
	}
	big := strings.NewReader(strings.Repeat("a", maxHTMLConvert+1))
	if err := htmlParagraphs(big, func(render.Paragraph) error { return nil }); err != errTooLargeToConvert {
		t.Errorf("oversized HTML: %v", err)
	}
}

func TestTextParagraphsBoundsLongLines(t *testing.T) {
	long := strings.Repeat("é", maxParagraph) // 2 bytes each: twice the bound
	var lens []int
	err := textParagraphs(strings.NewReader("\ufeffshort\r\n"+long+"\nlast"), true, func(p render.Paragraph) error {
		lens = append(lens, len(p.Text))
		if !strings.HasPrefix(p.Text, "short") && !strings.HasPrefix(p.Text, "last") && strings.ContainsRune(p.Text, '\ufffd') {
			t.Error("a cut split a rune")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lens) != 4 || lens[0] != 5 || lens[1] != maxParagraph || lens[2] != maxParagraph || lens[3] != 4 {
		t.Errorf("paragraph lengths %v", lens)
	}
}

func TestDocBodyRoundTripsStylesAndSplitsHugeParagraphs(t *testing.T) {
	blobs := newTestBlobs(t)
	body, err := newDocBody(blobs)
	if err != nil {
		t.Fatal(err)
	}
	in := []render.Paragraph{{Style: render.Heading2, Text: "Title"}, {Text: "# not a heading"}, {Style: render.Bullet, Text: "item"}, {Text: "line\nbreak"}}
	for _, p := range in {
		if err := body.add(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := body.add(render.Paragraph{Text: strings.Repeat("x", maxParagraph+10)}); err != nil {
		t.Fatal(err)
	}
	b, index, err := body.commit()
	if err != nil {
		t.Fatal(err)
	}
	var out []render.Paragraph
	if err := docSource(blobs, b.ID)(func(p render.Paragraph) error { out = append(out, p); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(out) != 6 || out[0] != in[0] || out[1] != in[1] || out[2] != in[2] || out[3].Text != "line break" || len(out[4].Text) != maxParagraph || len(out[5].Text) != 10 {
		t.Errorf("round trip: %d paragraphs %+v", len(out), out[:min(4, len(out))])
	}
	if !strings.Contains(index, "# not a heading") {
		t.Errorf("index %q", index[:40])
	}
}

func TestSlidesFromText(t *testing.T) {
	got := slidesFromText("\ufeff# Welcome\nAgenda\n\n---\n\nNext steps\n- ship\n\n---\n---\n")
	if len(got) != 2 || got[0].title != "Welcome" || fmt.Sprint(got[0].body) != "[Agenda]" || got[1].title != "Next steps" || fmt.Sprint(got[1].body) != "[- ship]" {
		t.Errorf("slides %+v", got)
	}
}

func TestCSVTabCellLimit(t *testing.T) {
	const limit = 3000
	at := strings.Repeat(strings.Repeat("a,", 9)+"a\n", limit/10)
	if _, err := csvTabLimit(strings.NewReader(at), "t", ',', limit); err != nil {
		t.Errorf("exactly the cell limit: %v", err)
	}
	if _, err := csvTabLimit(strings.NewReader(at+"a\n"), "t", ',', limit); err != errTooManyCells {
		t.Errorf("one cell past the limit: %v", err)
	}
}

func newTestBlobs(t *testing.T) *core.Blobs {
	t.Helper()
	b, err := core.NewBlobs("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func TestResourceKeysHeader(t *testing.T) {
	k := parseResourceKeys([]string{"a/1, b/2,bad,/x,c/", "d/4"})
	if fmt.Sprint(k) != "map[a:1 b:2 d:4]" {
		t.Errorf("keys %v", k)
	}
	var many []byte
	for i := range maxResourceKeys + 5 {
		many = fmt.Appendf(many, "id%d/k,", i)
	}
	if got := len(parseResourceKeys([]string{string(many)})); got != maxResourceKeys {
		t.Errorf("read %d pairs, want the bound %d", got, maxResourceKeys)
	}
}
