package tools

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/drivemail/drivemail/internal/ignorable"
)

// Text that other people wrote reaches the model in the tools' text
// results: Drive file names (anyone can share a file with any name),
// MIME types and tab names, links, names a client sent, and the archive
// entries and Google reasons that refusals quote. Such text is data. A
// newline in a name must not start a line that looks like another search
// result; a right-to-left override or a zero-width character must not
// hide or reorder what is read. So every such string is made visible
// before it enters the text, and structuredContent keeps it exact.

// field renders untrusted s as one field of a line of text. It is written
// as is when every character is plainly visible and none of them is in
// seps (the line's own separators); otherwise it is quoted in Go syntax,
// which escapes every control, format, bidi and separator character
// ("Q3\n- Report.pdf" → "\"Q3\\n- Report.pdf\""). A name that starts with
// a quote, or starts or ends with a space, is quoted too, so that a bare
// field is always exactly the name and a quoted one always a quotation.
func field(s, seps string) string {
	if s == "" {
		return `""`
	}
	if isBare(s, seps) {
		return s
	}
	return quoteVisible(s)
}

func isBare(s, seps string) bool {
	if s[0] == '"' || s[0] == ' ' || s[len(s)-1] == ' ' || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !plain(r) || strings.ContainsRune(seps, r) {
			return false
		}
	}
	return true
}

// quoteVisible is strconv.Quote that also escapes the invisible
// characters Quote leaves alone (see plain).
func quoteVisible(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case plain(r):
			b.WriteRune(r)
		default:
			b.WriteString(escapeRune(r))
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

// visible escapes, in place and without quotes, every character of text
// that is not plainly visible, keeping line breaks when keepLines is set.
// It is the last pass over a result's text: whatever field missed cannot
// reorder or hide what the model reads.
func visible(text string, keepLines bool) string {
	clean := func(r rune) bool { return plain(r) || keepLines && r == '\n' }
	if strings.IndexFunc(text, func(r rune) bool { return !clean(r) }) < 0 && utf8.ValidString(text) {
		return text
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, text[i])
		case clean(r):
			b.WriteRune(r)
		default:
			b.WriteString(escapeRune(r))
		}
		i += n
	}
	return b.String()
}

// plain reports whether r shows as itself: a printable character (letters,
// marks, numbers, punctuation, symbols, the ASCII space) that is not
// default-ignorable. Controls, line and paragraph separators (U+2028,
// U+2029), non-ASCII spaces and unassigned code points are not plain, and
// neither is any Default_Ignorable_Code_Point: bidi embeddings, overrides
// and isolates, zero-width spaces and joiners, tag characters, Hangul
// fillers, and variation selectors, which render as nothing yet carry any
// hidden text at two per byte.
func plain(r rune) bool {
	switch {
	case r == ' ':
		return true
	case !unicode.IsPrint(r):
		return false
	}
	return !ignorable.Is(r)
}

// escapeRune writes r the way Go source would: \n, \t, \u202e, \U000e0041.
func escapeRune(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	}
	if r <= 0xFFFF {
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}

// shellWord quotes s as one POSIX shell word that is the exact bytes of
// s. A name with characters that do not show plainly is written as
// "$(printf '…')" with those bytes as octal escapes, so that the command
// shown is the command run, with nothing hidden or reordered in it.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !plain(r) }) < 0 && utf8.ValidString(s) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString(`"$(printf '`)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1, !plain(r):
			for _, c := range []byte(s[i : i+n]) {
				b.WriteString(`\` + strconv.FormatInt(int64(c)|0o1000, 8)[1:])
			}
		case r == '\'':
			b.WriteString(`'\''`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '%':
			b.WriteString(`%%`)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	b.WriteString(`')"`)
	return b.String()
}
