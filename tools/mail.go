package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/internal/refusal"
)

// sendEmailDescription is what a model reads before its first send: what
// it may not do, and the limits of the whole call, which are compose's.
// Where each file comes from is said once, in its argument's description.
var sendEmailDescription = fmt.Sprintf(`Send an email from the user's Gmail with files attached by id: drivemail streams their bytes, so never put file contents here.

<img src="cid:FILE_NAME"> in body_html shows an attached image inline. At most %d files and %d MiB in all; executables and scripts are refused, also inside archives. Nothing is sent unless every attachment resolves; a repeated call sends again.`,
	compose.MaxFiles, compose.MaxAttachmentBytes>>20)

const createDraftDescription = `Like send_email (same arguments and limits), but saves a Gmail draft for the user to review and send: the result gives its draft_id and a Gmail link to it.`

// sendEmailTool is send_email's definition; mail adds the arguments that
// read the user's mail (mail_filter.go), fileTransfer file_uris.
func sendEmailTool(fileTransfer, mail bool) mcp.Tool {
	input, output, description := schema("send_email.input"), schema("send_email.output"), sendEmailDescription
	if mail {
		input, output, description = mailSendInput(), mailSendOutput(), sendEmailDescription+mailSendNote
	}
	if fileTransfer {
		input = withFileURIs(input, true)
	}
	t := newTool("send_email", "Send an email", description, input, output,
		hints{readOnly: false, destructive: true, idempotent: false, openWorld: true})
	t.Meta = fileParamsMeta()
	return t
}

// createDraftTool is create_draft's definition, with the arguments of the
// matching send_email.
func createDraftTool(fileTransfer, mail bool) mcp.Tool {
	input, output, description := draftInput(), draftOutput(), createDraftDescription
	if mail {
		input, output, description = draftInputOf(mailSendInput()), draftOutputOf(mailSendOutput()), createDraftDescription+mailDraftNote
	}
	if fileTransfer {
		input = withFileURIs(input, false)
	}
	t := newTool("create_draft", "Save a Gmail draft", description, input, output,
		hints{readOnly: false, destructive: true, idempotent: false, openWorld: true})
	t.Meta = fileParamsMeta()
	return t
}

// sendEmailFields are send_email's (and create_draft's) arguments, with
// the spellings other mail tools use for the bodies.
var sendEmailFields = fields{
	names: []string{"to", "cc", "bcc", "subject", "body_text", "body_html", "attachments", filesArg, "thread_id", "in_reply_to", "references",
		"reply_to", "reply_all", "forward", "from", "signature"},
	aliases: map[string]string{"body": "body_text", "text": "body_text", "html": "body_html"},
}

func (h *handlers) sendEmail(ctx context.Context, acct *account.Account, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return h.send(ctx, acct, req, "send_email", false)
}

func (h *handlers) createDraft(ctx context.Context, acct *account.Account, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if !acct.MayDraft() {
		return nil, h.draftScopeRefusal()
	}
	return h.send(ctx, acct, req, "create_draft", true)
}

// draftScopeRefusal says why a draft cannot be saved and what to do.
func (h *handlers) draftScopeRefusal() error {
	if h.deps.DraftsEnabled {
		return refusal.New(kindDraftsNotGranted, "Saving drafts needs permission to manage the user's Gmail drafts, which this Google account has not granted. "+
			"Ask the user to reconnect drivemail (sign in again) and allow drafts on Google's consent page; or use send_email to send the message now.")
	}
	return refusal.New(kindDraftsDisabled, "This drivemail server does not ask Google for permission to manage drafts (it was started without --drafts), so create_draft cannot work. "+
		"Use send_email to send the message now; or ask whoever runs drivemail to restart it with --drafts, then reconnect (sign in again).")
}

func (h *handlers) send(ctx context.Context, acct *account.Account, req mcp.CallToolRequest, tool string, draft bool) (*mcp.CallToolResult, error) {
	creq, err := parseSend(req.Params.RawArguments, tool, h.deps.FileTransfer)
	if err != nil {
		return nil, err
	}
	if err := h.checkGrants(acct, creq); err != nil {
		return nil, err
	}
	if h.forView(ctx) {
		return h.prepare(ctx, acct, req, creq, tool, draft) // the user sends it from the compose view
	}
	confirm, err := h.confirmation(ctx, req, draft)
	if err != nil {
		return nil, err
	}
	// Where mail may be read, a thread_id reply completes itself from its thread.
	opts := SendOptions{Draft: draft, Progress: progressFunc(ctx, req), ReadMail: h.deps.ReadMailEnabled && acct.MayReadMail()}
	if confirm != nil {
		opts.Confirm = confirm.confirm
	}
	res, err := h.deps.Mail.Send(ctx, acct, creq, opts)
	if confirm != nil && confirm.retry != nil {
		return confirm.retry, nil // 2026-07-28: the client asks, then calls again
	}
	if err != nil {
		return nil, err
	}
	return sentResult(creq, res, draft), nil
}

// checkGrants refuses a message its user's grants cannot carry: mail
// arguments without a Gmail read scope, from or signature without one
// that reads the send-as settings.
func (h *handlers) checkGrants(acct *account.Account, creq compose.Request) error {
	if err := h.checkMailSend(acct, creq); err != nil {
		return err
	}
	return h.checkSendAs(acct, creq)
}

// sentResult says what went out: the text, and the result with every
// list present.
func sentResult(creq compose.Request, res compose.Result, draft bool) *mcp.CallToolResult {
	if res.Attached == nil {
		res.Attached = []compose.Attached{}
	}
	if res.Inline == nil {
		res.Inline = []compose.Inline{}
	}
	if res.Linked == nil {
		res.Linked = []compose.Linked{}
	}
	return succeeded(sendText(creq, res, draft), res)
}

// parseSend validates send_email's (and create_draft's) arguments;
// fileTransfer adds file_uris.
func parseSend(raw []byte, tool string, fileTransfer bool) (compose.Request, error) {
	var r compose.Request
	f := sendEmailFields
	if fileTransfer {
		f.names = append(append([]string(nil), f.names...), fileURIsArg)
	}
	m, err := decodeObject(raw, f, "The arguments of "+tool)
	if err != nil {
		return r, err
	}
	if err = parseReplyArgs(m, &r); err != nil {
		return r, err
	}
	if err = parseSendAs(m, &r); err != nil {
		return r, err
	}
	if r.To, err = m.addresses("to"); err != nil {
		return r, err
	}
	if len(r.To) == 0 && r.ReplyTo.ID == "" {
		return r, refuse("\"to\" is required: give at least one recipient address, such as \"ana@example.com\".")
	}
	if r.Cc, err = m.addresses("cc"); err != nil {
		return r, err
	}
	if r.Bcc, err = m.addresses("bcc"); err != nil {
		return r, err
	}
	if r.ReplyTo.ID != "" || r.Forward.ID != "" {
		r.Subject, err = m.str("subject") // the message answered or forwarded gives one
	} else {
		r.Subject, err = m.requiredStr("subject", "give the message a subject line.")
	}
	if err != nil {
		return r, err
	}
	if r.BodyText, err = m.str("body_text"); err != nil {
		return r, err
	}
	if r.BodyHTML, err = m.str("body_html"); err != nil {
		return r, err
	}
	if r.Attachments, err = parseAttachments(m["attachments"]); err != nil {
		return r, err
	}
	held, err := parseClientFiles(m[filesArg], len(r.Attachments)+1)
	if err != nil {
		return r, err
	}
	r.Attachments = append(r.Attachments, held...)
	uris, err := parseFileURIs(m[fileURIsArg], len(r.Attachments)+1)
	if err != nil {
		return r, err
	}
	r.Attachments = append(r.Attachments, uris...)
	if strings.TrimSpace(r.BodyText) == "" && strings.TrimSpace(r.BodyHTML) == "" && len(r.Attachments) == 0 && r.Forward.ID == "" {
		return r, refuse("The message is empty: give \"body_text\" or \"body_html\", or attachments.")
	}
	if r.ThreadID, err = m.str("thread_id"); err != nil {
		return r, err
	}
	if r.InReplyTo, err = m.str("in_reply_to"); err != nil {
		return r, err
	}
	if r.References, err = m.stringList("references", "a list of Message-IDs, such as [\"<abc@mail.gmail.com>\"], or one string"); err != nil {
		return r, err
	}
	return r, nil
}

// sendText says in a few lines what went out. File and tab names come
// from Drive (anyone may choose them) and addresses from the caller: each
// is one field that none of its characters can break (untrusted.go).
func sendText(req compose.Request, res compose.Result, draft bool) string {
	var b strings.Builder
	from := ""
	if res.From != "" {
		from = " from " + field(res.From, "")
	}
	if draft {
		fmt.Fprintf(&b, "Draft saved (draft id %s, message id %s, thread %s, Message-ID %s, %s), addressed to %s%s.",
			res.DraftID, res.ID, res.ThreadID, res.MessageID, humanBytes(res.SizeBytes), recipientsText(sentTo(req, res)), from)
	} else {
		fmt.Fprintf(&b, "Sent to %s%s (message id %s, thread %s, Message-ID %s, %s).",
			recipientsText(sentTo(req, res)), from, res.ID, res.ThreadID, res.MessageID, humanBytes(res.SizeBytes))
	}
	switch {
	case res.Signed && res.Signature:
		b.WriteString("\nIt ends with the Gmail signature of " + field(res.From, "") + ".")
	case res.Signed:
		b.WriteString("\nNo signature was added: " + field(res.From, "") + " has no Gmail signature.")
	}
	if note := threadNote(req, res); note != "" {
		b.WriteString("\n" + note)
	}
	if len(res.Attached) > 0 {
		parts := make([]string, len(res.Attached))
		for i, a := range res.Attached {
			parts[i] = fmt.Sprintf("%s (%s", field(a.Name, ";"), humanBytes(a.Bytes))
			if a.ExportedAs != "" {
				parts[i] += ", exported as " + a.ExportedAs
			}
			if a.Sheet != "" {
				parts[i] += ", tab " + field(a.Sheet, ";")
			}
			parts[i] += ")"
		}
		b.WriteString("\nAttached: " + strings.Join(parts, "; ") + ".")
	}
	if len(res.Inline) > 0 {
		names := make([]string, len(res.Inline))
		for i, in := range res.Inline {
			names[i] = field(in.Name, ",")
		}
		b.WriteString("\nShown inline: " + strings.Join(names, ", ") + ".")
	}
	if len(res.Linked) > 0 {
		parts := make([]string, len(res.Linked))
		for i, l := range res.Linked {
			parts[i] = field(l.Name, ";") + " " + field(l.URL, ";") + accessText(l)
		}
		b.WriteString("\nLinked in the body: " + strings.Join(parts, "; ") + ".")
	}
	if res.Link != "" {
		b.WriteString("\nThe user can open it in Gmail: " + res.Link)
	}
	return b.String()
}

// threadNote says how a reply was threaded when that is not what the
// caller may have expected: Gmail started a new conversation, the subject
// was given a reply prefix or was replaced by the thread's, or the reply
// threads only for its recipients.
func threadNote(req compose.Request, res compose.Result) string {
	var notes []string
	switch {
	case res.SubjectFromThread:
		notes = append(notes, fmt.Sprintf("The subject went as %q, the thread's: Gmail keeps a reply in its thread only when the subjects match.", res.Subject))
	case res.Subject != "" && strings.TrimSpace(res.Subject) != strings.TrimSpace(req.Subject):
		as := "a reply's"
		if req.Forward.ID != "" {
			as = "a forward's"
		}
		notes = append(notes, fmt.Sprintf("The subject went as %q, as %s.", res.Subject, as))
	}
	asked := req.ThreadID
	if res.AskedThread != "" {
		asked = res.AskedThread // a reply_to's
	}
	switch {
	case asked != "" && res.ThreadID != asked:
		notes = append(notes, fmt.Sprintf("Gmail put it in a new conversation (thread %s), not in thread %s: Gmail joins a thread only when in_reply_to "+
			"names a message of that thread and the subject is the thread's own (\"Re: \" aside). To continue that conversation, reply again with its subject.",
			res.ThreadID, asked))
	case req.ThreadID == "" && (req.InReplyTo != "" || len(req.References) > 0):
		notes = append(notes, "The recipients' mail programs thread it with the message it answers; in the sender's Gmail it starts a new conversation, "+
			"as no thread_id was given.")
	}
	return strings.Join(notes, " ")
}

// sentTo is whom the message went to: the addresses the call gave, or a
// reply's defaults.
func sentTo(req compose.Request, res compose.Result) []string {
	if len(res.Recipients) > 0 {
		return res.Recipients
	}
	return req.To
}

// recipientsText lists addresses for the result's text.
func recipientsText(to []string) string {
	out := make([]string, len(to))
	for i, a := range to {
		out[i] = field(a, "")
	}
	return strings.Join(out, ", ")
}

// accessText says what drivemail did or knows of who can open a link:
// whom it shared the file with, or that it could not check.
func accessText(l compose.Linked) string {
	switch {
	case len(l.SharedWith) > 0:
		return fmt.Sprintf(" (drivemail shared it with %s as %s)", recipientsText(l.SharedWith), l.SharedRole)
	case l.Access == compose.AccessUnchecked:
		return " (" + strings.TrimSuffix(field(l.AccessNote, ";"), ".") + ")"
	}
	return ""
}
