package mimemsg

import (
	"crypto/rand"
	"encoding/hex"
	"html"
	"net/url"
	"strings"
)

// cidRef is one cid: reference in an HTML body: html[start:end] is the
// raw NAME after "cid:".
type cidRef struct {
	start, end int
	name       string // decoded
}

// scanCIDs finds the cid: references of an HTML body. A reference is
// "cid:" (any case) that starts an attribute value or a CSS url():
// preceded by a quote, '=', or '(' (spaces allowed after the '('). Inside
// quotes the name runs to the closing quote, so a file name with spaces
// works; unquoted, it ends at white space, '>' or, in url(), ')'.
func scanCIDs(s string) []cidRef {
	var refs []cidRef
	for i := 1; i+4 <= len(s); i++ {
		if !strings.EqualFold(s[i:i+4], "cid:") {
			continue
		}
		prev := s[i-1]
		if prev == ' ' || prev == '\t' || prev == '\n' || prev == '\r' {
			j := i - 1
			for j > 0 && strings.IndexByte(" \t\r\n", s[j]) >= 0 {
				j--
			}
			if s[j] != '(' {
				continue
			}
			prev = '('
		}
		var stop string
		switch prev {
		case '"', '\'':
			stop = string(prev)
		case '=':
			stop = " \t\r\n>\"'`"
		case '(':
			stop = " \t\r\n)\"'"
		default:
			continue
		}
		start := i + 4
		end := start
		for end < len(s) && strings.IndexByte(stop, s[end]) < 0 {
			end++
		}
		if prev == '"' || prev == '\'' {
			for end > start && strings.IndexByte(" \t\r\n", s[end-1]) >= 0 {
				end--
			}
		}
		if name := strings.TrimSpace(s[start:end]); name != "" {
			refs = append(refs, cidRef{start: start, end: end, name: decodeCID(name)})
		}
		i = end
	}
	return refs
}

// decodeCID undoes HTML character references, then %-encoding.
func decodeCID(raw string) string {
	s := html.UnescapeString(raw)
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// CIDRefs returns the distinct names an HTML body references as
// "cid:NAME" — in src="cid:…", src='cid:…', src=cid:…, url(cid:…),
// url("cid:…") — in order of first appearance. The scheme is matched in
// any case; NAME is HTML-unescaped (&amp;) and then %-decoded, so
// "cid:my%20logo.png" is "my logo.png"; in quotes it may contain spaces.
// A "cid:" in running text is not a reference.
func CIDRefs(html string) []string {
	var names []string
	seen := map[string]bool{}
	for _, r := range scanCIDs(html) {
		if !seen[r.name] {
			seen[r.name] = true
			names = append(names, r.name)
		}
	}
	return names
}

// RewriteCIDs returns html with every cid: reference whose decoded NAME
// is a key of ids pointing at cid:ids[NAME] instead (the ids come from
// NewContentID). Other references are left as they are.
func RewriteCIDs(html string, ids map[string]string) string {
	var b strings.Builder
	last := 0
	for _, r := range scanCIDs(html) {
		id, ok := ids[r.name]
		if !ok {
			continue
		}
		b.WriteString(html[last:r.start])
		b.WriteString(id)
		last = r.end
	}
	if last == 0 {
		return html
	}
	b.WriteString(html[last:])
	return b.String()
}

// NewContentID returns a fresh Content-ID for an inline part, without
// angle brackets: "ii_<16 hex digits>@drivemail", safe in a header and in
// a cid: URL whatever the file is called.
func NewContentID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "ii_" + hex.EncodeToString(b[:]) + "@drivemail"
}
