package mimemsg

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestCIDRefs(t *testing.T) {
	tests := []struct {
		html string
		want []string
	}{
		{`<img src="cid:logo.png">`, []string{"logo.png"}},
		{`<img src='cid:logo.png'>`, []string{"logo.png"}},
		{`<img src=cid:logo.png>`, []string{"logo.png"}},
		{`<img src=cid:logo.png alt=x>`, []string{"logo.png"}},
		{`<IMG SRC="CID:Logo.PNG">`, []string{"Logo.PNG"}},
		{`<img src="Cid:my%20logo.png">`, []string{"my logo.png"}},
		{`<img src="cid:my logo.png">`, []string{"my logo.png"}},
		{`<img src="cid:a&amp;b.png">`, []string{"a&b.png"}},
		{`<img src="cid:%E5%9B%BE.png">`, []string{"图.png"}},
		{`<img src="cid:图.png">`, []string{"图.png"}},
		{`<img src="cid:100%.png">`, []string{"100%.png"}},
		{`<div style="background:url(cid:bg.jpg)">`, []string{"bg.jpg"}},
		{`<div style="background: url( cid:bg.jpg )">`, []string{"bg.jpg"}},
		{`<div style='background:url("cid:bg.jpg")'>`, []string{"bg.jpg"}},
		{`<style>p { background: url('cid:bg.jpg') }</style>`, []string{"bg.jpg"}},
		{`<td background="cid:t.gif">`, []string{"t.gif"}},
		{`<img src="cid:a.png"><img src="cid:b.png"><img src="cid:a.png">`, []string{"a.png", "b.png"}},
		{`<img src="cid: spaced.png ">`, []string{"spaced.png"}},
		{`<p>Write cid:logo.png in the source.</p>`, nil},
		{`cid:start.png`, nil},
		{`<img src="cid:">`, nil},
		{`<img src="https://example.com/cid:x.png">`, nil},
		{`<img src="cid:unterminated.png`, []string{"unterminated.png"}},
		{``, nil},
	}
	for _, tt := range tests {
		if got := CIDRefs(tt.html); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("CIDRefs(%q) = %q, want %q", tt.html, got, tt.want)
		}
	}
}

func TestRewriteCIDs(t *testing.T) {
	ids := map[string]string{"logo.png": "ii_1@drivemail", "my logo.png": "ii_2@drivemail"}
	tests := []struct{ in, want string }{
		{`<img src="cid:logo.png">`, `<img src="cid:ii_1@drivemail">`},
		{`<img src=CID:logo.png alt="x">`, `<img src=CID:ii_1@drivemail alt="x">`},
		{`<img src="cid:my%20logo.png"><img src="cid:my logo.png">`, `<img src="cid:ii_2@drivemail"><img src="cid:ii_2@drivemail">`},
		{`<div style="background:url(cid:logo.png)">`, `<div style="background:url(cid:ii_1@drivemail)">`},
		{`<img src="cid:other.png">`, `<img src="cid:other.png">`},
		{`no references`, `no references`},
		{`<p>cid:logo.png</p><img src="cid:logo.png">`, `<p>cid:logo.png</p><img src="cid:ii_1@drivemail">`},
	}
	for _, tt := range tests {
		if got := RewriteCIDs(tt.in, ids); got != tt.want {
			t.Errorf("RewriteCIDs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNewContentID(t *testing.T) {
	re := regexp.MustCompile(`^ii_[0-9a-f]{16}@drivemail$`)
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		id := NewContentID()
		if !re.MatchString(id) || seen[id] {
			t.Fatalf("NewContentID = %q (seen %v)", id, seen[id])
		}
		seen[id] = true
		if _, err := normContentID(id); err != nil {
			t.Fatalf("its own id is refused: %v", err)
		}
	}
}

func TestAddLinks(t *testing.T) {
	links := []Link{
		{Name: "Q3 <Report> & Plan", URL: "https://docs.google.com/document/d/abc/edit?usp=drivesdk&x=1"},
		{Name: "Budget\r\n2024", URL: "https://docs.google.com/spreadsheets/d/def/edit"},
	}
	text, html, err := AddLinks("Hello,\nsee below.\n", "<html><body><p>Hello</p></BODY></html>", links)
	if err != nil {
		t.Fatal(err)
	}
	wantText := "Hello,\nsee below.\n\nQ3 <Report> & Plan: https://docs.google.com/document/d/abc/edit?usp=drivesdk&x=1\nBudget 2024: https://docs.google.com/spreadsheets/d/def/edit\n"
	if text != wantText {
		t.Errorf("text = %q\nwant   %q", text, wantText)
	}
	wantHTML := `<html><body><p>Hello</p><div style="margin-top:1em"><div><a href="https://docs.google.com/document/d/abc/edit?usp=drivesdk&amp;x=1">Q3 &lt;Report&gt; &amp; Plan</a></div><div><a href="https://docs.google.com/spreadsheets/d/def/edit">Budget 2024</a></div></div></BODY></html>`
	if html != wantHTML {
		t.Errorf("html = %q\nwant   %q", html, wantHTML)
	}

	text, html, err = AddLinks("", "", links[:1])
	if err != nil || html != "" || !strings.HasPrefix(text, "Q3 <Report> & Plan: https://") {
		t.Errorf("empty bodies: %q %q %v", text, html, err)
	}
	text, html, _ = AddLinks("t", "<p>h</p>", []Link{{URL: "https://x.example/a"}})
	if text != "t\n\nhttps://x.example/a: https://x.example/a\n" || !strings.HasSuffix(html, `<a href="https://x.example/a">https://x.example/a</a></div></div>`) {
		t.Errorf("a link without a name: %q %q", text, html)
	}
	if text, html, err := AddLinks("t", "h", nil); text != "t" || html != "h" || err != nil {
		t.Errorf("no links changed the bodies")
	}

	for _, bad := range []string{
		"http://docs.google.com/x", "javascript:alert(1)", "https://", "//docs.google.com/x",
		"https://user:pw@docs.google.com/x", "https://docs.google.com/x\"><script>",
		"https://docs.google.com/a b", "https://docs.google.com/\r\nx", "https://x.example/" + strings.Repeat("a", maxLinkURL),
	} {
		_, _, err := AddLinks("t", "h", []Link{{Name: "n", URL: bad}})
		var ie *InputError
		if !errorsAs(err, &ie) || ie.Field != "link" {
			t.Errorf("AddLinks accepted %q (%v)", bad, err)
		}
	}
}
