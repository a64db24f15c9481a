package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"google.golang.org/api/googleapi"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/internal/redact"
	"github.com/drivemail/drivemail/internal/refusal"
)

// refuse is the refusal of a malformed call: its sentence says what was
// wrong with the arguments and what to send instead.
func refuse(format string, args ...any) *refusal.Refusal {
	return refusal.New(kindBadArguments, format, args...)
}

// refused is an isError result carrying a refusal sentence. A sentence is
// one paragraph; the names it quotes (a file, an archive entry, an
// address) may come from anyone, so nothing in it may break a line or
// hide text (untrusted.go).
func refused(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content: []mcp.Content{mcp.NewTextContent(visible(text, false))},
		IsError: true,
	}
}

// succeeded is a result with a compact text for the model and the full
// data, exact, as structuredContent. The text's builders quote untrusted
// fields (field); this last pass makes anything they missed visible.
func succeeded(text string, structured any) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(visible(text, true))},
		StructuredContent: structured,
	}
}

// errNoAccount: Deps gave no way to open the caller's account.
var errNoAccount = errors.New("tools: no account opener in Deps")

// account opens the caller's account. Without one no work began, so a
// send provably sent nothing.
func (h *handlers) account(ctx context.Context) (*account.Account, error) {
	if h.deps.Account == nil {
		return nil, &refusal.Unsent{Err: errNoAccount}
	}
	acct, err := h.deps.Account(ctx)
	if err != nil {
		return nil, &refusal.Unsent{Err: err}
	}
	return acct, nil
}

// fail turns err into a result: a refusal shows its own sentence; anything
// else is logged (without secrets) and shown as a generic sentence with the
// request id, so no Google error body or token can reach the model.
func (h *handlers) fail(ctx context.Context, tool string, err error) *mcp.CallToolResult {
	if r, ok := refusal.As(err); ok {
		return refused(r.Text)
	}
	id := h.deps.RequestID(ctx)
	attrs := append([]any{"tool", tool, "request_id", id}, errorAttrs(err)...)
	h.deps.Logger.ErrorContext(ctx, "tool failed", attrs...)
	msg := "drivemail hit an internal error and could not finish this request"
	if id != "" {
		msg += fmt.Sprintf(" (request id %s)", id)
	}
	msg += ". Try again in a minute; if it keeps failing, give the request id to whoever runs this drivemail server."
	if tool == "send_email" || tool == "create_draft" {
		msg += " " + sendOutcome(err, tool == "create_draft")
	}
	return refused(msg)
}

// sendOutcome says what a failed send left behind: nothing, when compose
// proves it (the message never reached its end at Gmail, or Gmail said
// no), else that Gmail may have it.
func sendOutcome(err error, draft bool) string {
	switch {
	case refusal.DeliveryOf(err) == refusal.NotSent && draft:
		return "Nothing was saved, so trying again cannot make a second draft."
	case refusal.DeliveryOf(err) == refusal.NotSent:
		return "Nothing was sent, so trying again cannot send it twice."
	}
	return "Before sending again, check the Sent and Drafts folders: drivemail never sends part of a message, but it cannot tell whether Gmail finished this one."
}

// errorAttrs describes err for a log line. A Google API error contributes
// only its status and reasons: its message and body may quote user data.
func errorAttrs(err error) []any {
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		reasons := make([]string, 0, len(gerr.Errors))
		for _, e := range gerr.Errors {
			reasons = append(reasons, e.Reason)
		}
		return []any{"google_status", gerr.Code, "google_reasons", reasons, "error_type", fmt.Sprintf("%T", err)}
	}
	return []any{"error", redact.Quoted(err.Error())}
}

// handlerFunc is a tool's work for acct, the caller: a result, or an
// error that guard shows to the model (a refusal's sentence, or a generic
// one for anything else).
type handlerFunc func(ctx context.Context, acct *account.Account, req mcp.CallToolRequest) (*mcp.CallToolResult, error)

// guard wraps a handler: it opens the caller's account, once for the
// call, turns the handler's error into a result, recovers a panic into a
// generic error result, and logs each call's outcome, its refusal kind
// and its duration.
func (h *handlers) guard(tool string, next handlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
		start := time.Now()
		var err error
		defer func() {
			if p := recover(); p != nil {
				h.deps.Logger.ErrorContext(ctx, "tool panicked", "tool", tool, "request_id", h.deps.RequestID(ctx),
					"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				res, err = h.fail(ctx, tool, errors.New("panic")), nil
			}
			attrs := []slog.Attr{slog.String("tool", tool), slog.String("request_id", h.deps.RequestID(ctx))}
			switch kind := refusal.KindOf(err); {
			case res != nil && res.IsError && kind != "":
				attrs = append(attrs, slog.String("outcome", "error"), slog.String("refusal", string(kind)))
			case res != nil && res.IsError:
				attrs = append(attrs, slog.String("outcome", "error"))
			default:
				attrs = append(attrs, slog.String("outcome", "ok"))
			}
			h.deps.Logger.LogAttrs(ctx, slog.LevelInfo, "tool call", append(attrs, slog.Duration("duration", time.Since(start)))...)
		}()
		var acct *account.Account
		if acct, err = h.account(ctx); err == nil {
			res, err = next(ctx, acct, req)
			err = h.withPickHint(acct, err)
		}
		if err != nil {
			res = h.fail(ctx, tool, err)
		}
		return res, nil
	}
}
