package compose

import (
	"context"
	"errors"
	"testing"

	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/internal/refusal"
)

// TestSettle: a failed send's final form. compose's own refusal stays; a
// refusal from below (a lost Google grant) says nothing was sent; an
// internal error is Unsent unless Gmail may have the message.
func TestSettle(t *testing.T) {
	reconnect := refusal.New("reconnect", "Reconnect drivemail.")
	tests := []struct {
		name   string
		err    error
		unsent bool
		text   string // for a refusal
	}{
		{"no error", nil, false, ""},
		{"a refusal", refuse(kindNoName, "no."), false, "no."},
		{"a writer failure after Gmail was contacted", &gmail.WriteError{Err: errors.New("drive broke"), Contacted: true}, true, ""},
		{"a Gmail error answer", &gmail.Error{Op: "messages.send", Code: 409}, true, ""},
		{"a final request with no answer", &gmail.Error{Op: "messages.send", Err: context.Canceled, MaybeSent: true}, false, ""},
		{"a final 200 whose body was lost", &gmail.Error{Op: "messages.send", MaybeSent: true, Accepted: true}, false, ""},
		{"a failure before any Google call", errors.New("new service"), true, ""},
		{"the grant lost under a Drive call", &gmail.WriteError{Err: reconnect}, false, "Reconnect drivemail. Nothing was sent."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := settle(tt.err, false)
			var u *refusal.Unsent
			if errors.As(got, &u) != tt.unsent {
				t.Errorf("settle(%v) = %#v; Unsent = %v, want %v", tt.err, got, !tt.unsent, tt.unsent)
			}
			if r, ok := refusal.As(got); tt.text != "" && (!ok || r.Text != tt.text || r.Delivery != refusal.NotSent) {
				t.Errorf("settle(%v) = %#v, want the refusal %q", tt.err, got, tt.text)
			}
			if tt.err != nil && !errors.Is(got, tt.err) && got.Error() != tt.err.Error() {
				t.Errorf("settle changed the error: %v", got)
			}
		})
	}
}
