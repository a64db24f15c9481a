package tools

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
)

// The mail arguments of send_email and create_draft: reply_to,
// reply_all, forward, and attachments given as {"message_id",
// "attachment"}. They are read whatever the deployment; usesMail then
// tells the handler to check that mail may be read.

// findMessage is the advice for an argument that names no message.
const findMessage = "Find the message with search_mail and pass its id."

// parseMessageID reads a Gmail message id (handle.ParseMessage) and
// words a spelling it does not accept; what names the argument.
func parseMessageID(s, what string) (handle.Message, error) {
	m, err := handle.ParseMessage(s)
	if err == nil {
		return m, nil
	}
	var se *handle.SyntaxError
	if !errors.As(err, &se) {
		return m, err
	}
	q := truncate(strings.TrimSpace(s), 80)
	switch se.Problem {
	case handle.Empty:
		return m, refusal.New(kindBadMessageID, "%s is empty. %s", what, findMessage)
	case handle.HeaderID:
		return m, refusal.New(kindBadMessageID, "%s: %q is a Message-ID header, not Gmail's id of a message. search_mail finds it with rfc822msgid:%s; pass the id it returns.",
			what, q, strings.Trim(q, "<>"))
	case handle.MailLink:
		return m, refusal.New(kindBadMessageID, "%s: %q is a link into Gmail, whose ids are not the API's. %s", what, q, findMessage)
	}
	return m, refusal.New(kindBadMessageID, "%s: %q is not a Gmail message id (ids are letters and digits, such as 18f3a2b4c5d6e7f8). %s", what, q, findMessage)
}

// mailAttachmentFields are the keys of a Gmail attachment entry.
var mailAttachmentFields = fields{names: []string{"message_id", "attachment", "name"}}

// isMailAttachment reports whether an attachment object names a Gmail
// attachment (it has message_id or attachment, in any spelling).
func isMailAttachment(raw json.RawMessage) bool {
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil {
		return false
	}
	for k := range keys {
		if n := mailAttachmentFields.nameOf(k); n == "message_id" || n == "attachment" {
			return true
		}
	}
	return false
}

// parseMailAttachment reads an attachments entry that names a Gmail
// attachment: message_id and attachment, and name to rename it.
func parseMailAttachment(raw json.RawMessage, what string) (compose.Attachment, error) {
	var a compose.Attachment
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(raw, &keys)
	for k := range keys {
		switch n := attachmentFields.nameOf(k); {
		case slices.Contains(sourceKeys, n):
			return a, refuse("%s has \"message_id\" and %q; give exactly one source per attachment: a Gmail attachment is {\"message_id\", \"attachment\"} alone, with \"name\" to rename it.", what, k)
		case n != "" && n != "name":
			return a, refuse("%s: %q does not apply to a Gmail attachment, which goes as it is. Leave it out.", what, k)
		}
	}
	m, err := decodeObject(raw, mailAttachmentFields, what)
	if err != nil {
		return a, err
	}
	id, err := m.requiredStr("message_id", "the id of the message that has the file (search_mail finds it).")
	if err != nil {
		return a, prefixed(what, err)
	}
	msg, err := parseMessageID(id, what+"'s \"message_id\"")
	if err != nil {
		return a, err
	}
	name, err := m.str("attachment") // compose refuses a blank one
	if err != nil {
		return a, prefixed(what, err)
	}
	if a.Name, err = m.str("name"); err != nil {
		return a, prefixed(what, err)
	}
	a.Source = compose.GmailAttachment{Message: msg, Name: name}
	return a, nil
}

// parseReplyArgs reads reply_to, reply_all and forward.
func parseReplyArgs(m object, r *compose.Request) error {
	for _, k := range []string{"reply_to", "forward"} {
		s, err := m.str(k)
		if err != nil {
			return err
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		msg, err := parseMessageID(s, "\""+k+"\"")
		if err != nil {
			return err
		}
		if k == "reply_to" {
			r.ReplyTo = msg
		} else {
			r.Forward = msg
		}
	}
	var err error
	r.ReplyAll, err = m.bool("reply_all")
	return err
}

// usesMail reports whether a send reads the user's mail.
func usesMail(r compose.Request) bool {
	if r.ReplyTo.ID != "" || r.Forward.ID != "" || r.ReplyAll {
		return true
	}
	for _, a := range r.Attachments {
		if _, ok := a.Source.(compose.GmailAttachment); ok {
			return true
		}
	}
	return false
}

// checkMailSend refuses a send that reads mail where mail cannot be read.
func (h *handlers) checkMailSend(acct *account.Account, r compose.Request) error {
	if !usesMail(r) {
		return nil
	}
	return h.mayReadMail(acct)
}
