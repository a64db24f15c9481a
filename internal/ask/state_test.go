package ask

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

func key(b byte) []byte {
	k := make([]byte, 32)
	for i := range k {
		k[i] = b
	}
	return k
}

func sendCall(args map[string]any) mcp.CallToolRequest {
	var req mcp.CallToolRequest
	req.Params.Name = "send_email"
	req.Params.Arguments = args
	return req
}

var confirmQ = Question{Key: "confirm", Message: "Send Q3?"}

// A state opens for the call it was sealed for, until StateTTL has
// passed, under any key still listed; for nothing else.
func TestStateOpensOnlyForItsCall(t *testing.T) {
	now := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	old := &Asker{keys: [][]byte{key(1)}, now: func() time.Time { return now }}
	call := sendCall(map[string]any{"to": "ana@example.com", "subject": "Q3"})
	digest := callDigest("user-1", call, confirmQ)
	state := old.seal(digest)

	for _, tc := range []struct {
		name   string
		keys   [][]byte
		at     time.Time
		digest []byte
		ok     bool
	}{
		{"the same call", [][]byte{key(1)}, now, digest, true},
		{"the same arguments in another order", [][]byte{key(1)}, now, callDigest("user-1", sendCall(map[string]any{"subject": "Q3", "to": "ana@example.com"}), confirmQ), true},
		{"a second before it expires", [][]byte{key(1)}, now.Add(StateTTL - time.Second), digest, true},
		{"when it expires", [][]byte{key(1)}, now.Add(StateTTL), digest, false},
		{"after a key rotation that lists the old key", [][]byte{key(2), key(1)}, now, digest, true},
		{"after the old key is retired", [][]byte{key(2)}, now, digest, false},
		{"another user", [][]byte{key(1)}, now, callDigest("user-2", call, confirmQ), false},
		{"another recipient", [][]byte{key(1)}, now, callDigest("user-1", sendCall(map[string]any{"to": "eve@example.com", "subject": "Q3"}), confirmQ), false},
		{"another question", [][]byte{key(1)}, now, callDigest("user-1", call, Question{Key: "other", Message: confirmQ.Message}), false},
		{"the question saying something else", [][]byte{key(1)}, now, callDigest("user-1", call, Question{Key: "confirm", Message: "Send Q3 (2 files)?"}), false},
		{"the question bound to another revision", [][]byte{key(1)}, now, callDigest("user-1", call, Question{Key: "confirm", Message: confirmQ.Message, Bind: "r2"}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Asker{keys: tc.keys, now: func() time.Time { return tc.at }}
			if _, _, ok := a.open(state, tc.digest); ok != tc.ok {
				t.Errorf("opened %v, want %v", ok, tc.ok)
			}
		})
	}
	for _, bad := range []string{"", "!!", state[:len(state)-2], "B" + state[1:]} {
		if _, _, ok := old.open(bad, digest); ok {
			t.Errorf("state %q opened", bad)
		}
	}
}

// An answer is spent when it is believed; a spend that fails (the store
// has seen it) asks again.
func TestAnAnswerIsSpentOnce(t *testing.T) {
	used := map[string]bool{}
	a := New([][]byte{key(1)}, func(ctx context.Context, k string, expires time.Time) error {
		if used[k] {
			return context.Canceled
		}
		used[k] = true
		return nil
	})
	call := sendCall(map[string]any{"to": "ana@example.com"})
	q := Question{Key: "confirm", Message: "Send?"}
	_, asked := a.modern(context.Background(), "user-1", call, q)
	if asked == nil || asked.RequestState == "" {
		t.Fatalf("first call: %+v, want input_required with a state", asked)
	}
	call.Params.RequestState = asked.RequestState
	call.Params.InputResponses = mcp.InputResponses{"confirm": mcp.NewElicitationInputResponse(mcp.ElicitationResult{
		ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"send": true}}})}
	if answer, again := a.modern(context.Background(), "user-1", call, q); again != nil || answer.Outcome != Accepted {
		t.Fatalf("the retry: %+v %+v, want accepted", answer, again)
	}
	if _, again := a.modern(context.Background(), "user-1", call, q); again == nil {
		t.Fatal("the same retry again was believed")
	}
}
