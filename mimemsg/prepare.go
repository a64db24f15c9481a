package mimemsg

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/mail"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Prepared is a validated message, ready to stream once; Bind makes a
// copy to stream again.
type Prepared struct {
	top       []field // the message's own header fields, in order
	text      string  // normalised bodies
	html      string
	inline    []preparedPart
	attach    []preparedPart
	limits    Limits
	messageID string
	streamed  bool
}

// field is one header field as it will be written.
type field struct{ k, v string }

// preparedPart is a Part with its header fields built and checked.
type preparedPart struct {
	Part
	fields []field
}

// Header is a message's own header fields, validated, with its Date and
// Message-ID fixed: the first half of Prepare, for a caller that checks
// the header before it knows the parts and must not check it twice.
type Header struct {
	top       []field
	limits    Limits
	messageID string
}

// Prepare validates every header and part of m — addresses, subject,
// ids, names, content types, the folded length of every header — without
// opening any part. Its errors are *InputError.
func Prepare(m Message) (*Prepared, error) {
	h, err := PrepareHeader(m)
	if err != nil {
		return nil, err
	}
	return h.Prepare(m)
}

// PrepareHeader validates m's header fields — addresses, subject, ids,
// the folded length of each — and its Limits, and reads nothing else of
// m. A zero Date becomes now and an empty MessageID a new one, once. Its
// errors are *InputError.
func PrepareHeader(m Message) (*Header, error) {
	h := &Header{limits: m.Limits}
	if h.limits.MaxRecipients <= 0 {
		h.limits.MaxRecipients = DefaultMaxRecipients
	}

	from, err := ParseAddresses("from", []string{m.From})
	if err != nil {
		return nil, err
	}
	if len(from) != 1 {
		return nil, inputErr("from", "the message needs exactly one sender address, not %d", len(from))
	}
	replyTo, err := ParseAddresses("reply_to", []string{m.ReplyTo})
	if err != nil {
		return nil, err
	}
	var rcpt [3][]*mail.Address
	for i, f := range []struct {
		name string
		vals []string
	}{{"to", m.To}, {"cc", m.Cc}, {"bcc", m.Bcc}} {
		if rcpt[i], err = ParseAddresses(f.name, f.vals); err != nil {
			return nil, err
		}
	}
	switch n := len(rcpt[0]) + len(rcpt[1]) + len(rcpt[2]); {
	case n == 0:
		return nil, inputErr("to", "the message has no recipient; give at least one address in to, cc or bcc")
	case n > h.limits.MaxRecipients:
		return nil, inputErr(FieldRecipients, "the message has %d recipients; the limit is %d per message, so split it into several messages", n, h.limits.MaxRecipients)
	}

	subject, err := subjectValue(m.Subject)
	if err != nil {
		return nil, err
	}
	date := m.Date
	if date.IsZero() {
		date = time.Now()
	}
	if m.MessageID != "" {
		if h.messageID, err = normMsgID("Message-ID", m.MessageID); err != nil {
			return nil, err
		}
	} else {
		h.messageID = newMessageID(from[0].Address)
	}
	var inReplyTo string
	if m.InReplyTo != "" {
		if inReplyTo, err = normMsgID("in_reply_to", m.InReplyTo); err != nil {
			return nil, err
		}
	}
	refs, err := normMsgIDList("references", m.References, MaxReferences)
	if err != nil {
		return nil, err
	}
	if len(refs) == 0 && inReplyTo != "" {
		refs = []string{inReplyTo}
	}

	h.top = []field{
		{"MIME-Version", "1.0"},
		{"Date", date.Format(time.RFC1123Z)},
		{"Message-ID", h.messageID},
		{"Subject", subject},
		{"From", formatAddress(from[0])},
	}
	if len(replyTo) > 0 {
		h.top = append(h.top, field{"Reply-To", formatAddresses(replyTo)})
	}
	for i, k := range []string{"To", "Cc", "Bcc"} {
		if len(rcpt[i]) > 0 {
			h.top = append(h.top, field{k, formatAddresses(rcpt[i])})
		}
	}
	if inReplyTo != "" {
		h.top = append(h.top, field{"In-Reply-To", inReplyTo})
	}
	if len(refs) > 0 {
		h.top = append(h.top, field{"References", strings.Join(refs, " ")})
	}
	for _, f := range h.top {
		if err := checkHeaderField(f.k, f.v); err != nil {
			return nil, inputErr(strings.ToLower(f.k), "the %s header would be too long or malformed (%v); use fewer recipients or shorter names", f.k, err)
		}
	}
	return h, nil
}

// MessageID returns the Message-ID header value, with angle brackets.
func (h *Header) MessageID() string { return h.messageID }

// Prepare validates m's bodies and parts — names, content types,
// Content-IDs — without opening any part, and returns the message with
// h as its header. It reads only m's Text, HTML, Inline and Attachments:
// the rest is h's. Its errors are *InputError.
func (h *Header) Prepare(m Message) (*Prepared, error) {
	p := &Prepared{top: h.top, limits: h.limits, messageID: h.messageID}
	p.text = normaliseBody(m.Text)
	p.html = normaliseBody(m.HTML)
	if len(m.Inline) > 0 && p.html == "" {
		return nil, inputErr("inline", "inline images need an HTML body that shows them with cid: references; attach the files instead, or add body_html")
	}
	seen := map[string]bool{}
	for _, part := range m.Inline {
		pp, err := preparePart(part, true)
		if err != nil {
			return nil, err
		}
		if seen[pp.ContentID] {
			return nil, inputErr("inline", "two inline files share the Content-ID %s; give each its own", quoteInput(pp.ContentID))
		}
		seen[pp.ContentID] = true
		p.inline = append(p.inline, pp)
	}
	for _, part := range m.Attachments {
		pp, err := preparePart(part, false)
		if err != nil {
			return nil, err
		}
		p.attach = append(p.attach, pp)
	}
	return p, nil
}

// MessageID returns the Message-ID header value, with angle brackets.
func (p *Prepared) MessageID() string { return p.messageID }

// Bind returns a copy of p, ready to stream once, whose file parts open
// with opens: opens[i] is the i-th part in the order of Written.Parts
// (inline parts, then attachments). Nothing is validated again and the
// Date and Message-ID stay p's, so a caller that streams one message more
// than once (an upload restarted from its first byte) prepares it once
// and binds each pass's readers.
func (p *Prepared) Bind(opens []func(context.Context) (io.ReadCloser, error)) (*Prepared, error) {
	if n := len(p.inline) + len(p.attach); len(opens) != n {
		return nil, fmt.Errorf("mimemsg: %d Open functions for %d parts", len(opens), n)
	}
	for i, open := range opens {
		if open == nil {
			return nil, fmt.Errorf("mimemsg: part %d has no Open function", i+1)
		}
	}
	b := *p
	b.streamed = false
	bind := func(parts []preparedPart) []preparedPart {
		bound := make([]preparedPart, len(parts))
		for i, pp := range parts {
			pp.Open, opens = opens[0], opens[1:]
			bound[i] = pp
		}
		return bound
	}
	b.inline = bind(p.inline)
	b.attach = bind(p.attach)
	return &b, nil
}

// newMessageID makes <uuid@domain>, with the sender's domain when it is
// plain ASCII (as most mail software does), else a fixed one.
func newMessageID(from string) string {
	domain := strings.ToLower(from[strings.LastIndexByte(from, '@')+1:])
	for _, r := range domain {
		if r >= utf8.RuneSelf {
			domain = "drivemail"
			break
		}
	}
	return "<" + uuid.NewString() + "@" + domain + ">"
}

// normaliseBody makes a body valid UTF-8 with LF line ends.
func normaliseBody(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// preparePart validates a part and builds its header fields.
func preparePart(part Part, inline bool) (preparedPart, error) {
	kind := "attachment"
	if inline {
		kind = "inline"
	}
	name := part.Name
	switch {
	case strings.TrimSpace(name) == "":
		return preparedPart{}, inputErr(kind, "an %s file has no name; give it one", kind)
	case !utf8.ValidString(name):
		return preparedPart{}, inputErr(kind, "the %s name %s is not valid UTF-8; rename the file", kind, quoteInput(name))
	case len(name) > MaxNameBytes:
		return preparedPart{}, inputErr(kind, "the %s name %s is %d bytes long; the limit is %d, so shorten it", kind, quoteInput(name), len(name), MaxNameBytes)
	case strings.ContainsAny(name, `/\`):
		return preparedPart{}, inputErr(kind, "the %s name %s contains a path separator; give just the file name", kind, quoteInput(name))
	case strings.ContainsFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }):
		return preparedPart{}, inputErr(kind, "the %s name %s contains control or invisible formatting characters; remove them", kind, quoteInput(name))
	}
	if part.Open == nil {
		return preparedPart{}, fmt.Errorf("mimemsg: part %q has no Open function", name)
	}

	ct := partContentType(part.ContentType) + "; " + nameParam(name)
	disp := "attachment"
	if inline {
		disp = "inline"
	}
	pp := preparedPart{Part: part, fields: []field{
		{"Content-Type", ct},
		{"Content-Disposition", disp + "; " + filenameParam(name)},
		{"Content-Transfer-Encoding", "base64"},
	}}
	if inline {
		id, err := normContentID(part.ContentID)
		if err != nil {
			return preparedPart{}, err
		}
		pp.ContentID = id
		pp.fields = append(pp.fields, field{"Content-ID", "<" + id + ">"})
	}
	for _, f := range pp.fields {
		if err := checkHeaderField(f.k, f.v); err != nil {
			return preparedPart{}, inputErr(kind, "the %s %s cannot be written (%v); rename it", kind, quoteInput(name), err)
		}
	}
	return pp, nil
}

// partContentType normalises a part's MIME type: lower case, only a
// charset parameter kept, octet-stream for anything unparseable and for
// the composite types a base64 body may not have.
func partContentType(ct string) string {
	t, params, err := mime.ParseMediaType(ct)
	if err != nil || !strings.Contains(t, "/") || strings.HasPrefix(t, "multipart/") || strings.HasPrefix(t, "message/") {
		return "application/octet-stream"
	}
	keep := map[string]string{}
	if cs := params["charset"]; cs != "" && isToken(cs) {
		keep["charset"] = strings.ToLower(cs)
	}
	if s := mime.FormatMediaType(t, keep); s != "" {
		return s
	}
	return "application/octet-stream"
}

// nameParam is the Content-Type name parameter, for the old readers that
// look there instead of at filename: quoted ASCII, or RFC 2231 like
// filename. (Gmail writes RFC 2047 words inside the quotes, which RFC 2047
// section 5 forbids and strict parsers such as Python's flag as a defect.)
func nameParam(name string) string {
	return mediaParam("name", name)
}

// filenameParam is the Content-Disposition filename parameter: quoted
// ASCII, or RFC 2231 for anything else.
func filenameParam(name string) string {
	return mediaParam("filename", name)
}

// mediaParam formats one parameter: attr="value" for plain ASCII, and
// the RFC 2231 form attr*=utf-8, two quotes, then %XX-escaped UTF-8, for
// anything that needs encoding.
func mediaParam(attr, value string) string {
	if !needsEncoding(value) {
		return attr + "=" + quoteString(value)
	}
	var b strings.Builder
	b.WriteString(attr + "*=utf-8''")
	for i := 0; i < len(value); i++ {
		c := value[i]
		if isAttrChar(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// quoteString makes an RFC 2045 quoted-string of printable ASCII.
func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// isAttrChar is RFC 2231's attribute-char less the specials and '%',
// '*' and '\”.
func isAttrChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}

// isToken reports an RFC 2045 token.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?=`, c) >= 0 {
			return false
		}
	}
	return s != ""
}

// normContentID validates an inline part's Content-ID (brackets optional).
func normContentID(id string) (string, error) {
	id = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(id), "<"), ">")
	if id == "" {
		return "", inputErr("inline", "an inline file has no Content-ID; make one with NewContentID")
	}
	if len(id) > maxMsgID-2 {
		return "", inputErr("inline", "the Content-ID %s is too long", quoteInput(id))
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c >= 0x7f || strings.IndexByte(`<>()\",;:[]`, c) >= 0 {
			return "", inputErr("inline", "the Content-ID %s contains %q; use letters, digits, dots, @ and hyphens", quoteInput(id), c)
		}
	}
	return id, nil
}
