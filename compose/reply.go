package compose

import (
	"context"
	"fmt"
	"html"
	"net/mail"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/drivemail/drivemail/gmail"
)

// A reply (Request.ReplyTo) and a forward (Request.Forward) start from a
// message of the user's Gmail, read before anything else is checked:
//
//   - A reply joins the message's conversation the way Gmail's own reply
//     does, meeting the three conditions of the discovery document's
//     Message.threadId: it names the message's threadId, its In-Reply-To
//     is the message's Message-ID and its References are the message's
//     References (else its In-Reply-To) followed by that Message-ID, and
//     its subject is the message's with "Re: " in front (unless it
//     already starts with "Re:"). It goes to the message's Reply-To, else
//     its From (to its To when the user sent it); reply_all adds the
//     message's To and Cc, without the user. to, cc and subject given in
//     the call win over each default; a subject other than the
//     conversation's starts a new conversation, as Gmail does.
//   - A forward needs to; its subject is "Fwd: " and the message's, its
//     body ends with the message's headers and text as Gmail quotes
//     them, and every attachment of the message goes with it, by handle
//     (a GmailAttachment each), within the limits of any attachment.

// withOriginal completes req from the message it replies to or forwards;
// from is the sender, whom a reply-all leaves out.
func withOriginal(ctx context.Context, l *mailLookup, req Request, from string, draft bool) (Request, error) {
	reply, fwd := req.ReplyTo.ID != "", req.Forward.ID != ""
	switch {
	case reply && fwd:
		return req, refuse(kindReplyAndForward, "Give \"reply_to\" or \"forward\", not both: a reply answers a message in its conversation, a forward passes it on to someone new.")
	case req.ReplyAll && !reply:
		return req, refuse(kindBadOption, "\"reply_all\" goes with \"reply_to\": give reply_to, the id of the message to answer (search_mail finds it).")
	case reply:
		return replyTo(ctx, l, req, from, draft)
	case fwd:
		return forward(ctx, l, req, draft)
	}
	return req, nil
}

func replyTo(ctx context.Context, l *mailLookup, req Request, from string, draft bool) (Request, error) {
	if req.ThreadID != "" || strings.TrimSpace(req.InReplyTo) != "" || len(req.References) > 0 {
		return req, refuse(kindReplyHeadersGiven, "\"reply_to\" sets thread_id, in_reply_to and references from the message it answers, as Gmail does. Leave them out.")
	}
	m, err := l.message(ctx, req.ReplyTo.ID, false)
	if err != nil {
		return req, mailLookupError(err, "\"reply_to\": ", req.ReplyTo.ID, draft)
	}
	if !strings.Contains(m.MessageID, "@") {
		return req, refuse(kindNoMessageID, "Gmail message %s has no Message-ID header, so a reply cannot join its conversation. %s "+
			"Send a new message instead: leave out reply_to and give to and subject.", m.ID, nothing(draft))
	}
	req.ThreadID, req.InReplyTo = m.ThreadID, m.MessageID
	refs := msgIDs(m.References)
	if len(refs) == 0 {
		refs = msgIDs(m.InReplyTo)
	}
	req.References = firstAndLatest(append(refs, m.MessageID))
	if strings.TrimSpace(req.Subject) == "" {
		req.Subject = prefixed("Re: ", m.Subject, "re:")
	}
	to, cc := replyRecipients(m, from, req.ReplyAll)
	if len(req.To) == 0 {
		if len(to) == 0 {
			return req, refuse(kindNoRecipient, "Gmail message %s has no sender address drivemail can reply to. %s Give \"to\": the addresses to answer.", m.ID, nothing(draft))
		}
		req.To = to
	}
	if len(req.Cc) == 0 {
		req.Cc = cc
	}
	return req, nil
}

func forward(ctx context.Context, l *mailLookup, req Request, draft bool) (Request, error) {
	if len(req.To) == 0 {
		return req, refuse(kindNoRecipient, "\"forward\" needs \"to\": the addresses to pass message %s on to.", req.Forward.ID)
	}
	m, err := l.message(ctx, req.Forward.ID, true)
	if err != nil {
		return req, mailLookupError(err, "\"forward\": ", req.Forward.ID, draft)
	}
	if strings.TrimSpace(req.Subject) == "" {
		req.Subject = prefixed("Fwd: ", m.Subject, "fwd:", "fw:")
	}
	atts := append([]Attachment(nil), req.Attachments...)
	for _, a := range m.Attachments {
		atts = append(atts, Attachment{Source: GmailAttachment{Message: req.Forward, Name: a.Name, part: a.PartID}})
	}
	req.Attachments = atts
	req.BodyText, req.BodyHTML = quoteForward(m, req.BodyText, req.BodyHTML)
	return req, nil
}

// prefixed is subject with prefix in front, unless it starts with one of
// has (compared ignoring case), as Gmail writes a reply's or forward's.
func prefixed(prefix, subject string, has ...string) string {
	s := strings.TrimSpace(subject)
	for _, p := range has {
		if strings.HasPrefix(strings.ToLower(s), p) {
			return s
		}
	}
	return prefix + s
}

// replyRecipients are a reply's to and, for reply all, cc.
func replyRecipients(m gmail.Message, self string, all bool) (to, cc []string) {
	me := strings.ToLower(addressOf(self))
	fromSelf := false
	for _, a := range parseAddrs(m.From) {
		fromSelf = fromSelf || strings.EqualFold(a.Address, me)
	}
	var primary []*mail.Address
	switch rt := parseAddrs(m.ReplyTo); {
	case fromSelf:
		primary = parseAddrs(m.To)
	case len(rt) > 0:
		primary = rt
	default:
		primary = parseAddrs(m.From)
	}
	var second []*mail.Address
	if all {
		if !fromSelf {
			primary = append(primary, parseAddrs(m.To)...)
		}
		second = parseAddrs(m.Cc)
	}
	seen := map[string]bool{}
	pick := func(list []*mail.Address, keepSelf bool) []string {
		var out []string
		for _, a := range list {
			key := strings.ToLower(a.Address)
			if seen[key] || key == me && !keepSelf {
				continue
			}
			seen[key] = true
			out = append(out, readable(a))
		}
		return out
	}
	to = pick(primary, false)
	if len(to) == 0 && fromSelf {
		to = pick(primary, true) // a message to oneself is answered to oneself
	}
	return to, pick(second, false)
}

// parseAddrs reads an address header leniently: the whole list, else
// each comma-separated piece that parses.
func parseAddrs(v string) []*mail.Address {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	if list, err := mail.ParseAddressList(v); err == nil {
		return list
	}
	var out []*mail.Address
	for _, p := range strings.Split(v, ",") {
		if a, err := mail.ParseAddress(strings.TrimSpace(p)); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// addressOf is the bare address of s ("Ana <a@x>" → "a@x").
func addressOf(s string) string {
	if a, err := mail.ParseAddress(s); err == nil {
		return a.Address
	}
	return strings.TrimSpace(s)
}

var plainName = regexp.MustCompile(`^[\p{L}\p{N} .'_-]+$`)

// readable writes an address as people read it ("Dana Reyes
// <dana@example.org>"), quoting or encoding the name only when it needs
// it.
func readable(a *mail.Address) string {
	name := strings.TrimSpace(a.Name)
	switch {
	case name == "":
		return a.Address
	case utf8.ValidString(name) && plainName.MatchString(name):
		return name + " <" + a.Address + ">"
	}
	return a.String()
}

// msgIDs returns the msg-ids ("<left@right>") in a header value, in
// order, at most MaxReferenceEntries×2 of them.
func msgIDs(v string) []string {
	var out []string
	for len(out) < 2*MaxReferenceEntries {
		i := strings.IndexByte(v, '<')
		if i < 0 {
			break
		}
		j := strings.IndexByte(v[i:], '>')
		if j < 0 {
			break
		}
		if id := v[i : i+j+1]; strings.Contains(id, "@") && !strings.ContainsAny(id[1:len(id)-1], "<> \t") {
			out = append(out, id)
		}
		v = v[i+j+1:]
	}
	return out
}

// forwardMarker starts a forwarded message's quote, as Gmail writes it.
const forwardMarker = "---------- Forwarded message ---------"

// quoteForward ends the bodies with the forwarded message's headers and
// text, as Gmail quotes them: the text body as it is, the HTML body (when
// the caller wrote one) with the text escaped. The original's own HTML is
// not copied, since its cid: images would refer to parts this message
// does not carry. A quote that would take a body past MaxBodyBytes is cut
// short, and says so.
func quoteForward(m gmail.Message, text, htmlBody string) (string, string) {
	var head strings.Builder
	head.WriteString(forwardMarker + "\n")
	for _, h := range [][2]string{{"From", m.From}, {"Date", m.Date}, {"Subject", m.Subject}, {"To", m.To}, {"Cc", m.Cc}} {
		if v := strings.TrimSpace(h[1]); v != "" {
			fmt.Fprintf(&head, "%s: %s\n", h[0], oneLine(v))
		}
	}
	quoted := m.Text
	if strings.TrimSpace(quoted) == "" && m.HTML != "" {
		quoted = htmlText(m.HTML)
	}
	quoted = strings.ReplaceAll(quoted, "\r\n", "\n")
	lead := ""
	if strings.TrimSpace(text) != "" {
		lead = "\n\n"
	}
	room := MaxBodyBytes - len(text) - len(lead) - head.Len() - 1 - len(cutNote)
	text += lead + head.String() + "\n" + cut(quoted, room)
	if strings.TrimSpace(htmlBody) == "" {
		return text, htmlBody
	}
	quote := "<br><br><div class=\"gmail_quote\">" + strings.ReplaceAll(html.EscapeString(strings.TrimSuffix(head.String(), "\n")), "\n", "<br>") + "<br><br>"
	room = (MaxBodyBytes - len(htmlBody) - len(quote) - 64 - len(cutNote)) / 6 // escaping grows a byte to at most 6 ("&quot;")
	quote += "<div style=\"white-space:pre-wrap\">" + html.EscapeString(cut(quoted, room)) + "</div></div>"
	return text, htmlBody + quote
}

// cutNote ends a quote that was cut short.
const cutNote = "\n[The rest of the forwarded message is left out: it is too long to quote.]"

// cut shortens s to at most n bytes (on a character boundary) and adds
// cutNote when it had to.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + cutNote
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

var (
	tagRE    = regexp.MustCompile(`(?is)<(script|style|title)\b[^>]*>.*?</(script|style|title)>|<[^>]*>`)
	breakRE  = regexp.MustCompile(`(?i)<br\s*/?>|</p>|</div>|</li>|</tr>|</h[1-6]>`)
	blanksRE = regexp.MustCompile(`\n{3,}`)
)

// htmlText is the text of an HTML body, for a message that has no plain
// one (a forward's quote, a send's summary): line breaks where blocks
// end, tags dropped with what scripts, styles and the title hold,
// entities decoded.
func htmlText(h string) string {
	h = breakRE.ReplaceAllString(h, "\n")
	h = tagRE.ReplaceAllString(h, "")
	h = html.UnescapeString(h)
	lines := strings.Split(h, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.TrimSpace(blanksRE.ReplaceAllString(strings.Join(lines, "\n"), "\n\n"))
}
