package compose_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/internal/refusal"
)

// gmailCalls counts the requests that go to Gmail, which the emulator
// does not count when it refuses them for a disabled API.
type gmailCalls struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (c *gmailCalls) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.Contains(r.URL.Path, "/gmail/v1/") {
		c.n.Add(1)
	}
	return c.base.RoundTrip(r)
}

// TestGmailAPIDisabledSaysWhoCanFixIt: with the Gmail API not enabled in
// drivemail's Google Cloud project, a send, a draft, a reply and a
// message with a Gmail attachment are each refused with a sentence that
// the server's operator must enable it (not the Workspace administrator,
// not "reconnect") and that nothing went; Gmail is asked once, not
// again; the operator gets an error line naming gmail.googleapis.com,
// without Google's error body.
func TestGmailAPIDisabledSaysWhoCanFixIt(t *testing.T) {
	e, logs := newLoggedEnv(t)
	inbox := e.deliver(user, "Contract", nil, inFile{"contract.pdf", "application/pdf", randomBytes(100)})
	if err := e.Emu.SetAPIEnabled("gmail", false); err != nil {
		t.Fatal(err)
	}
	signedIn := identity.User{ID: "user-42", Email: user}
	tests := []struct {
		name    string
		user    identity.User // with the user's address, the profile is not asked for
		req     compose.Request
		draft   bool
		nothing string
	}{
		{"send, the sender's address asked of Gmail", identity.User{},
			compose.Request{To: []string{"zoe@example.org"}, Subject: "s", BodyText: "hi"}, false, "Nothing was sent."},
		{"send", signedIn, compose.Request{To: []string{"zoe@example.org"}, Subject: "s", BodyText: "hi"}, false, "Nothing was sent."},
		{"draft", signedIn, compose.Request{To: []string{"zoe@example.org"}, Subject: "s", BodyText: "hi"}, true, "Nothing was saved."},
		{"reply_to", signedIn, compose.Request{ReplyTo: msgRef(inbox), BodyText: "Signed."}, false, "Nothing was sent."},
		{"a Gmail attachment", signedIn, compose.Request{To: []string{"zoe@example.org"}, Subject: "s", BodyText: "hi",
			Attachments: []compose.Attachment{gmailAtt(inbox, "contract.pdf")}}, false, "Nothing was sent."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs.Reset()
			calls := &gmailCalls{base: e.hc.Transport}
			hc := &http.Client{Transport: calls}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			before := e.Emu.Stats()
			_, err := e.svc.Send(ctx, e.as(tt.user, hc), tt.req, compose.Options{Draft: tt.draft})
			r, ok := refusal.As(err)
			if !ok || r.Kind != "gmail_api_disabled" {
				t.Fatalf("err = %v; want a gmail_api_disabled refusal", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "has not enabled the Gmail API") || !strings.Contains(msg, "whoever runs drivemail") ||
				!strings.Contains(msg, tt.nothing) || strings.Contains(msg, "administrator") || strings.Contains(msg, "Reconnect") {
				t.Errorf("sentence %q: want the Gmail API named, its operator to enable it, and %q", msg, tt.nothing)
			}
			if r.Delivery != refusal.NotSent {
				t.Errorf("delivery = %v, want nothing", r.Delivery)
			}
			outboxUnchanged(t, before, e.Emu.Stats())
			if n := calls.n.Load(); n != 1 {
				t.Errorf("Gmail was asked %d times; want once (no retry)", n)
			}
			l := logs.String()
			if !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "api=gmail.googleapis.com") ||
				!strings.Contains(l, "enable_at=https://console.cloud.google.com/apis/library/gmail.googleapis.com") {
				t.Errorf("log %s: want an error line naming gmail.googleapis.com and where to enable it", l)
			}
			if !strings.Contains(l, "refusal=gmail_api_disabled") {
				t.Errorf("log %s: want the send refused line with refusal=gmail_api_disabled", l)
			}
			if strings.Contains(l, "has not been used in project") || strings.Contains(l, "Bearer") {
				t.Errorf("log carries Google's error body or a token: %s", l)
			}
		})
	}
	if err := e.Emu.SetAPIEnabled("gmail", true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "s", BodyText: "hi"}, compose.Options{}); err != nil {
		t.Errorf("send once the Gmail API is enabled: %v", err)
	}
}
