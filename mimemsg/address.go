package mimemsg

import (
	"fmt"
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Bounds on one address, from RFC 5321 §4.5.3.1.
const (
	maxLocalPart   = 64
	maxDomain      = 253
	maxLabel       = 63
	maxDisplayName = 200 // characters; ours, to keep headers sane
	maxFieldInput  = 16 << 10
)

// ParseAddresses parses the addresses of one header field ("to", "cc",
// "bcc", "from"): each entry of values is one address or a comma-separated
// list; empty entries are skipped. Every address must be a plain mailbox
// (name@example.com, optionally with a display name): the part before the
// @ in ASCII, a domain with at least one dot; an internationalized domain
// is converted to its ASCII (xn--) form, which every mail system reads. Errors are *InputError sentences naming the field
// and the address at fault.
func ParseAddresses(field string, values []string) ([]*mail.Address, error) {
	var out []*mail.Address
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if len(v) > maxFieldInput {
			return nil, inputErr(field, "the %s list is too long (%d bytes); give fewer addresses", field, len(v))
		}
		if hasControl(v) {
			return nil, inputErr(field, "the %s address %s contains a line break or control character; give each address as plain text such as name@example.com", field, quoteInput(v))
		}
		list, err := parseList(v)
		if err != nil {
			return nil, inputErr(field, "%s is not a valid %s address; write it as name@example.com or Name <name@example.com>, and separate several with commas", quoteInput(v), field)
		}
		for _, a := range list {
			if err := checkAddress(field, a); err != nil {
				return nil, err
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// parseList parses a comma-separated list, tolerating a trailing comma.
func parseList(v string) ([]*mail.Address, error) {
	v = strings.TrimRight(strings.TrimSpace(v), ",")
	p := mail.AddressParser{}
	list, err := p.ParseList(v)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("no address")
	}
	return list, nil
}

// checkAddress applies the rules net/mail leaves to us.
func checkAddress(field string, a *mail.Address) error {
	at := strings.LastIndexByte(a.Address, '@')
	if at <= 0 || at == len(a.Address)-1 {
		return inputErr(field, "%s is not a valid %s address: it needs a name, an @ and a domain, as in name@example.com", quoteInput(a.Address), field)
	}
	local, domain := a.Address[:at], a.Address[at+1:]
	for _, r := range local {
		if r >= utf8.RuneSelf {
			return inputErr(field, "the %s address %s has non-ASCII characters before the @, which Gmail cannot send to through its API; ask the recipient for an address written in ASCII", field, quoteInput(a.Address))
		}
		if r < ' ' || r == 0x7f {
			return inputErr(field, "the %s address %s contains a control character; remove it", field, quoteInput(a.Address))
		}
	}
	if len(local) > maxLocalPart {
		return inputErr(field, "the %s address %s is too long before the @ (%d characters; the limit is %d); check the address", field, quoteInput(a.Address), len(local), maxLocalPart)
	}
	if msg := domainProblem(domain); msg != "" {
		return inputErr(field, "the %s address %s has an invalid domain (%s); check the part after the @", field, quoteInput(a.Address), msg)
	}
	// An internationalized domain goes in its ASCII (punycode) form: raw
	// UTF-8 in a header needs SMTPUTF8 all the way, and strict parsers
	// flag it. An xn-- domain is left as written.
	if !isASCII(domain) {
		ascii, err := idna.Lookup.ToASCII(domain)
		if err != nil || domainProblem(ascii) != "" {
			return inputErr(field, "the %s address %s has a domain that is not a valid internationalized name; check the part after the @", field, quoteInput(a.Address))
		}
		a.Address = local + "@" + ascii
	}
	if hasControl(a.Name) {
		return inputErr(field, "the display name of the %s address %s contains control characters; remove them", field, quoteInput(a.Address))
	}
	if n := utf8.RuneCountInString(a.Name); n > maxDisplayName {
		return inputErr(field, "the display name of the %s address %s is %d characters long; the limit is %d", field, quoteInput(a.Address), n, maxDisplayName)
	}
	return nil
}

// domainProblem describes what is wrong with a domain, or returns "".
// Internationalized labels pass as written (IDNA is left to Gmail).
func domainProblem(d string) string {
	switch {
	case len(d) > maxDomain:
		return "too long"
	case strings.HasPrefix(d, "["):
		return "address literals are not accepted"
	case !strings.Contains(d, "."):
		return "it has no dot, as in example.com"
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" {
			return "an empty label between dots"
		}
		if len(label) > maxLabel {
			return "a label longer than 63 characters"
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return "a label starts or ends with a hyphen"
		}
		for _, r := range label {
			if r >= utf8.RuneSelf {
				if !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.Is(unicode.Mn, r) && !unicode.Is(unicode.Mc, r) {
					return fmt.Sprintf("the character %q", r)
				}
				continue
			}
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return fmt.Sprintf("the character %q", r)
			}
		}
	}
	return ""
}

// formatAddresses renders addresses for a header, RFC 2047-encoding
// display names that need it.
func formatAddresses(list []*mail.Address) string {
	parts := make([]string, len(list))
	for i, a := range list {
		parts[i] = formatAddress(a)
	}
	return strings.Join(parts, ", ")
}

// formatAddress is net/mail's rendering, except that a display name that
// needs encoding is always B-encoded here (net/mail leaves "=?" alone).
func formatAddress(a *mail.Address) string {
	if needsEncoding(a.Name) {
		bare := (&mail.Address{Address: a.Address}).String()
		return encodeWords(a.Name) + " " + bare
	}
	return a.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// hasControl reports a C0 or C1 control character or DEL (a tab included:
// none belongs in an address or subject).
func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

// quoteInput quotes user input for a sentence: bounded, control
// characters made visible.
func quoteInput(s string) string {
	r := []rune(s)
	if len(r) > 80 {
		s = string(r[:77]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
