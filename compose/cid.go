package compose

import (
	"html"
	"net/url"
	"strings"
)

// cidRef is one cid: reference in an HTML body.
type cidRef struct {
	start, end int    // byte span of the value after "cid:"
	name       string // the value, %-decoded and entity-decoded
}

// findCIDs finds cid:NAME references where HTML puts a URL: right after a
// quote, an = or url( (src="cid:logo.png", src=cid:x, url('cid:x')).
// Prose that happens to contain "cid:" is left alone.
func findCIDs(body string) []cidRef {
	var refs []cidRef
	lower := strings.ToLower(body)
	for i := 0; ; {
		j := strings.Index(lower[i:], "cid:")
		if j < 0 {
			return refs
		}
		at := i + j
		i = at + len("cid:")
		if !urlContext(body[:at]) {
			continue
		}
		end := i
		for end < len(body) && !strings.ContainsRune("\"' \t\r\n)><", rune(body[end])) {
			end++
		}
		if end == i {
			continue
		}
		raw := body[i:end]
		name := html.UnescapeString(raw)
		if dec, err := url.PathUnescape(name); err == nil {
			name = dec
		}
		refs = append(refs, cidRef{start: i, end: end, name: name})
		i = end
	}
}

// urlContext reports whether the text before a "cid:" ends where a URL
// value starts: a quote, =, or ( after optional white space.
func urlContext(before string) bool {
	t := strings.TrimRight(before, " \t\r\n")
	if t == "" {
		return false
	}
	switch t[len(t)-1] {
	case '"', '\'', '=', '(':
		return true
	}
	return false
}

// cidRefs returns the distinct names body references as cid:NAME, in order
// of first appearance (the shape of mimemsg.CIDRefs).
func cidRefs(body string) []string {
	var names []string
	seen := map[string]bool{}
	for _, r := range findCIDs(body) {
		if !seen[r.name] {
			seen[r.name] = true
			names = append(names, r.name)
		}
	}
	return names
}

// rewriteCIDs points each cid:NAME with NAME in ids at cid:ids[NAME],
// leaving the rest of the body as written (the shape of
// mimemsg.RewriteCIDs).
func rewriteCIDs(body string, ids map[string]string) string {
	refs := findCIDs(body)
	var b strings.Builder
	last := 0
	for _, r := range refs {
		id, ok := ids[r.name]
		if !ok || id == body[r.start:r.end] {
			continue
		}
		b.WriteString(body[last:r.start])
		b.WriteString(id)
		last = r.end
	}
	if last == 0 {
		return body
	}
	b.WriteString(body[last:])
	return b.String()
}
