package compose

import (
	"strings"
	"testing"
)

// gmailSignature is the shape of a signature Gmail's settings page
// writes: nested divs, a mailto: link whose text is the address, a link
// split in two by the editor, an image in a link.
const gmailSignature = `<div dir="ltr"><div style="text-align:left"></div><div style="text-align:left">Ana Lima<br></div>` +
	`<div style="text-align:left">Finance &ndash; Acme &amp; Co</div>` +
	`<div><a href="mailto:ana@example.com" target="_blank">ana@example.com</a></div>` +
	`<div><a href="https://acme.example/ana">https://acme</a><a href="https://acme.example/ana">.example/ana</a></div>` +
	`<div><br></div><div><a href="https://acme.example"><img width="96" src="https://acme.example/logo.png"></a></div></div>`

func TestSignatureText(t *testing.T) {
	for _, tt := range []struct{ name, html, want string }{
		{"Gmail's shape", gmailSignature,
			"Ana Lima\nFinance – Acme & Co\nana@example.com\nhttps://acme <https://acme.example/ana>.example/ana <https://acme.example/ana>\n\n<https://acme.example>"},
		{"a link whose text is its address", `<a href="https://acme.example/">https://acme.example</a>`, "https://acme.example"},
		{"a tel: link", `<a href="tel:+15551234">+15551234</a>`, "+15551234"},
		{"paragraphs and lists", `<p>One</p><p>Two</p><ul><li>a</li><li>b</li></ul>`, "One\nTwo\na\nb"},
		{"spaces collapse", "<div>  Ana \t\n  Lima  </div>", "Ana Lima"},
		{"blank lines: one at most, none at the ends", `<br><br><div>A</div><div><br></div><div><br></div><div><br></div><div>B</div><br>`, "A\n\nB"},
		{"entities decoded, tags in text kept as text", `Q&amp;A &lt;b&gt; &#169;`, "Q&A <b> ©"},
		{"control characters dropped", "An\x00a\u0085 Lima", "Ana Lima"},
		{"scripts and styles are not text", cleanSignature(`<style>p{color:red}</style><script>alert(1)</script>Ana`), "Ana"},
		{"empty", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := signatureText(tt.html); got != tt.want {
				t.Errorf("signatureText(%q) =\n%q\nwant\n%q", tt.html, got, tt.want)
			}
		})
	}
}

func TestCleanSignature(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"kept as it is", `<div dir="ltr"><b>Ana</b> <a href="https://acme.example">Acme</a></div>`, `<div dir="ltr"><b>Ana</b> <a href="https://acme.example">Acme</a></div>`},
		{"an unclosed tag is closed", `<b>Ana`, `<b>Ana</b>`},
		{"a stray closing tag goes", `Ana</div></div><div>x`, `Ana<div>x</div>`},
		{"event handlers and javascript: links go", `<a href="javascript:steal()" onclick="x()" onMouseOver="y()">Ana</a>`, `<a>Ana</a>`},
		{"an image keeps its source", `<img src="https://acme.example/l.png" onerror="x()">`, `<img src="https://acme.example/l.png"/>`},
		{"a data: source goes", `<img src="data:image/png;base64,AAAA">`, `<img/>`},
		{"scripts, styles, frames, forms and comments go", `<script>a()</script><style>b{}</style><iframe src="https://x.example"></iframe><form><input></form><!-- c -->Ana`, `Ana`},
		{"nested too", `<div><span><script>a()</script>Ana</span></div>`, `<div><span>Ana</span></div>`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := cleanSignature(tt.in); got != tt.want {
				t.Errorf("cleanSignature(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestWithSignature(t *testing.T) {
	sig := newSignature(`<div dir="ltr">Ana Lima</div>`)
	htmlSig := signaturePrefix + `<div dir="ltr">Ana Lima</div></div>`
	for _, tt := range []struct {
		name               string
		text, html         string
		wantText, wantHTML string
		sig                signature
	}{
		{name: "text", text: "Hi Dana,\nthe report.\n\n", wantText: "Hi Dana,\nthe report.\n\n-- \nAna Lima\n", sig: sig},
		{name: "HTML", html: "<p>Hi</p>", wantHTML: "<p>Hi</p>" + htmlSig, sig: sig},
		{name: "both", text: "Hi", html: "<p>Hi</p>", wantText: "Hi\n\n-- \nAna Lima\n", wantHTML: "<p>Hi</p>" + htmlSig, sig: sig},
		{name: "an HTML document: before </BODY>", html: "<html><body><p>Hi</p></BODY></html>", wantHTML: "<html><body><p>Hi</p>" + htmlSig + "</BODY></html>", sig: sig},
		{name: "no body: both, with only the signature", wantText: "-- \nAna Lima\n", wantHTML: htmlSig, sig: sig},
		{name: "an image-only signature stays out of the text", text: "Hi", html: "<p>Hi</p>", wantText: "Hi",
			wantHTML: "<p>Hi</p>" + signaturePrefix + `<img src="https://acme.example/l.png"/></div>`, sig: newSignature(`<img src="https://acme.example/l.png">`)},
		{name: "no signature set", text: "Hi", html: "<p>Hi</p>", wantText: "Hi", wantHTML: "<p>Hi</p>", sig: newSignature(`<div><br></div>`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			gotText, gotHTML := withSignature(tt.text, tt.html, tt.sig)
			if gotText != tt.wantText || gotHTML != tt.wantHTML {
				t.Errorf("withSignature(%q, %q) =\n%q\n%q\nwant\n%q\n%q", tt.text, tt.html, gotText, gotHTML, tt.wantText, tt.wantHTML)
			}
			if n := strings.Count(gotText, "-- \n"); n > 1 {
				t.Errorf("the text has %d signature separators", n)
			}
		})
	}
}
