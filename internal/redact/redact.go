// Package redact keeps user content out of log lines. drivemail's errors
// quote whatever the user supplied (a file name, an address, a tab name)
// with %q, so eliding every double-quoted span leaves an error that still
// says what failed and carries none of it.
package redact

import "strings"

// Quoted replaces each double-quoted part of s with "…". An unclosed quote
// elides to the end, so a truncated error cannot leak its tail.
func Quoted(s string) string {
	var b strings.Builder
	inQuote, escaped := false, false
	for _, r := range s {
		switch {
		case !inQuote && r == '"':
			inQuote = true
			b.WriteString(`"…"`)
		case !inQuote:
			b.WriteRune(r)
		case escaped:
			escaped = false
		case r == '\\':
			escaped = true
		case r == '"':
			inQuote = false
		}
	}
	return b.String()
}
