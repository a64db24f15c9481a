package gmailsvc

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Bounds on a search query.
const (
	maxQueryLen   = 2048
	maxQueryTerms = 50
)

// query is a parsed Gmail search (q), the subset drivemail and its tests
// use: from: to: cc: bcc: subject: in: label: is: has:attachment
// filename: rfc822msgid: larger: smaller: after: before: newer_than:
// older_than:, quoted phrases, a leading - to negate, and free words;
// "me" in from: to: cc: bcc: is the user. Like Gmail it never fails: an
// operator it does not know is searched as text.
type query struct {
	terms []term
	user  string    // whom "me" means
	now   time.Time // what newer_than: and older_than: count back from
}

type term struct {
	op, value string
	neg       bool
}

var queryOps = []string{"from", "to", "cc", "bcc", "subject", "in", "label", "is", "has", "filename", "rfc822msgid", "larger", "smaller", "after", "before",
	"newer_than", "older_than"}

func parseQuery(q string) query {
	if len(q) > maxQueryLen {
		q = q[:maxQueryLen]
	}
	var out query
	for _, tok := range splitQuery(q) {
		if len(out.terms) == maxQueryTerms {
			break
		}
		t := term{}
		if strings.HasPrefix(tok, "-") && len(tok) > 1 {
			t.neg, tok = true, tok[1:]
		}
		if op, v, ok := strings.Cut(tok, ":"); ok && slices.Contains(queryOps, strings.ToLower(op)) && v != "" {
			t.op, t.value = strings.ToLower(op), strings.ToLower(strings.Trim(v, `"`))
		} else {
			t.value = strings.ToLower(strings.Trim(tok, `"`))
		}
		if t.value != "" {
			out.terms = append(out.terms, t)
		}
	}
	return out
}

// splitQuery splits on spaces outside double quotes.
func splitQuery(q string) []string {
	var out []string
	var b strings.Builder
	quoted := false
	for _, c := range q {
		switch {
		case c == '"':
			quoted = !quoted
			b.WriteRune(c)
		case (c == ' ' || c == '\t') && !quoted:
			if b.Len() > 0 {
				out = append(out, b.String())
				b.Reset()
			}
		default:
			b.WriteRune(c)
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// matches reports whether m satisfies every term.
func (q query) matches(m *message) bool {
	for _, t := range q.terms {
		if t.match(m, q) == t.neg {
			return false
		}
	}
	return true
}

func (t term) match(m *message, q query) bool {
	h := func(name string) string { return strings.ToLower(decodeWords(m.header(name))) }
	switch t.op {
	case "from", "to", "cc", "bcc":
		if t.value == "me" && q.user != "" {
			return strings.Contains(h(t.op), strings.ToLower(q.user))
		}
		return strings.Contains(h(t.op), t.value)
	case "subject":
		return strings.Contains(h(t.op), t.value)
	case "in", "is":
		switch t.value {
		case "anywhere":
			return true
		case "read":
			return !slices.Contains(m.labels, "UNREAD")
		}
		return slices.Contains(m.labels, strings.ToUpper(strings.TrimSuffix(t.value, "s")))
	case "newer_than", "older_than":
		d, ok := parseAge(t.value)
		if !ok || q.now.IsZero() {
			return false
		}
		newer := m.internalDate.After(q.now.Add(-d))
		return newer == (t.op == "newer_than")
	case "label":
		label := strings.ToUpper(strings.TrimSuffix(t.value, "s")) // drafts → DRAFT
		return slices.Contains(m.labels, label)
	case "has":
		return t.value == "attachment" && slices.ContainsFunc(m.info.root.leaves(), (*part).isAttachment)
	case "filename":
		return slices.ContainsFunc(m.info.root.leaves(), func(p *part) bool {
			name := strings.ToLower(p.Filename)
			return name != "" && (strings.Contains(name, t.value) || strings.HasSuffix(name, "."+t.value))
		})
	case "rfc822msgid":
		return strings.Trim(strings.ToLower(m.header("Message-ID")), "<> ") == strings.Trim(t.value, "<> ")
	case "larger", "smaller":
		n, ok := parseSize(t.value)
		return ok && (t.op == "larger" && m.blob.Size > n || t.op == "smaller" && m.blob.Size < n)
	case "after", "before":
		d, err := time.Parse("2006/01/02", t.value)
		if err != nil {
			d, err = time.Parse("2006-01-02", t.value)
		}
		return err == nil && (t.op == "after" && !m.internalDate.Before(d) || t.op == "before" && m.internalDate.Before(d))
	}
	text := strings.ToLower(h("subject") + "\n" + h("from") + "\n" + h("to") + "\n" + h("cc") + "\n" + m.info.text + "\n" + stripTags(m.info.html))
	for _, l := range m.info.root.leaves() {
		text += "\n" + strings.ToLower(l.Filename)
	}
	return strings.Contains(text, t.value)
}

// parseAge reads newer_than's and older_than's ages: 2d, 3m, 1y (days,
// months of 30 days, years of 365, as Gmail counts them); 12h too.
func parseAge(v string) (time.Duration, bool) {
	if len(v) < 2 {
		return 0, false
	}
	n, err := strconv.Atoi(v[:len(v)-1])
	if err != nil || n < 0 || n > 100_000 {
		return 0, false
	}
	unit := map[byte]time.Duration{'h': time.Hour, 'd': 24 * time.Hour, 'm': 30 * 24 * time.Hour, 'y': 365 * 24 * time.Hour}[v[len(v)-1]]
	return time.Duration(n) * unit, unit != 0
}

// parseSize reads Gmail's sizes: 1000, 10k, 5m.
func parseSize(v string) (int64, bool) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(v, "k"):
		mult, v = 1<<10, strings.TrimSuffix(v, "k")
	case strings.HasSuffix(v, "m"):
		mult, v = 1<<20, strings.TrimSuffix(v, "m")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n * mult, err == nil && n >= 0
}
