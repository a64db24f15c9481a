package tools

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/drivemail/drivemail/internal/identity"
)

// The tools that read mail need a Gmail read scope (gmail.readonly), a
// restricted scope a deployment opts into (serve --read-mail) and a user
// may decline on Google's consent page. A tool that cannot work is not
// shown: Filter, given to the MCP server, lists search_mail and
// save_to_drive, and send_email and create_draft with their mail
// arguments (reply_to, reply_all, forward, Gmail attachments), only to a
// user of a deployment that asks for the scope and who granted it. The
// transport is stateless, so the filter reads the user in each request's
// context; the other tools' definitions stay as they are, so the
// default tools/list weighs what it did.

// mailOnly are the tools listed only when mail can be read.
var mailOnly = map[string]bool{"search_mail": true, "save_to_drive": true}

// Filter is the MCP server's tool filter (server.WithToolFilter): it
// hides the mail tools, or swaps in the mail definitions of send_email
// and create_draft, for the user in ctx. At tools/call it hides the mail
// tools from a user who may not use them.
func Filter(d Deps) server.ToolFilterFunc {
	send, draft := mailSendEmailTool(), mailCreateDraftTool()
	return func(ctx context.Context, list []mcp.Tool) []mcp.Tool {
		on := d.ReadMailEnabled && canReadMail(ctx)
		out := make([]mcp.Tool, 0, len(list))
		for _, t := range list {
			switch {
			case mailOnly[t.Name] && !on:
				continue
			case t.Name == "send_email" && on:
				t = send
			case t.Name == "create_draft" && on:
				t = draft
			}
			out = append(out, t)
		}
		return out
	}
}

// canReadMail reports whether the user in ctx granted a scope that
// reads mail.
func canReadMail(ctx context.Context) bool {
	u, ok := identity.FromContext(ctx)
	return ok && hasAnyScope(u, mailReadScopes)
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
	props["to"].(map[string]any)["description"] = "Recipient addresses; \"Ana Lima <ana@example.com>\" works too. Required unless reply_to."
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

func mailSendEmailTool() mcp.Tool {
	return newTool("send_email", "Send an email with Drive attachments", sendEmailDescription+mailSendNote,
		mailSendInput(), mailSendOutput(),
		hints{readOnly: false, destructive: false, idempotent: false, openWorld: true})
}

func mailCreateDraftTool() mcp.Tool {
	var in map[string]any
	mustUnmarshal(mailSendInput(), &in)
	dropDescriptions(in["properties"])
	var out map[string]any
	mustUnmarshal(mailSendOutput(), &out)
	out["properties"].(map[string]any)["draft_id"] = map[string]any{"type": "string"}
	out["required"] = append(out["required"].([]any), "draft_id")
	return newTool("create_draft", "Save a Gmail draft with Drive attachments", createDraftDescription+" reply_to and forward work here too.",
		mustMarshal(in), mustMarshal(out),
		hints{readOnly: false, destructive: false, idempotent: false, openWorld: true})
}
