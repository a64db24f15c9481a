package compose

import (
	"net/url"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/drivemail/drivemail/mimemsg"
)

// A Gmail signature is HTML that Gmail's web UI adds to new mail; mail
// sent through the API gets none, so drivemail adds it itself, where the
// web UI puts it, in the shape Gmail writes (as seen in mail Gmail sent
// to public mailing lists):
//
//   - at the end of each body, below the message's own text, its links
//     and a forward's quoted original: Gmail's default ("Insert this
//     signature before quoted text in replies" is off until the user
//     turns it on);
//   - in the text body after a line "-- " (dash, dash, space: the
//     long-standing signature separator, which mail programs use to tell
//     a signature from the message), as its plain-text rendering;
//   - in the HTML body after <span class="gmail_signature_prefix">-- </span>,
//     in a <div class="gmail_signature">, the signature's HTML made
//     well-formed and stripped of scripts, styles and event handlers.
//
// A message carries one signature: the new one, once in each body. A
// forward's quoted original stays as it was, its own sign-off included.

// signaturePrefix is what Gmail writes before the signature in HTML.
const signaturePrefix = `<div><br clear="all"></div><div><br></div><span class="gmail_signature_prefix">-- </span><br>` +
	`<div dir="ltr" class="gmail_signature" data-smartmail="gmail_signature">`

// signature is an address's Gmail signature, ready to add: its cleaned
// HTML and its text rendering. The zero value adds nothing.
type signature struct{ html, text string }

// newSignature prepares the Gmail signature sigHTML; one that shows
// nothing (no text, no image) is the zero signature.
func newSignature(sigHTML string) signature {
	clean := cleanSignature(sigHTML)
	plain := signatureText(clean)
	if plain == "" && !strings.Contains(clean, "<img") {
		return signature{}
	}
	return signature{html: clean, text: plain}
}

// withSignature adds sig to the end of each body; a message with
// neither body gets both, holding just the signature (the text one only
// when the signature has text).
func withSignature(text, htmlBody string, sig signature) (string, string) {
	if sig.html == "" {
		return text, htmlBody
	}
	noBody := strings.TrimSpace(text) == "" && strings.TrimSpace(htmlBody) == ""
	switch {
	case sig.text == "":
	case noBody:
		text = "-- \n" + sig.text + "\n"
	case strings.TrimSpace(text) != "":
		text = strings.TrimRight(text, "\r\n") + "\n\n-- \n" + sig.text + "\n"
	}
	if noBody || strings.TrimSpace(htmlBody) != "" {
		htmlBody = mimemsg.AppendHTML(htmlBody, signaturePrefix+sig.html+"</div>")
	}
	return text, htmlBody
}

// droppedElements are the elements a signature loses with their
// contents: nothing a mail reader should run or restyle the message with.
var droppedElements = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Iframe: true, atom.Object: true, atom.Embed: true,
	atom.Form: true, atom.Input: true, atom.Button: true, atom.Textarea: true, atom.Select: true,
	atom.Link: true, atom.Meta: true, atom.Base: true, atom.Title: true, atom.Head: true, atom.Frame: true, atom.Frameset: true,
}

// cleanSignature is the signature's HTML, parsed as the contents of a
// <div> and written back: tags balanced (an unclosed one cannot swallow
// what follows), without the droppedElements, on* event attributes, or
// links and sources other than http, https, mailto, tel and cid.
func cleanSignature(sig string) string {
	ctx := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := html.ParseFragment(strings.NewReader(sig), ctx)
	if err != nil {
		return html.EscapeString(sig)
	}
	var b strings.Builder
	for _, n := range nodes {
		scrub(n)
		if n.Type == html.ElementNode && droppedElements[n.DataAtom] || n.Type == html.CommentNode {
			continue
		}
		if err := html.Render(&b, n); err != nil {
			return html.EscapeString(sig)
		}
	}
	return b.String()
}

// scrub removes what cleanSignature drops from n's attributes and
// children, recursively.
func scrub(n *html.Node) {
	attrs := n.Attr[:0]
	for _, a := range n.Attr {
		key := strings.ToLower(a.Key)
		switch {
		case strings.HasPrefix(key, "on"), key == "srcdoc", key == "formaction":
			continue
		case (key == "href" || key == "src" || key == "background" || key == "action") && !safeURL(a.Val):
			continue
		}
		attrs = append(attrs, a)
	}
	n.Attr = attrs
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode && droppedElements[c.DataAtom] || c.Type == html.CommentNode {
			n.RemoveChild(c)
		} else {
			scrub(c)
		}
		c = next
	}
}

// safeURL reports whether a link or source in a signature may stay.
func safeURL(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "mailto", "tel", "cid":
		return true
	}
	return false
}

// blockElements end a line in the signature's text rendering.
var blockElements = map[atom.Atom]bool{
	atom.Div: true, atom.P: true, atom.Br: true, atom.Li: true, atom.Tr: true, atom.Table: true,
	atom.Ul: true, atom.Ol: true, atom.Blockquote: true, atom.Hr: true, atom.Pre: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
}

// signatureText is the plain-text rendering of a (cleaned) signature, as
// Gmail writes it into the text body: a line for each block, a link as
// its text with its address after it in angle brackets (once, when the
// text is not the address already), images left out, entities decoded,
// spaces collapsed, control characters dropped.
func signatureText(sig string) string {
	var (
		out  strings.Builder
		line strings.Builder
		href []string // the open links' addresses, innermost last
		text []string // each open link's text so far
	)
	// endLine ends the line being written: always at a <br>, which may
	// make an empty one, and at a block's edge only after some text.
	endLine := func(always bool) {
		l := strings.Join(strings.Fields(line.String()), " ")
		if l == "" && !always {
			return
		}
		line.Reset()
		out.WriteString(l)
		out.WriteByte('\n')
	}
	z := html.NewTokenizer(strings.NewReader(sig))
	for {
		switch z.Next() {
		case html.ErrorToken:
			endLine(false)
			return tidyLines(out.String())
		case html.TextToken:
			t := strings.Map(dropControl, string(z.Text()))
			line.WriteString(t)
			if len(text) > 0 {
				text[len(text)-1] += t
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if blockElements[a] {
				endLine(a == atom.Br)
			}
			if a == atom.A {
				href, text = append(href, linkAddress(z)), append(text, "")
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if a == atom.A && len(href) > 0 {
				h, t := href[len(href)-1], strings.TrimSpace(text[len(text)-1])
				href, text = href[:len(href)-1], text[:len(text)-1]
				if h != "" && !sameAddress(t, h) {
					line.WriteString(" <" + h + ">")
				}
			}
			if blockElements[a] {
				endLine(false)
			}
		}
	}
}

// linkAddress is the href of the <a> tag the tokenizer is on, "" for none.
func linkAddress(z *html.Tokenizer) string {
	for {
		k, v, more := z.TagAttr()
		if string(k) == "href" {
			return strings.Map(dropControl, strings.TrimSpace(string(v)))
		}
		if !more {
			return ""
		}
	}
}

// sameAddress reports whether a link's text already says where it goes:
// the URL itself, or the address of a mailto: or tel: link.
func sameAddress(text, href string) bool {
	t := strings.TrimSuffix(strings.TrimSpace(text), "/")
	h := strings.TrimSuffix(href, "/")
	for _, scheme := range []string{"mailto:", "tel:"} {
		if len(h) > len(scheme) && strings.EqualFold(h[:len(scheme)], scheme) {
			h = h[len(scheme):]
		}
	}
	return strings.EqualFold(t, h) || strings.EqualFold(t, href)
}

// tidyLines trims each line and keeps at most one blank line in a row,
// none at either end.
func tidyLines(s string) string {
	var out []string
	blank := false
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			blank = len(out) > 0
			continue
		}
		if blank {
			out = append(out, "")
		}
		blank = false
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// dropControl removes control characters but for tabs and line breaks,
// which the rendering treats as spaces.
func dropControl(r rune) rune {
	if r == '\t' || r == '\n' || r == '\r' {
		return ' '
	}
	if unicode.IsControl(r) {
		return -1
	}
	return r
}
