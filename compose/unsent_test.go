package compose

import (
	"context"
	"errors"
	"testing"

	"github.com/drivemail/drivemail/gmail"
)

func TestMarkUnsent(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		unsent bool
	}{
		{"no error", nil, false},
		{"a refusal", refuse(kindNoSource, "no."), false},
		{"a writer failure after Gmail was contacted", &gmail.WriteError{Err: errors.New("drive broke"), Contacted: true}, true},
		{"a Gmail error answer", &gmail.Error{Op: "messages.send", Code: 409}, true},
		{"a final request with no answer", &gmail.Error{Op: "messages.send", Err: context.Canceled, MaybeSent: true}, false},
		{"a final 200 whose body was lost", &gmail.Error{Op: "messages.send", MaybeSent: true, Accepted: true}, false},
		{"a failure before any Google call", errors.New("new service"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := markUnsent(tt.err)
			var u *Unsent
			if errors.As(got, &u) != tt.unsent {
				t.Errorf("markUnsent(%v) = %#v; Unsent = %v, want %v", tt.err, got, !tt.unsent, tt.unsent)
			}
			if tt.err != nil && !errors.Is(got, tt.err) && got.Error() != tt.err.Error() {
				t.Errorf("markUnsent changed the error: %v", got)
			}
		})
	}
}
