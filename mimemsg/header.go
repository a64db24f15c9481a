package mimemsg

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/emersion/go-message/textproto"
)

// maxMsgID bounds one msg-id, brackets included; real ones are under 100.
const maxMsgID = 500

// encodeWords RFC 2047-encodes s as "B" encoded-words, each holding whole
// characters and at most 75 bytes long, separated by spaces (which
// decoders drop between encoded-words), so that a header can fold between
// them. Unlike mime.WordEncoder it always encodes.
func encodeWords(s string) string {
	const prefix, suffix = "=?utf-8?b?", "?="
	const maxRaw = 39 // 52 base64 characters: 64 with prefix and suffix
	var b strings.Builder
	for len(s) > 0 {
		n := min(len(s), maxRaw)
		for n < len(s) && n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(prefix)
		b.WriteString(base64.StdEncoding.EncodeToString([]byte(s[:n])))
		b.WriteString(suffix)
		s = s[n:]
	}
	return b.String()
}

// needsEncoding reports whether a header text must be encoded (RFC 2047
// or 2231) to survive a round trip: non-ASCII; something a decoder would
// take for an encoded-word; or a run of spaces, which a reader that
// unfolds lines (Go's net/textproto) collapses if a fold falls inside it.
func needsEncoding(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return strings.Contains(s, "=?") || strings.Contains(s, "  ")
}

// subjectValue validates a subject and returns the header value.
func subjectValue(s string) (string, error) {
	s = strings.TrimSpace(s)
	if strings.ContainsAny(s, "\r\n") {
		return "", inputErr("subject", "the subject contains a line break; write it on one line")
	}
	if hasControl(s) {
		return "", inputErr("subject", "the subject contains a control character (%s); remove it", quoteInput(s))
	}
	if !utf8.ValidString(s) {
		return "", inputErr("subject", "the subject is not valid UTF-8 text; send it as plain text")
	}
	if n := utf8.RuneCountInString(s); n > MaxSubjectChars {
		return "", inputErr("subject", "the subject is %d characters long; Gmail's limit is %d, so shorten it", n, MaxSubjectChars)
	}
	if !needsEncoding(s) && checkHeaderField("Subject", s) == nil {
		return s, nil
	}
	return encodeWords(s), nil
}

// normMsgID validates one msg-id, with or without angle brackets, and
// returns it with them.
func normMsgID(field, s string) (string, error) {
	id := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "<"), ">")
	bad := func(why string) error {
		return inputErr(field, "%s is not a valid message id for %s (%s); use the Message-ID header of the message you reply to, such as <abc123@mail.gmail.com>", quoteInput(s), field, why)
	}
	if id == "" {
		return "", bad("it is empty")
	}
	if len(id)+2 > maxMsgID {
		return "", bad("it is too long")
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`<>()\",;:`, c) >= 0 {
			return "", bad(fmt.Sprintf("it contains %q", c))
		}
	}
	at := strings.LastIndexByte(id, '@')
	if at <= 0 || at == len(id)-1 {
		return "", bad("it needs the form left@right")
	}
	return "<" + id + ">", nil
}

// normMsgIDList splits and validates a list of msg-ids (each value may
// hold several, separated by spaces or commas, or written "<a@b><c@d>"),
// keeping at most max: the first and the most recent.
func normMsgIDList(field string, values []string, max int) ([]string, error) {
	var ids []string
	for _, v := range values {
		v = strings.ReplaceAll(v, "><", "> <")
		for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			id, err := normMsgID(field, f)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
	}
	if len(ids) > max {
		ids = append(ids[:1], ids[len(ids)-(max-1):]...)
	}
	return ids, nil
}

// checkHeaderField formats "k: v" exactly as go-message will and checks
// what go-message does not: no control character, no line over 998
// bytes, the folded field within MaxHeaderBytes, and folding that only
// inserts line breaks (go-message inserts a space into a word it cannot
// fold, which would change the value).
func checkHeaderField(k, v string) error {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return fmt.Errorf("header %s: control character %q", k, c)
		}
	}
	var h textproto.Header
	h.Add(k, v)
	var b bytes.Buffer
	if err := textproto.WriteHeader(&b, h); err != nil {
		return fmt.Errorf("header %s: %w", k, err)
	}
	field := strings.TrimSuffix(b.String(), "\r\n\r\n")
	if len(field) > MaxHeaderBytes {
		return fmt.Errorf("header %s: %d bytes folded; the limit is %d", k, len(field), MaxHeaderBytes)
	}
	for _, line := range strings.Split(field, "\r\n") {
		if len(line) > 998 {
			return fmt.Errorf("header %s: a line of %d bytes", k, len(line))
		}
	}
	_, unfolded, _ := strings.Cut(strings.ReplaceAll(field, "\r\n", ""), ": ")
	if unfolded != v {
		return fmt.Errorf("header %s: cannot be folded without changing it", k)
	}
	return nil
}
