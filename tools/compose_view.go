package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/prepared"
	"github.com/drivemail/drivemail/views"
)

// Where the client renders MCP App views (it declared the extension: see
// views.Renders), send_email and create_draft do not send: they run every
// check, download nothing, and return the message for the compose view
// (views.ComposeURI), where the user reads it, edits the recipients,
// subject and text, removes files, and presses Send or Cancel; the view
// then calls send_prepared with the prepared id (prepared.Store) and the
// edits. The tools/list such a client gets links both tools to the view
// and lists send_prepared, which only a view may call; every other
// client gets the definitions it always had, and the sends it always had
// (asked first where --confirm-sends says so).

// forView reports whether this call's message goes to the compose view
// rather than out: the client renders views, the server can keep a
// prepared message, and the operator did not switch every question off.
func (h *handlers) forView(ctx context.Context) bool {
	return h.deps.Prepared != nil && h.deps.ConfirmSends != ConfirmOff && views.Renders(ctx)
}

// errPrepared ends a send at its confirmation, every check passed: the
// message goes to the compose view instead. compose logs it by its kind.
var errPrepared = refusal.New(kindPrepared, "The message is waiting for its user in the compose view.")

// prepare runs every check of the message creq (nothing downloaded,
// nothing sent) and returns it for the compose view.
func (h *handlers) prepare(ctx context.Context, acct *account.Account, req mcp.CallToolRequest, creq compose.Request, tool string, draft bool) (*mcp.CallToolResult, error) {
	summary, err := h.checkOnly(ctx, acct, creq, draft)
	if err != nil {
		return nil, err
	}
	id, expires, err := h.deps.Prepared.Seal(acct.ID(), prepared.Call{Tool: tool, Args: req.Params.RawArguments, Revision: summary.Revision})
	if errors.Is(err, prepared.ErrTooLarge) {
		return nil, refusal.New(kindPreparedTooLarge, "This message is too large for drivemail's compose view: its arguments are %s, and the view can hold %s. "+
			"Nothing was sent. Put the content written into the call in Drive instead (request_upload, or save_to_drive for a file in the chat) and attach it by id.",
			humanBytes(int64(len(req.Params.RawArguments))), humanBytes(prepared.MaxCallBytes))
	}
	if err != nil {
		return nil, &refusal.Unsent{Err: err}
	}
	view := composeData(summary, creq, id, expires)
	res := succeeded(preparedText(summary), PreparedResult{Prepared: PreparedState{ExpiresAt: view.ExpiresAt}})
	res.Meta = mcp.NewMetaFromMap(map[string]any{views.ComposeMeta: view})
	return res, nil
}

// checkOnly runs every check of the message creq, downloading and
// sending nothing, and returns its summary.
func (h *handlers) checkOnly(ctx context.Context, acct *account.Account, creq compose.Request, draft bool) (compose.Summary, error) {
	var summary compose.Summary
	opts := SendOptions{Draft: draft, ReadMail: h.deps.ReadMailEnabled && acct.MayReadMail(),
		Confirm: func(_ context.Context, s compose.Summary) error {
			summary = s
			return errPrepared
		}}
	if _, err := h.deps.Mail.Send(ctx, acct, creq, opts); !errors.Is(err, errPrepared) {
		if err == nil {
			// A send that asks for confirmation cannot end without it.
			err = errors.New("tools: a prepared message was sent without its confirmation")
		}
		return compose.Summary{}, err
	}
	return summary, nil
}

// PreparedResult is send_email's (and create_draft's) structuredContent
// when the message went to the compose view.
type PreparedResult struct {
	Prepared PreparedState `json:"prepared"`
}

// PreparedState says the message waits for its user, and until when.
type PreparedState struct {
	ExpiresAt time.Time `json:"expires_at"`
}

// ComposeData is what the compose view shows and sends back: the result's
// _meta["drivemail/compose"], which hosts give the view and not the
// model. Its values are exact; the view writes them as text.
type ComposeData struct {
	Prepared  string    `json:"prepared"`
	ExpiresAt time.Time `json:"expires_at"`
	Draft     bool      `json:"draft"`
	From      string    `json:"from"`
	To        []string  `json:"to"`
	Cc        []string  `json:"cc"`
	Bcc       []string  `json:"bcc"`
	Subject   string    `json:"subject"`
	// BodyText and BodyHTML are the bodies as the call gave them (a
	// forward's quote is added as it goes: Forwarding).
	BodyText   string        `json:"body_text"`
	BodyHTML   string        `json:"body_html"`
	Forwarding bool          `json:"forwarding"`
	Files      []ComposeFile `json:"files"`
}

// ComposeFile is one file of the message, in the message's order.
type ComposeFile struct {
	Name       string `json:"name"`
	MimeType   string `json:"mime_type"`
	Bytes      int64  `json:"bytes"` // -1: known only as it streams
	Goes       string `json:"goes"`  // attached, inline or linked
	From       string `json:"from"`  // drive, gmail, client or call
	ExportedAs string `json:"exported_as,omitempty"`
	Sheet      string `json:"sheet,omitempty"`
	URL        string `json:"url,omitempty"`
	Access     string `json:"access,omitempty"`
	// Removable: the call named this file, so the user may drop it (a
	// forwarded message's files go with it).
	Removable bool `json:"removable"`
}

// composeData is the view's data for a checked message.
func composeData(s compose.Summary, req compose.Request, id string, expires time.Time) ComposeData {
	d := ComposeData{
		Prepared: id, ExpiresAt: expires.UTC(), Draft: s.Draft, From: s.From,
		To: nonNil(s.To), Cc: nonNil(s.Cc), Bcc: nonNil(s.Bcc), Subject: s.Subject,
		BodyText: req.BodyText, BodyHTML: req.BodyHTML, Forwarding: req.Forward.ID != "",
		Files: make([]ComposeFile, len(s.Files)),
	}
	for i, f := range s.Files {
		d.Files[i] = ComposeFile{
			Name: f.Name, MimeType: f.MimeType, Bytes: f.Bytes, Goes: f.Goes, From: f.From,
			ExportedAs: f.ExportedAs, Sheet: f.Sheet, URL: f.URL, Access: f.Access,
			// Summary.Files follow the request's entries, and a forward's
			// files come after the call's own.
			Removable: i < len(req.Attachments),
		}
	}
	return d
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// preparedText is the result's text: what waits, for a host that shows
// only text, and what the model must not do.
func preparedText(s compose.Summary) string {
	var b strings.Builder
	what, act := "email", "send it or cancel"
	if s.Draft {
		what, act = "draft", "save it or cancel"
	}
	fmt.Fprintf(&b, "Not sent yet: the user is reviewing this %s in drivemail's compose view, where they can change the recipients, subject and text, remove files, and %s. "+
		"Do not call the tool again for it: the view tells you what the user did.\n\n", what, act)
	b.WriteString(summaryFields(s))
	return b.String()
}

// composeTool is send_email or create_draft (any of their definitions)
// for a client that renders views: linked to the compose view, in the
// spec's key and ChatGPT's, and with a result that may say the message
// waits there instead of what went.
func composeTool(t mcp.Tool) mcp.Tool {
	meta := views.ToolMeta(views.ComposeURI)
	if t.Meta != nil {
		for k, v := range t.Meta.AdditionalFields {
			meta[k] = v
		}
	}
	t.Meta = mcp.NewMetaFromMap(meta)
	var out map[string]any
	mustUnmarshal(t.RawOutputSchema, &out)
	delete(out, "required")
	out["properties"].(map[string]any)["prepared"] = map[string]any{
		"type":        "object",
		"description": "Instead of the rest: the message waits for the user in the compose view; nothing was sent.",
		"properties":  map[string]any{"expires_at": map[string]any{"type": "string"}},
	}
	t.RawOutputSchema = mustMarshal(out)
	return t
}
