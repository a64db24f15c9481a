package oauth

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/drivemail/drivemail/internal/ignorable"
)

// The consent page is where a user decides whom to trust, from two
// things a stranger chose at registration: a name and a redirect URI. So
// the page shows both as what they are: a name with any character that
// hides or reorders text written out as an escape, a warning when its
// letters mix alphabets, and the destination as its scheme and host.

// shows reports whether r shows as itself in a name: printable (letters,
// marks, numbers, punctuation, symbols, the ASCII space) and not
// default-ignorable (zero-width characters, bidi controls, variation
// selectors, Hangul fillers, tag characters).
func shows(r rune) bool {
	return (r == ' ' || unicode.IsPrint(r)) && !ignorable.Is(r)
}

// hiddenRune is the first character of name that does not show as
// itself, and whether there is one.
func hiddenRune(name string) (rune, bool) {
	for _, r := range name {
		if !shows(r) {
			return r, true
		}
	}
	return 0, false
}

// shownName is a client name as the consent page writes it: every
// character that does not show as itself as a \uXXXX escape, so that
// "Claude\u202eedoc" reads as typed. Registration refuses such names;
// this holds for names stored before it did.
func shownName(name string) string {
	if name == "" {
		return "An unnamed application"
	}
	if _, hidden := hiddenRune(name); !hidden {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case shows(r):
			b.WriteRune(r)
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	return b.String()
}

// mixedScripts names the scripts of name's letters ("Cyrillic, Latin"
// for a Cyrillic С in "Сlaude") when they mix more than UTS #39's Highly
// Restrictive level allows, nil otherwise. That level admits one script,
// or Latin with the scripts written beside it in Japanese, Chinese and
// Korean text; punctuation, digits and combining marks belong to every
// script and do not count.
func mixedScripts(name string) []string {
	var found []string
	for _, r := range name {
		if !unicode.IsLetter(r) {
			continue
		}
		for script, table := range unicode.Scripts {
			if script != "Common" && script != "Inherited" && unicode.Is(table, r) && !slices.Contains(found, script) {
				found = append(found, script)
			}
		}
	}
	if len(found) < 2 {
		return nil
	}
	for _, allowed := range highlyRestrictive {
		if !slices.ContainsFunc(found, func(s string) bool { return !slices.Contains(allowed, s) }) {
			return nil
		}
	}
	slices.Sort(found)
	return found
}

// highlyRestrictive are the script combinations UTS #39 §5.2 admits
// beyond a single script.
var highlyRestrictive = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

// destination is where a redirect URI sends the code, as the consent
// page shows it: its scheme and host, and in words what that is.
func destination(redirectURI string) (target, kind string) {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return "an address drivemail cannot read", ""
	}
	switch {
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
		return "http://" + u.Host, "An application on this computer, listening on a local port."
	case u.Scheme == "https":
		return "https://" + u.Host, "A website: the application's own server."
	case u.Host != "":
		return u.Scheme + "://" + u.Host, "The application on this computer that opens " + u.Scheme + ": links."
	}
	return u.Scheme + ":", "The application on this computer that opens " + u.Scheme + ": links."
}
