package compose

import (
	"strings"
	"testing"
)

// TestCheckRequestAtLimits: each body may be 2 MiB, not a byte more; a
// thread id is at most 64 letters, digits, - and _.
func TestCheckRequestAtLimits(t *testing.T) {
	full := strings.Repeat("a", MaxBodyBytes)
	tests := []struct {
		name string
		req  Request
		want string // "" for accepted
	}{
		{"body_text of 2 MiB", Request{BodyText: full}, ""},
		{"body_text a byte over", Request{BodyText: full + "a"}, "body_text is 2.0 MiB; the limit is 2 MiB"},
		{"body_html of 2 MiB", Request{BodyHTML: full}, ""},
		{"body_html a byte over", Request{BodyHTML: full + "a"}, "body_html is 2.0 MiB; the limit is 2 MiB"},
		{"thread id of 64", Request{ThreadID: strings.Repeat("f", 64)}, ""},
		{"thread id of 65", Request{ThreadID: strings.Repeat("f", 65)}, "is not a Gmail thread id"},
		{"thread id with a space", Request{ThreadID: "18f a"}, "Leave it out to start a new thread"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkRequest(tt.req)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !IsRefusal(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a refusal containing %q", err, tt.want)
			}
		})
	}
}
