package tools

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/drivemail/drivemail/views"
)

// The tools that read mail need a Gmail read scope (gmail.readonly), a
// restricted scope a deployment opts into (serve --read-mail) and a user
// may decline on Google's consent page. A tool that cannot work is not
// shown: Filter, given to the MCP server, lists search_mail, and the mail
// definitions of send_email, create_draft (reply_to, reply_all, forward,
// Gmail attachments) and save_to_drive (message_id and attachment), only
// to a user of a deployment that asks for the scope and who granted it.
// save_to_drive is listed to everyone with its file argument, which
// needs no mail: see saveToDriveTool. The transport is stateless, so the
// filter opens each request's caller's account (Deps.Account); the default
// definitions stay as they are, so the default tools/list weighs what it
// did.

// mailOnly are the tools listed only when mail can be read, and
// draftsOnly those listed only on a server that asks for the drafts
// scope (--drafts).
var (
	mailOnly   = map[string]bool{"search_mail": true}
	draftsOnly = map[string]bool{"send_draft": true}
)

// viewOnly are the tools listed only to a client that renders views
// (compose_view.go), and composed the tools linked to the compose view
// there.
var (
	viewOnly = map[string]bool{"send_prepared": true}
	composed = map[string]bool{"send_email": true, "create_draft": true}
)

// Filter is the MCP server's tool filter (server.WithToolFilter): it
// hides the mail tools, or swaps in the mail definitions of send_email,
// create_draft and save_to_drive, for the caller, and send_draft on a
// server without --drafts; and for a client that renders views, links
// send_email and create_draft to the compose view and lists
// send_prepared. At tools/call it hides the tools a user may not use.
func Filter(d Deps) server.ToolFilterFunc {
	withMail := map[string]mcp.Tool{
		"send_email":    sendEmailTool(d.FileTransfer, true),
		"create_draft":  createDraftTool(d.FileTransfer, true),
		"save_to_drive": saveToDriveTool(true),
	}
	// The compose view's definitions, without and with the mail arguments.
	viewed := map[bool]map[string]mcp.Tool{
		false: {"send_email": composeTool(sendEmailTool(d.FileTransfer, false)), "create_draft": composeTool(createDraftTool(d.FileTransfer, false))},
		true:  {"send_email": composeTool(withMail["send_email"]), "create_draft": composeTool(withMail["create_draft"])},
	}
	pickTool := viewedPickTool()
	h := &handlers{deps: d}
	return func(ctx context.Context, list []mcp.Tool) []mcp.Tool {
		on := false
		if d.ReadMailEnabled && d.Account != nil {
			acct, err := d.Account(ctx)
			on = err == nil && acct.MayReadMail()
		}
		apps, renders := h.forView(ctx), views.Renders(ctx)
		out := make([]mcp.Tool, 0, len(list))
		for _, t := range list {
			if mailOnly[t.Name] && !on || draftsOnly[t.Name] && !d.DraftsEnabled || viewOnly[t.Name] && !apps {
				continue
			}
			switch {
			case composed[t.Name] && apps:
				t = viewed[on][t.Name]
			case t.Name == "drive_pick" && renders:
				t = pickTool
			case on:
				if mt, ok := withMail[t.Name]; ok {
					t = mt
				}
			}
			out = append(out, t)
		}
		return out
	}
}

// mailSendArgs are the properties send_email gains where mail can be
// read; they are listed there only, to keep the default tools/list small.
const mailSendArgs = `{
  "reply_to": {
    "type": "string",
    "description": "A message id from search_mail to answer: sets thread_id, in_reply_to, references, \"Re: \" subject and to (its sender) as Gmail does; to, cc and subject override."
  },
  "reply_all": {
    "type": "boolean",
    "description": "With reply_to: to and cc everyone it went to, but the user."
  },
  "forward": {
    "type": "string",
    "description": "A message id to pass on (needs to): its text is quoted and its attachments go too."
  },
  "from": {
    "type": "string",
    "description": "Send as this verified Gmail send-as alias of the user; default their own address."
  },
  "signature": {
    "type": "boolean",
    "description": "true: end the bodies with the sender's Gmail signature."
  }
}`

// mailAttachmentItem is the attachments entry of a Gmail attachment.
const mailAttachmentItem = `{
  "type": "object",
  "properties": {
    "message_id": {"type": "string", "description": "A message id from search_mail."},
    "attachment": {"type": "string", "description": "The attachment's file name, as search_mail lists it."},
    "name": {"type": "string"}
  },
  "required": ["message_id", "attachment"],
  "additionalProperties": false
}`

// mailSendInput is send_email's input schema with the mail arguments: no
// argument is required, since a reply finds its recipients and subject.
func mailSendInput() json.RawMessage {
	var s map[string]any
	mustUnmarshal(schema("send_email.input"), &s)
	props := s["properties"].(map[string]any)
	var extra map[string]any
	mustUnmarshal([]byte(mailSendArgs), &extra)
	for k, v := range extra {
		props[k] = v
	}
	atts := props["attachments"].(map[string]any)
	items := atts["items"].(map[string]any)
	var item any
	mustUnmarshal([]byte(mailAttachmentItem), &item)
	items["anyOf"] = append(items["anyOf"].([]any), item)
	atts["description"] = atts["description"].(string) + " A Gmail attachment: {\"message_id\", \"attachment\": NAME}."
	props["to"].(map[string]any)["description"] = "Addresses; \"Ana Lima <ana@example.com>\" works too. Required unless reply_to."
	// Here drivemail can read the thread, so a thread_id alone answers its
	// latest message, and a reply keeps the thread's subject (compose's
	// withThreadSubject).
	props["thread_id"].(map[string]any)["description"] = "To reply: the thread's id. Alone, it answers the thread's latest message."
	props["subject"].(map[string]any)["description"] = "For a reply, the thread's own subject (\"Re: \" is added). With thread_id, one that differs, or none, becomes the thread's: Gmail threads only on a matching subject."
	delete(s, "required")
	return mustMarshal(s)
}

// mailSendOutput is send_email's output schema, and the message each
// Gmail attachment came from.
func mailSendOutput() json.RawMessage {
	var s map[string]any
	mustUnmarshal(schema("send_email.output"), &s)
	attached := s["properties"].(map[string]any)["attached"].(map[string]any)
	attached["items"].(map[string]any)["properties"].(map[string]any)["from_message"] = map[string]any{"type": "string"}
	return mustMarshal(s)
}

const mailSendNote = `

Mail: reply_to answers a message from search_mail in its conversation; forward passes one on with its attachments; {"message_id": "…", "attachment": "invoice.pdf"} attaches a file from Gmail. subject is needed only for a new message.`

const mailDraftNote = " reply_to and forward work here too."
