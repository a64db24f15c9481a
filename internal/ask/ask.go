// Package ask lets a tool put a question to the user of the calling MCP
// client in the middle of a call (elicitation, form mode), whichever way
// that client can be asked:
//
//   - a 2025-06-18 or 2025-11-25 client that declared form elicitation
//     gets elicitation/create on the call's own event stream, and the call
//     waits (at most Question.Wait) for the answer it POSTs back;
//   - a 2026-07-28 client that declares it gets an input_required result;
//     it asks its user and calls the tool again with the answer and the
//     sealed state, which is checked before the answer is believed.
//
// A handler is written once for both:
//
//	answer, retry := ask.Form(ctx, req, q)
//	if retry != nil {
//		return retry, nil // 2026-07-28: the client calls again with the answer
//	}
//	switch answer.Outcome { … }
//
// On a 2026-07-28 client the handler runs twice, so what it does before
// Form must be safe to do again (checks, reads), and what it does after
// only once. The transport decides what a call can reach and puts it in
// the call's context (Asker.For); without it, Form says Unaskable.
package ask

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// DefaultWait bounds how long a call waits for its user's answer when the
// question names no bound: long enough to read a summary and decide.
const DefaultWait = 2 * time.Minute

// Question is one form put to the user.
type Question struct {
	// Key names the question within its tool (a 2026-07-28 client answers
	// under it): letters, digits, '_' and '-'.
	Key string
	// Message is what the client shows; it must not ask for secrets.
	Message string
	// Schema is the form: a JSON Schema object of primitive properties
	// (string, number, integer, boolean, enum), as elicitation allows.
	Schema map[string]any
	// Wait bounds the wait for a 2025 client's answer (0: DefaultWait).
	Wait time.Duration
	// Bind is what else an answer holds for, beside Message: a digest of
	// what the question is about that the user does not read (the
	// revisions of the files a summary names). A 2026-07-28 retry whose
	// question says or binds anything else is asked again.
	Bind string
}

// Outcome is how a question ended.
type Outcome int

const (
	// Unaskable: the client declared no form elicitation, or this call
	// cannot carry a question and its answer (no event stream, no session
	// id to route the answer by).
	Unaskable Outcome = iota
	// Accepted: the user submitted the form; Answer.Content has its values.
	Accepted
	// Declined: the user said no.
	Declined
	// Cancelled: the user dismissed the question without choosing.
	Cancelled
	// Unanswered: no answer came within the wait, the client answered with
	// an error, or the call ended first.
	Unanswered
)

func (o Outcome) String() string {
	switch o {
	case Accepted:
		return "accepted"
	case Declined:
		return "declined"
	case Cancelled:
		return "cancelled"
	case Unanswered:
		return "unanswered"
	}
	return "unaskable"
}

// Answer is the user's answer to a Question.
type Answer struct {
	Outcome Outcome
	// Content is the form's values, on Accepted. They come from the
	// client: check them as any input.
	Content map[string]any
	// Err says why a question went Unanswered, for the log; nil otherwise.
	Err error
}

// route is what the transport knows of one call.
type route struct {
	asker *Asker
	user  string
	// stream: a 2025 client that declared form elicitation, on a call whose
	// answer can come back to this process.
	stream bool
}

type routeKey struct{}

// Possible reports whether Form can reach the user of the call req is, so
// a tool that must not go on unasked can refuse before doing anything.
func Possible(ctx context.Context) bool {
	r, ok := ctx.Value(routeKey{}).(route)
	if !ok {
		return false
	}
	if mcpserver.IsModernRequest(ctx) {
		return modernFormCapable(ctx)
	}
	return r.stream
}

// Form asks q of the user of the call req. It returns the answer, or, for
// a 2026-07-28 client that has not answered q yet, the input_required
// result the handler must return as it is.
func Form(ctx context.Context, req mcp.CallToolRequest, q Question) (Answer, *mcp.CallToolResult) {
	r, ok := ctx.Value(routeKey{}).(route)
	if !ok {
		return Answer{Outcome: Unaskable}, nil
	}
	if mcpserver.IsModernRequest(ctx) {
		if !modernFormCapable(ctx) {
			return Answer{Outcome: Unaskable}, nil
		}
		return r.asker.modern(ctx, r.user, req, q)
	}
	if !r.stream {
		return Answer{Outcome: Unaskable}, nil
	}
	return streamed(ctx, q), nil
}

// streamed asks on the call's event stream (the MCP library sends the
// request there and matches the answer the transport hands it) and waits.
func streamed(ctx context.Context, q Question) Answer {
	srv := mcpserver.ServerFromContext(ctx)
	if srv == nil {
		return Answer{Outcome: Unaskable}
	}
	wait := q.Wait
	if wait <= 0 {
		wait = DefaultWait
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	res, err := srv.RequestElicitation(wctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  params(q),
	})
	switch {
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return Answer{Outcome: Unanswered, Err: fmt.Errorf("no answer within %s", wait)}
	case err != nil:
		return Answer{Outcome: Unanswered, Err: err}
	}
	return answerOf(&res.ElicitationResponse)
}

func params(q Question) mcp.ElicitationParams {
	return mcp.ElicitationParams{Mode: mcp.ElicitationModeForm, Message: q.Message, RequestedSchema: q.Schema}
}

// answerOf reads a client's elicitation result.
func answerOf(res *mcp.ElicitationResponse) Answer {
	switch res.Action {
	case mcp.ElicitationResponseActionAccept:
		content, _ := res.Content.(map[string]any)
		return Answer{Outcome: Accepted, Content: content}
	case mcp.ElicitationResponseActionDecline:
		return Answer{Outcome: Declined}
	case mcp.ElicitationResponseActionCancel:
		return Answer{Outcome: Cancelled}
	}
	return Answer{Outcome: Unanswered, Err: fmt.Errorf("the client answered with action %q", res.Action)}
}

// modernFormCapable reports whether a 2026-07-28 request declares form
// elicitation; such a client states its capabilities on every request.
func modernFormCapable(ctx context.Context) bool {
	info := mcpserver.RequestProtocolInfoFromContext(ctx)
	if info == nil || info.ClientCapabilities == nil || info.ClientCapabilities.Elicitation == nil {
		return false
	}
	e := info.ClientCapabilities.Elicitation
	// "elicitation": {} is form mode, from before the modes had names.
	return e.Form != nil || e.URL == nil
}
