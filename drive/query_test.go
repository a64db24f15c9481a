package drive

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestQueryQ(t *testing.T) {
	after := time.Date(2025, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	tests := []struct {
		name string
		q    Query
		want string
	}{
		{"empty lists everything not trashed", Query{}, "trashed = false"},
		{"text", Query{Text: "Q3 report"}, "(name contains 'Q3 report' or fullText contains 'Q3 report') and trashed = false"},
		{"text is trimmed", Query{Text: "  budget \t"}, "(name contains 'budget' or fullText contains 'budget') and trashed = false"},
		{"quote escaped", Query{Text: "Bob's"}, `(name contains 'Bob\'s' or fullText contains 'Bob\'s') and trashed = false`},
		{"backslash escaped", Query{Text: `a\b`}, `(name contains 'a\\b' or fullText contains 'a\\b') and trashed = false`},
		{"escape attempt stays a literal", Query{Text: `x') or trashed = true or name contains ('`},
			`(name contains 'x\') or trashed = true or name contains (\'' or fullText contains 'x\') or trashed = true or name contains (\'') and trashed = false`},
		{"mime type", Query{MimeType: "application/pdf"}, "mimeType = 'application/pdf' and trashed = false"},
		{"modified after in UTC", Query{ModifiedAfter: after}, "modifiedTime > '2025-03-01T11:00:00Z' and trashed = false"},
		{"all terms", Query{Text: "x", MimeType: "image/png", ModifiedAfter: after},
			"(name contains 'x' or fullText contains 'x') and mimeType = 'image/png' and modifiedTime > '2025-03-01T11:00:00Z' and trashed = false"},
		{"non-ASCII text", Query{Text: "Überweisung 報告"}, "(name contains 'Überweisung 報告' or fullText contains 'Überweisung 報告') and trashed = false"},
		{"text at the length limit", Query{Text: strings.Repeat("a", maxTextLen)},
			"(name contains '" + strings.Repeat("a", maxTextLen) + "' or fullText contains '" + strings.Repeat("a", maxTextLen) + "') and trashed = false"},
		{"page size at the limit", Query{PageSize: MaxPageSize}, "trashed = false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.q.Q()
			if err != nil {
				t.Fatalf("Q() error: %v", err)
			}
			if got != tt.want {
				t.Errorf("Q()\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestQueryQRefuses(t *testing.T) {
	tests := []struct {
		name string
		q    Query
		want error
	}{
		{"text past the limit", Query{Text: strings.Repeat("a", maxTextLen+1)}, ErrQueryText},
		{"newline in text", Query{Text: "a\nb"}, ErrQueryText},
		{"NUL in text", Query{Text: "a\x00b"}, ErrQueryText},
		{"invalid UTF-8", Query{Text: "a\xffb"}, ErrQueryText},
		{"mime without slash", Query{MimeType: "pdf"}, ErrQueryMimeType},
		{"mime with quote", Query{MimeType: "text/plain' or 'a"}, ErrQueryMimeType},
		{"mime with space", Query{MimeType: "text/ plain"}, ErrQueryMimeType},
		{"page size past the limit", Query{PageSize: MaxPageSize + 1}, ErrQueryPageSize},
		{"negative page size", Query{PageSize: -1}, ErrQueryPageSize},
		{"page token with newline", Query{PageToken: "a\nb"}, ErrQueryToken},
		{"page token too long", Query{PageToken: strings.Repeat("a", maxPageTokenLen+1)}, ErrQueryToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.q.Q()
			if !errors.Is(err, tt.want) {
				t.Fatalf("Q() error = %v, want %v", err, tt.want)
			}
		})
	}
}

// FuzzQueryQ checks that no text or mime type changes the shape of the
// expression: tokenised back, it is exactly the expected terms, and every
// literal decodes to the input.
func FuzzQueryQ(f *testing.F) {
	for _, s := range []string{"", "report", "Bob's", `a\b`, `\'`, `'`, `x') or (name contains '`, "Ünïcödé", "a and b", "(", ")"} {
		f.Add(s, "application/pdf", int64(0))
	}
	f.Add("x", "text/plain' or mimeType != 'a", int64(1700000000))
	f.Fuzz(func(t *testing.T, text, mime string, after int64) {
		q := Query{Text: text, MimeType: mime}
		if after > 0 && after < 1<<40 {
			q.ModifiedAfter = time.Unix(after, 0)
		}
		expr, err := q.Q()
		if err != nil {
			return
		}
		toks, err := tokenize(expr)
		if err != nil {
			t.Fatalf("Q(%q, %q) = %s: does not tokenise: %v", text, mime, expr, err)
		}
		var want []token
		if tt := strings.TrimSpace(text); tt != "" {
			want = append(want, w("("), w("name"), w("contains"), lit(tt), w("or"), w("fullText"), w("contains"), lit(tt), w(")"), w("and"))
		}
		if mime != "" {
			want = append(want, w("mimeType"), w("="), lit(mime), w("and"))
		}
		if !q.ModifiedAfter.IsZero() {
			want = append(want, w("modifiedTime"), w(">"), lit(q.ModifiedAfter.UTC().Format(time.RFC3339)), w("and"))
		}
		want = append(want, w("trashed"), w("="), w("false"))
		if len(toks) != len(want) {
			t.Fatalf("Q(%q, %q) = %s: %d tokens, want %d", text, mime, expr, len(toks), len(want))
		}
		for i := range want {
			if toks[i] != want[i] {
				t.Fatalf("Q(%q, %q) = %s: token %d is %+v, want %+v", text, mime, expr, i, toks[i], want[i])
			}
		}
	})
}

type token struct {
	literal bool
	text    string
}

func w(s string) token   { return token{text: s} }
func lit(s string) token { return token{literal: true, text: s} }

// tokenize reads a Drive q expression the way Drive does: words, ( ), and
// single-quoted literals where \ escapes the next character.
func tokenize(s string) ([]token, error) {
	var out []token
	rs := []rune(s)
	for i := 0; i < len(rs); {
		switch r := rs[i]; {
		case r == ' ':
			i++
		case r == '(' || r == ')':
			out = append(out, w(string(r)))
			i++
		case r == '\'':
			var b strings.Builder
			i++
			for {
				if i >= len(rs) {
					return nil, errors.New("unterminated literal")
				}
				if rs[i] == '\\' {
					if i+1 >= len(rs) {
						return nil, errors.New("dangling escape")
					}
					b.WriteRune(rs[i+1])
					i += 2
					continue
				}
				if rs[i] == '\'' {
					i++
					break
				}
				b.WriteRune(rs[i])
				i++
			}
			out = append(out, lit(b.String()))
		default:
			j := i
			for j < len(rs) && rs[j] != ' ' && rs[j] != '(' && rs[j] != ')' && rs[j] != '\'' {
				j++
			}
			out = append(out, w(string(rs[i:j])))
			i = j
		}
	}
	return out, nil
}
