package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/prepared"
	"github.com/drivemail/drivemail/views"
)

// send_prepared is the compose view's Send and Cancel: only a view calls
// it (its visibility is ["app"], so a host that renders views does not
// list it to the model), with the id of the message send_email or
// create_draft prepared and what the user changed. The message is the
// prepared call with those edits, parsed by the same rules (an edited
// recipient is checked as any recipient is), and sent by the same path,
// which runs every check again; the id is spent once they have passed,
// just before the first byte, so a refusal (an address mistyped) leaves
// it for another try. Nothing can be added: the edits are the recipients,
// the subject, the bodies, and files to drop. The message as it was shown
// is checked once more first: a file that changed since is shown again
// rather than sent.

const sendPreparedDescription = `Called by drivemail's compose view, not by the model: sends (or saves as a draft) the email send_email or create_draft prepared for the user's review, with the user's edits, or cancels it.`

// sendPreparedFields are send_prepared's arguments.
var sendPreparedFields = fields{names: []string{"prepared", "cancel", "to", "cc", "bcc", "subject", "body_text", "body_html", "drop"}}

// editedFields are the arguments of the prepared call an edit replaces.
var editedFields = []string{"to", "cc", "bcc", "subject", "body_text", "body_html"}

func sendPreparedTool() mcp.Tool {
	t := newTool("send_prepared", "Send a reviewed email", sendPreparedDescription,
		schema("send_prepared.input"), sendPreparedOutput(),
		hints{readOnly: false, destructive: true, idempotent: false, openWorld: true})
	t.Meta = mcp.NewMetaFromMap(views.AppOnlyMeta())
	return t
}

// sendPreparedOutput is what went (create_draft's output, which is
// send_email's and the draft's id), or that the message was cancelled:
// one of the two, so nothing is required.
func sendPreparedOutput() json.RawMessage {
	var s map[string]any
	mustUnmarshal(draftOutput(), &s)
	delete(s, "required")
	s["properties"].(map[string]any)["cancelled"] = map[string]any{"type": "boolean"}
	return mustMarshal(s)
}

// CancelledResult is send_prepared's structuredContent for a cancel.
type CancelledResult struct {
	Cancelled bool `json:"cancelled"`
}

func (h *handlers) sendPrepared(ctx context.Context, acct *account.Account, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if h.deps.Prepared == nil {
		return nil, refusal.New(kindPreparedInvalid, "This drivemail server keeps no prepared messages, so there is nothing to send. Ask the assistant to send the email again.")
	}
	args, err := decodeObject(req.Params.RawArguments, sendPreparedFields, "The arguments of send_prepared")
	if err != nil {
		return nil, err
	}
	id, err := args.requiredStr("prepared", "give the id the compose view was shown.")
	if err != nil {
		return nil, err
	}
	msg, err := h.deps.Prepared.Open(acct.ID(), id)
	if err != nil {
		return nil, preparedRefusal(err)
	}
	cancel, err := args.bool("cancel")
	if err != nil {
		return nil, err
	}
	if cancel {
		if err := h.deps.Prepared.Spend(ctx, msg); err != nil {
			return nil, preparedRefusal(err)
		}
		return succeeded("Cancelled in the compose view: nothing was sent, and the prepared message cannot be sent any more.", CancelledResult{Cancelled: true}), nil
	}
	draft := msg.Call.Tool == "create_draft"
	if draft && !acct.MayDraft() {
		return nil, h.draftScopeRefusal()
	}
	creq, err := h.editedRequest(msg.Call, args)
	if err != nil {
		return nil, err
	}
	if err := h.checkUnchanged(ctx, acct, msg.Call, draft); err != nil {
		return nil, err
	}
	if err := h.checkGrants(acct, creq); err != nil {
		return nil, err
	}
	opts := SendOptions{Draft: draft, Progress: progressFunc(ctx, req), ReadMail: h.deps.ReadMailEnabled && acct.MayReadMail(),
		// The user pressed Send: spend the id once every check has passed,
		// before the first byte.
		Confirm: func(ctx context.Context, _ compose.Summary) error {
			if err := h.deps.Prepared.Spend(ctx, msg); err != nil {
				return preparedRefusal(err)
			}
			return nil
		}}
	res, err := h.deps.Mail.Send(ctx, acct, creq, opts)
	if err != nil {
		return nil, err
	}
	return sentResult(creq, res, draft), nil
}

// checkUnchanged checks the message as it was shown again, sending
// nothing: its files must be the versions the user saw (Drive's checksum
// and modification time, a Gmail message's part, the bytes the call
// wrote, each link's access), or the user would send what they did not
// read; such a message is refused and prepared again.
func (h *handlers) checkUnchanged(ctx context.Context, acct *account.Account, call prepared.Call, draft bool) error {
	shown, err := parseSend(call.Args, call.Tool, h.deps.FileTransfer)
	if err != nil {
		return err
	}
	now, err := h.checkOnly(ctx, acct, shown, draft)
	if err != nil {
		return err
	}
	if now.Revision != call.Revision {
		return refusal.New(kindPreparedChanged, "The message changed after the user saw it in the compose view (a file was edited, renamed or shared anew since), so nothing was sent. "+
			"Ask the assistant to prepare it again, to see it as it is now.")
	}
	return nil
}

// editedRequest is the prepared call with the user's edits in place of
// the fields they changed, read by send_email's own parser, and without
// the files they dropped.
func (h *handlers) editedRequest(call prepared.Call, edits object) (compose.Request, error) {
	orig, err := decodeObject(call.Args, sendEmailFields, "The prepared call")
	if err != nil {
		return compose.Request{}, err
	}
	for _, k := range editedFields {
		if v, ok := edits[k]; ok {
			orig[k] = v
		}
	}
	merged, err := json.Marshal(orig)
	if err != nil {
		return compose.Request{}, fmt.Errorf("tools: the edited call: %w", err)
	}
	creq, err := parseSend(merged, call.Tool, h.deps.FileTransfer)
	if err != nil {
		return compose.Request{}, err
	}
	drop, err := dropList(edits, len(creq.Attachments))
	if err != nil {
		return compose.Request{}, err
	}
	kept := creq.Attachments[:0:0]
	for i, a := range creq.Attachments {
		if !slices.Contains(drop, i) {
			kept = append(kept, a)
		}
	}
	creq.Attachments = kept
	if strings.TrimSpace(creq.BodyText) == "" && strings.TrimSpace(creq.BodyHTML) == "" && len(creq.Attachments) == 0 && creq.Forward.ID == "" {
		return compose.Request{}, refuse("The message is now empty: give it a text, or keep a file.")
	}
	return creq, nil
}

// dropList reads drop: the indexes, in the compose view's list, of files
// the user removed, each one the call named (of n).
func dropList(edits object, n int) ([]int, error) {
	raw, ok := edits["drop"]
	if !ok {
		return nil, nil
	}
	var drop []int
	if err := json.Unmarshal(raw, &drop); err != nil {
		return nil, refuse("\"drop\" must be a list of file numbers from the compose view, such as [0, 2].")
	}
	for _, i := range drop {
		if i < 0 || i >= n {
			return nil, refuse("\"drop\" names file %d, and the message has %d files the call named (numbered from 0); a forwarded message's files go with it.", i, n)
		}
	}
	return drop, nil
}

// preparedRefusal says why a prepared id does nothing.
func preparedRefusal(err error) error {
	switch {
	case errors.Is(err, prepared.ErrInvalid):
		return refusal.New(kindPreparedInvalid, "This message was not prepared for this user by this drivemail (or its id is damaged), so nothing was sent. Ask the assistant to prepare the email again.")
	case errors.Is(err, prepared.ErrExpired):
		return refusal.New(kindPreparedExpired, "This message waited longer than %v in the compose view, so nothing was sent. Ask the assistant to prepare it again: its files are checked anew.", prepared.TTL)
	case errors.Is(err, prepared.ErrUsed):
		return refusal.New(kindPreparedUsed, "This message was sent or cancelled already, so nothing more was sent. Ask the assistant what became of it.")
	}
	return &refusal.Unsent{Err: err}
}
