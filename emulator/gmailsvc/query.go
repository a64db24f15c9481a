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
// filename: rfc822msgid: larger: smaller: after: before: (and their
// other names newer: older:) newer_than: older_than:, quoted phrases, a
// leading - to negate, and free words;
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
	"newer", "older", "newer_than", "older_than"}

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
		return slices.Contains(m.labels, systemLabel(t.value))
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
	case "after", "newer", "before", "older":
		d, ok := parseDay(t.value)
		if !ok {
			return false
		}
		if t.op == "after" || t.op == "newer" {
			return !m.internalDate.Before(d)
		}
		return m.internalDate.Before(d)
	}
	text := strings.ToLower(h("subject") + "\n" + h("from") + "\n" + h("to") + "\n" + h("cc") + "\n" + m.info.text + "\n" + stripTags(m.info.html))
	for _, l := range m.info.root.leaves() {
		text += "\n" + strings.ToLower(l.Filename)
	}
	return strings.Contains(text, t.value)
}

// systemLabel is the label id that label:NAME names. The emulator has
// only system labels, named by their ids in any case, and "drafts" and
// "chats" as Gmail's folders are called; user labels do not exist here.
func systemLabel(name string) string {
	switch name {
	case "drafts":
		return "DRAFT"
	case "chats":
		return "CHAT"
	}
	return strings.ToUpper(name)
}

// parseDay reads after:'s and before:'s values as the Gmail Help and the
// API guide give them: a day, 2004/04/16 or 04/16/2004 (month and day of
// one or two digits), meaning midnight Pacific Standard Time, or seconds
// since the epoch. Other forms (2004-04-16) are not documented, so not
// taken.
func parseDay(v string) (time.Time, bool) {
	if isDigits(v) {
		n, err := strconv.ParseInt(v, 10, 64)
		return time.Unix(n, 0), err == nil
	}
	f := strings.Split(v, "/")
	if len(f) != 3 {
		return time.Time{}, false
	}
	y, mo, d := f[0], f[1], f[2]
	if len(f[2]) == 4 {
		mo, d, y = f[0], f[1], f[2]
	}
	if len(y) != 4 || len(mo) > 2 || len(d) > 2 || !isDigits(y) || !isDigits(mo) || !isDigits(d) {
		return time.Time{}, false
	}
	yn, _ := strconv.Atoi(y)
	mn, _ := strconv.Atoi(mo)
	dn, _ := strconv.Atoi(d)
	day := time.Date(yn, time.Month(mn), dn, 0, 0, 0, 0, time.FixedZone("PST", -8*60*60))
	// time.Date carries 02/30 into March; Gmail's calendar has no such day.
	return day, day.Month() == time.Month(mn) && day.Day() == dn
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
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
