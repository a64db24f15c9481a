package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
)

// send_draft sends a draft the user saved (with create_draft, or in
// Gmail) as it is: Gmail sends it and deletes it (drafts.send), so the
// message is what the user reviewed. It needs the drafts scope, as
// create_draft does, and is listed only on a server that asks for it
// (--drafts, Filter).

const sendDraftDescription = `Send a Gmail draft as it is now, once the user has reviewed it: one create_draft saved, or one they wrote in Gmail. Its recipients, subject and files go unchanged.

A draft is sent once: Gmail deletes it as it sends it, so a second call sends nothing.`

func sendDraftTool() mcp.Tool {
	return newTool("send_draft", "Send a Gmail draft", sendDraftDescription, schema("send_draft.input"), schema("send_draft.output"),
		hints{readOnly: false, destructive: true, idempotent: true, openWorld: true})
}

var sendDraftFields = fields{names: []string{"draft_id"}, aliases: map[string]string{"id": "draft_id", "draftId": "draft_id"}}

// maxDraftIDLen bounds a draft id; Gmail's are about 20 characters.
const maxDraftIDLen = 128

func (h *handlers) sendDraft(ctx context.Context, acct *account.Account, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id, err := parseSendDraft(req.Params.RawArguments)
	if err != nil {
		return nil, err
	}
	if !acct.MayDraft() {
		return nil, h.draftScopeRefusal()
	}
	confirm, err := h.confirmation(ctx, req, false)
	if err != nil {
		return nil, err
	}
	var ask func(context.Context, compose.Summary) error
	if confirm != nil {
		ask = confirm.confirm
	}
	res, err := h.deps.Mail.SendDraft(ctx, acct, id, ask)
	if confirm != nil && confirm.retry != nil {
		return confirm.retry, nil // 2026-07-28: the client asks, then calls again
	}
	if err != nil {
		return nil, err
	}
	return succeeded(sendDraftText(res), res), nil
}

// parseSendDraft reads send_draft's draft_id: Gmail's draft ids are
// letters, digits, - and _ ("r-123…"), never a web link.
func parseSendDraft(raw []byte) (string, error) {
	m, err := decodeObject(raw, sendDraftFields, "The arguments of send_draft")
	if err != nil {
		return "", err
	}
	id, err := m.requiredStr("draft_id", "give the draft_id create_draft returned.")
	if err != nil {
		return "", err
	}
	id = strings.TrimSpace(id)
	if len(id) > maxDraftIDLen || strings.ContainsFunc(id, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_')
	}) {
		return "", refuse("\"draft_id\" %s is not a Gmail draft id (letters, digits, - and _, such as \"r-1234567890123456789\"): pass the draft_id create_draft returned.", quoteVisible(truncate(id, 60)))
	}
	return id, nil
}

// sendDraftText says what went, from whom, to whom; addresses and the
// subject are the draft's, written by whoever saved it.
func sendDraftText(res compose.DraftSent) string {
	var b strings.Builder
	to := "its recipients"
	if len(res.Recipients) > 0 {
		to = recipientsText(res.Recipients)
	}
	fmt.Fprintf(&b, "Sent the draft to %s from %s (message id %s, thread %s", to, field(res.From, ""), res.ID, res.ThreadID)
	if res.MessageID != "" {
		b.WriteString(", Message-ID " + field(res.MessageID, ""))
	}
	b.WriteString("). It is in Sent, and no longer in Drafts.")
	if res.FromUnchecked {
		b.WriteString("\nThe draft is from " + field(res.From, "") + ", which drivemail could not check is a verified send-as address of the account " +
			"(that needs permission to read mail): Gmail sends mail from an unverified address from the account's default address instead.")
	}
	return b.String()
}
