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
		{"body_text a byte over", Request{BodyText: full + "a"}, `"body_text" is 2.0 MiB; the limit is 2 MiB`},
		{"body_html of 2 MiB", Request{BodyHTML: full}, ""},
		{"body_html a byte over", Request{BodyHTML: full + "a"}, `"body_html" is 2.0 MiB; the limit is 2 MiB`},
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
			if !isRefusal(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a refusal containing %q", err, tt.want)
			}
		})
	}
}

// TestReplyHeaders: a reply's headers completed as RFC 5322 §3.6.4 has
// them, its subject given a reply prefix, references bounded at 100.
func TestReplyHeaders(t *testing.T) {
	refs := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "<m" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + "@example.org>"
		}
		return out
	}
	tests := []struct {
		name               string
		req                Request
		inReplyTo, subject string
		references         []string
		refused            string
	}{
		{"not a reply", Request{Subject: "Plan"}, "", "Plan", nil, ""},
		{"in_reply_to", Request{Subject: "Plan", InReplyTo: "<a@x>"}, "<a@x>", "Re: Plan", []string{"<a@x>"}, ""},
		{"in_reply_to already last of references", Request{Subject: "Re: Plan", InReplyTo: "a@x", References: []string{"<z@x> <a@x>"}}, "a@x", "Re: Plan", []string{"<z@x> <a@x>"}, ""},
		{"references only", Request{Subject: "fwd: Plan", ThreadID: "t", References: []string{"<z@x>,<a@x>"}}, "<a@x>", "fwd: Plan", []string{"<z@x>,<a@x>"}, ""},
		{"Aw: is a reply prefix", Request{Subject: "  AW: Plan", InReplyTo: "<a@x>"}, "<a@x>", "  AW: Plan", []string{"<a@x>"}, ""},
		{"100 references", Request{Subject: "Re: x", References: refs(100)}, refs(100)[99], "Re: x", refs(100), ""},
		{"101 references", Request{Subject: "Re: x", References: refs(101)}, "", "", nil, "at most 100"},
		{"thread_id alone", Request{Subject: "Re: x", ThreadID: "t"}, "", "", nil, "Pass in_reply_to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := replyHeaders(tt.req)
			if tt.refused != "" {
				if !isRefusal(err) || !strings.Contains(err.Error(), tt.refused) {
					t.Fatalf("err = %v, want a refusal saying %q", err, tt.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.InReplyTo != tt.inReplyTo || got.Subject != tt.subject {
				t.Errorf("In-Reply-To %q subject %q, want %q %q", got.InReplyTo, got.Subject, tt.inReplyTo, tt.subject)
			}
			if tt.references != nil && strings.Join(got.References, "|") != strings.Join(tt.references, "|") {
				t.Errorf("references %q, want %q", got.References, tt.references)
			}
		})
	}
}
