package mimemsg

import (
	"html"
	"net"
	"net/url"
	"strings"
	"unicode"
)

// maxLinkURL bounds a link's URL; Drive's are under 200 characters.
const maxLinkURL = 2048

// Link is a file sent as a link in the body (a native Google file, or a
// file too large to attach).
type Link struct {
	Name string // shown to the reader
	URL  string // https only
}

// AddLinks appends a section listing links to the text and HTML bodies:
// a line "Name: URL" each in the text, a list of <a href> in the HTML
// (names and URLs escaped; inserted before </body> when there is one). An
// empty HTML body stays empty; an empty text body gets just the list.
// Every URL must be an absolute https URL without user info, spaces,
// control characters or characters RFC 3986 does not allow; otherwise the
// error is an *InputError.
func AddLinks(text, htmlBody string, links []Link) (newText, newHTML string, err error) {
	if len(links) == 0 {
		return text, htmlBody, nil
	}
	var tb, hb strings.Builder
	hb.WriteString(`<div style="margin-top:1em">`)
	for _, l := range links {
		if err := checkLinkURL(l.URL); err != nil {
			return "", "", err
		}
		name := strings.Join(strings.FieldsFunc(l.Name, func(r rune) bool {
			return unicode.IsControl(r) || unicode.IsSpace(r)
		}), " ")
		if name == "" {
			name = l.URL
		}
		tb.WriteString(name + ": " + l.URL + "\n")
		hb.WriteString(`<div><a href="` + html.EscapeString(l.URL) + `">` + html.EscapeString(name) + "</a></div>")
	}
	hb.WriteString("</div>")

	newText = tb.String()
	if strings.TrimSpace(text) != "" {
		newText = strings.TrimRight(text, "\r\n") + "\n\n" + newText
	}
	newHTML = htmlBody
	if strings.TrimSpace(htmlBody) != "" {
		newHTML = AppendHTML(htmlBody, hb.String())
	}
	return newText, newHTML, nil
}

// AppendHTML adds fragment at the end of the HTML body htmlBody: before
// its </body> when it has one, else after it.
func AppendHTML(htmlBody, fragment string) string {
	if i := lastIndexFold(htmlBody, "</body>"); i >= 0 {
		return htmlBody[:i] + fragment + htmlBody[i:]
	}
	return htmlBody + fragment
}

// checkLinkURL accepts absolute https URLs only.
func checkLinkURL(raw string) error {
	bad := func(why string) error {
		return inputErr("link", "the link %s cannot be put in the message (%s); links must be https URLs such as a file's Drive web link", quoteInput(raw), why)
	}
	if len(raw) > maxLinkURL {
		return bad("it is too long")
	}
	if strings.ContainsFunc(raw, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) {
		return bad("it contains spaces or control characters")
	}
	if strings.ContainsAny(raw, "\"<>\\`{}|^") {
		return bad("it contains characters a URL may not hold unescaped")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return bad("it is not a URL")
	case !strings.EqualFold(u.Scheme, "https") && !(strings.EqualFold(u.Scheme, "http") && isLoopback(u.Hostname())):
		return bad("it is not https")
	case u.Host == "":
		return bad("it has no host")
	case u.User != nil:
		return bad("it carries a user name or password")
	}
	return nil
}

// isLoopback reports whether host is this machine: plain http links are
// allowed there, for the local emulator and --demo, whose Drive web links
// are on a loopback origin.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// lastIndexFold is strings.LastIndex, ignoring ASCII case.
func lastIndexFold(s, sub string) int {
	for i := len(s) - len(sub); i >= 0; i-- {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}
