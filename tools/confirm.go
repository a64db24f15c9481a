package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/internal/ask"
	"github.com/drivemail/drivemail/internal/refusal"
)

// ConfirmSends says when send_email and send_draft ask their user
// before sending (serve --confirm-sends). create_draft never asks: a
// draft sends nothing. send_draft asks, or a model could send by
// create_draft and send_draft what no one confirmed.
type ConfirmSends int

const (
	// ConfirmAuto asks the users of clients that can be asked (form
	// elicitation) and sends unasked for the others.
	ConfirmAuto ConfirmSends = iota
	// ConfirmAlways asks every user, and refuses to send for a client
	// that cannot ask.
	ConfirmAlways
	// ConfirmOff never asks.
	ConfirmOff
)

// ParseConfirmSends reads --confirm-sends: auto, always or off.
func ParseConfirmSends(s string) (ConfirmSends, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return ConfirmAuto, nil
	case "always":
		return ConfirmAlways, nil
	case "off":
		return ConfirmOff, nil
	}
	return ConfirmAuto, fmt.Errorf("--confirm-sends %q: want auto (ask where the client can ask its user), always (and refuse to send where it cannot) or off", s)
}

func (c ConfirmSends) String() string {
	switch c {
	case ConfirmAlways:
		return "always"
	case ConfirmOff:
		return "off"
	}
	return "auto"
}

// confirmKey names the question within send_email: a 2026-07-28 client
// answers under it.
const confirmKey = "send"

// confirmSchema is the form: one boolean, ticked. Accepting it sends; a
// client that lets the user untick it and accept gets a decline. The
// spec's forms are flat objects of primitive properties, and every
// client that renders one renders a boolean.
var confirmSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"send": map[string]any{"type": "boolean", "title": "Send this email", "default": true},
	},
	"required": []string{"send"},
}

// confirmer asks one send_email call's user, once the message has passed
// every check (compose's Options.Confirm).
type confirmer struct {
	h    *handlers
	req  mcp.CallToolRequest
	mode ConfirmSends
	// retry is the input_required result a 2026-07-28 client is asked
	// with: the handler returns it instead of a result.
	retry *mcp.CallToolResult
}

// confirmation is how this call's send is confirmed: nil when it is not
// asked (create_draft, --confirm-sends off, or auto for a client that
// cannot ask), or a refusal when it must be and cannot (always).
func (h *handlers) confirmation(ctx context.Context, req mcp.CallToolRequest, draft bool) (*confirmer, error) {
	mode := h.deps.ConfirmSends
	switch {
	case draft || mode == ConfirmOff:
		return nil, nil
	case !ask.Possible(ctx):
		h.confirmed(ask.Unaskable.String())
		if mode == ConfirmAlways {
			return nil, h.cannotAsk()
		}
		return nil, nil
	}
	return &confirmer{h: h, req: req, mode: mode}, nil
}

// confirmed counts a question by how it ended (Deps.Confirmed).
func (h *handlers) confirmed(answer string) {
	if h.deps.Confirmed != nil {
		h.deps.Confirmed(answer)
	}
}

// confirm puts the summary to the user and says what became of it: nil
// to send, a refusal that says nothing was sent otherwise.
func (c *confirmer) confirm(ctx context.Context, s compose.Summary) error {
	answer, retry := ask.Form(ctx, c.req, ask.Question{Key: confirmKey, Message: summaryText(s), Schema: confirmSchema, Bind: s.Revision})
	if retry != nil {
		c.retry = retry
		// Never shown: the handler returns retry. It names, in compose's
		// "send not confirmed" line, why this call sent nothing.
		return refusal.New(kindConfirmAsked, "The user is being asked whether to send this email.")
	}
	err := c.h.answered(answer, c.mode)
	if answer.Outcome == ask.Accepted && err != nil {
		c.h.confirmed(ask.Declined.String()) // accepted unticked
	} else {
		c.h.confirmed(answer.Outcome.String())
	}
	return err
}

// answered turns the user's answer into what the send does.
func (h *handlers) answered(a ask.Answer, mode ConfirmSends) error {
	switch a.Outcome {
	case ask.Accepted:
		if send, given := a.Content["send"]; !given || send == true {
			return nil
		}
		// Anything but a plain yes is no: the form came back unticked.
		return refusal.New(kindSendDeclined, "The user did not confirm sending this email (they left \"Send this email\" unticked), so nothing was sent. "+
			"Do not send it again unless the user asks you to. %s", h.draftAdvice())
	case ask.Declined:
		return refusal.New(kindSendDeclined, "The user declined to send this email, so nothing was sent. Do not send it again unless the user asks you to. %s", h.draftAdvice())
	case ask.Cancelled:
		return refusal.New(kindSendCancelled, "The user closed the question whether to send this email without answering, so nothing was sent. "+
			"Ask the user what they want before calling send_email again. %s", h.draftAdvice())
	case ask.Unanswered:
		return refusal.Wrap(a.Err, kindSendUnanswered, "No answer came from the user to the question whether to send this email (drivemail waits %s), so nothing was sent. "+
			"Ask the user in the conversation whether to send it, and call send_email again only if they say so. %s", waitText(ask.DefaultWait), h.draftAdvice())
	}
	if mode == ConfirmAlways {
		return h.cannotAsk()
	}
	return nil // the client cannot be asked after all: auto sends unasked
}

// cannotAsk is --confirm-sends always's refusal for a client that cannot
// ask its user.
func (h *handlers) cannotAsk() error {
	return refusal.New(kindConfirmUnavailable, "This drivemail server sends an email only once its user has confirmed it, and this client cannot ask its user "+
		"(it declares no form elicitation, or this connection cannot carry the answer), so nothing was sent. %s "+
		"Or the user can connect drivemail from a client that asks before tools act, such as Claude Code, VS Code or Cursor.", h.draftAdvice())
}

// draftAdvice is the way to keep a message the user did not send.
func (h *handlers) draftAdvice() string {
	if h.deps.DraftsEnabled {
		return "To keep the message, offer create_draft (the same arguments): it saves a Gmail draft that the user can check and send themselves."
	}
	return "To change the message, ask the user what should be different."
}

// waitText says how long a wait is, in words.
func waitText(d time.Duration) string {
	if d >= 2*time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return fmt.Sprintf("%d seconds", d/time.Second)
}

// summaryText is the question the user reads: everything that will go,
// one field a line. Names, subjects and links come from anyone (a Drive
// file's owner, the sender of a mail answered): each is one field that
// none of its characters can break or hide (untrusted.go), and the body's
// lines are marked as quoted, so no line of it can pass for a header.
func summaryText(s compose.Summary) string {
	var b strings.Builder
	if s.SavedDraft != "" {
		b.WriteString("Send this Gmail draft as it is saved now? Nothing has been sent yet.\n\n")
	} else {
		b.WriteString("Send this email? Nothing has been downloaded or sent yet.\n\n")
	}
	b.WriteString(summaryFields(s))
	b.WriteString("\nAccept to send it now; decline to send nothing.")
	return visible(b.String(), true)
}

// summaryFields is everything that will go, one field a line: the header,
// the files by how they go, the body's first lines. The compose view's
// text result shows the same.
func summaryFields(s compose.Summary) string {
	var b strings.Builder
	if s.FromName != "" {
		fmt.Fprintf(&b, "From: %s <%s>\n", field(s.FromName, "<>"), field(s.From, "<>"))
	} else {
		fmt.Fprintf(&b, "From: %s\n", field(s.From, ""))
	}
	if s.ReplyTo != "" {
		fmt.Fprintf(&b, "Reply-To: %s\n", field(s.ReplyTo, ""))
	}
	for _, h := range []struct {
		name  string
		addrs []string
	}{{"To", s.To}, {"Cc", s.Cc}, {"Bcc", s.Bcc}} {
		if len(h.addrs) > 0 {
			fmt.Fprintf(&b, "%s: %s\n", h.name, addressList(h.addrs))
		}
	}
	fmt.Fprintf(&b, "Subject: %s\n", field(s.Subject, ""))
	if s.SavedDraft != "" {
		fmt.Fprintf(&b, "\nIts text and files are the draft's (id %s), as Drafts in Gmail shows them.\n", field(s.SavedDraft, ""))
	}
	for _, group := range []struct{ goes, title string }{
		{compose.GoesAttached, "Attachments"}, {compose.GoesInline, "Images in the body"}, {compose.GoesLinked, "Links in the body"},
	} {
		var lines []string
		for _, f := range s.Files {
			if f.Goes == group.goes {
				lines = append(lines, "- "+summaryFileLine(f))
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(&b, "\n%s (%d):\n%s\n", group.title, len(lines), strings.Join(lines, "\n"))
		}
	}
	if len(s.Body) > 0 {
		b.WriteString("\nThe message begins:\n")
		for _, line := range s.Body {
			b.WriteString("> " + visible(line, false) + "\n")
		}
		if s.BodyMore {
			b.WriteString("> …\n")
		}
	}
	if s.Signature {
		b.WriteString("\nThe sender's Gmail signature is added at the end.\n")
	}
	return b.String()
}

// addressList lists addresses, each one field.
func addressList(addrs []string) string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = field(a, ",")
	}
	return strings.Join(out, ", ")
}

// summaryFileLine describes one file of a summary: its name, then its size and
// type, or for a link where it points and who can open it.
func summaryFileLine(f compose.SummaryFile) string {
	name := field(f.Name, "")
	if f.Goes == compose.GoesLinked {
		who := "whoever its sharing in Google Drive allows"
		if f.Access != "" {
			who = field(f.Access, "")
		}
		if len(f.ShareWith) > 0 {
			who += ", once drivemail has shared it with " + addressList(f.ShareWith) + " as " + field(f.ShareRole, ",")
		}
		return fmt.Sprintf("%s: %s (who can open it: %s)", name, field(f.URL, ""), who)
	}
	var facts []string
	switch {
	case f.Bytes >= 0:
		facts = append(facts, humanBytes(f.Bytes))
	case f.ExportedAs != "":
		facts = append(facts, "size known once exported")
	default:
		facts = append(facts, "size not given in advance")
	}
	if f.ExportedAs != "" {
		facts = append(facts, "a Google file exported as "+f.ExportedAs)
	} else if f.MimeType != "" {
		facts = append(facts, field(f.MimeType, ","))
	}
	if f.Sheet != "" {
		facts = append(facts, "tab "+field(f.Sheet, ","))
	}
	switch f.From {
	case compose.FromGmail:
		facts = append(facts, "from a message in Gmail")
	case compose.FromClient:
		facts = append(facts, "from the chat")
	case compose.FromCall:
		facts = append(facts, "written by the assistant")
	}
	return name + " (" + strings.Join(facts, ", ") + ")"
}
