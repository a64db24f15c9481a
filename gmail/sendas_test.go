package gmail_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/emulator/gmailsvc"
	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/internal/google"
)

func TestSendAsListsThePrimaryAndAliases(t *testing.T) {
	e := newEnv(t)
	if err := e.Emu.Gmail().SetSendAs(user, []gmailsvc.SendAs{
		{SendAsEmail: "billing@example.com", DisplayName: "Billing", ReplyToAddress: "help@example.com", Signature: "<b>Billing</b>"},
		{SendAsEmail: "sales@example.org", VerificationStatus: gmailsvc.VerificationPending},
	}); err != nil {
		t.Fatal(err)
	}
	list, err := e.gc.SendAs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 {
		t.Fatalf("SendAs = %+v, want the primary and two aliases", list)
	}
	p, billing, sales := list[0], list[1], list[2]
	if p.Address != user || !p.Primary || !p.Default || !p.Verified() || !strings.Contains(p.Signature, "Ana") {
		t.Errorf("primary = %+v", p)
	}
	if billing.Address != "billing@example.com" || billing.DisplayName != "Billing" || billing.ReplyTo != "help@example.com" ||
		billing.Signature != "<b>Billing</b>" || billing.Primary || !billing.Verified() {
		t.Errorf("verified alias = %+v", billing)
	}
	if sales.Verification != gmail.VerificationPending || sales.Verified() {
		t.Errorf("pending alias = %+v, want not verified", sales)
	}
}

// Listing aliases needs a scope that reads settings: gmail.send and
// gmail.compose do not (the discovery document's sendAs.list scopes).
func TestSendAsNeedsAReadScope(t *testing.T) {
	for _, scope := range []string{emutest.ScopeGmailSend, emutest.ScopeGmailCompose} {
		e := newEnv(t, scope)
		if _, err := e.gc.SendAs(context.Background()); !errors.Is(err, gmail.ErrScope) {
			t.Errorf("SendAs with %s: err = %v, want ErrScope", scope, err)
		}
	}
	e := newEnv(t, "https://www.googleapis.com/auth/gmail.settings.basic")
	if list, err := e.gc.SendAs(context.Background()); err != nil || len(list) != 1 {
		t.Errorf("SendAs with gmail.settings.basic = %v, %v; want the primary", list, err)
	}
}

func TestSendDraftSendsItOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	write, msg := message(2000)
	d, err := e.gc.CreateDraft(ctx, "", write)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.gc.Draft(ctx, d.DraftID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != d.DraftID || got.MessageID != d.ID || got.ThreadID != d.ThreadID || got.From != user ||
		got.To != "zoe@example.org" || got.Subject != "test" || got.RFCMessageID != "<test@example.com>" {
		t.Errorf("Draft = %+v", got)
	}
	sent, err := e.gc.SendDraft(ctx, d.DraftID)
	if err != nil {
		t.Fatal(err)
	}
	if sent.ID == "" || sent.ID == d.ID || sent.ThreadID != d.ThreadID {
		t.Errorf("SendDraft = %+v, want a new message in the draft's thread %s", sent, d.ThreadID)
	}
	if e.Message(user, sent.ID) == nil || string(e.Message(user, sent.ID)) != string(msg) {
		t.Errorf("the sent message is not the draft's")
	}
	if _, err := e.gc.Draft(ctx, d.DraftID); !errors.Is(err, gmail.ErrNotFound) {
		t.Errorf("Draft after sending: err = %v, want ErrNotFound (the draft is gone)", err)
	}
	if _, err := e.gc.SendDraft(ctx, d.DraftID); !errors.Is(err, gmail.ErrNotFound) {
		t.Errorf("a second SendDraft: err = %v, want ErrNotFound", err)
	}
	if n := e.Emu.Stats().MessagesSent; n != 1 {
		t.Errorf("messages sent = %d, want 1", n)
	}
}

// drafts.send takes the drafts scopes, not gmail.send.
func TestSendDraftNeedsTheComposeScope(t *testing.T) {
	e := newEnv(t)
	write, _ := message(100)
	d, err := e.gc.CreateDraft(context.Background(), "", write)
	if err != nil {
		t.Fatal(err)
	}
	sendOnly, err := gmail.New(context.Background(), e.Client(user, emutest.ScopeGmailSend), e.Endpoints, chunk)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sendOnly.SendDraft(context.Background(), d.DraftID); !errors.Is(err, gmail.ErrScope) {
		t.Errorf("SendDraft with gmail.send: err = %v, want ErrScope", err)
	}
	if n := e.Emu.Stats().MessagesSent; n != 0 {
		t.Errorf("messages sent = %d, want 0", n)
	}
}

// A draft's link opens Gmail's web UI, or the emulator's stand-in for it.
func TestDraftLink(t *testing.T) {
	for _, base := range []string{"", "http://127.0.0.1:9090"} {
		endpoints, err := google.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		c, err := gmail.New(context.Background(), http.DefaultClient, endpoints, 0)
		if err != nil {
			t.Fatal(err)
		}
		web := endpoints.GmailWebURL()
		for _, tt := range []struct{ email, thread, want string }{
			{"ana@example.com", "18c2f9a0b1d2e3f4", web + "/mail/u/ana@example.com/#drafts/18c2f9a0b1d2e3f4"},
			{"", "18c2f9a0b1d2e3f4", web + "/mail/#drafts/18c2f9a0b1d2e3f4"},
			{"a/b@example.com", "x y", web + "/mail/u/a%2Fb@example.com/#drafts/x%20y"},
			{"ana@example.com", "", ""},
		} {
			if got := c.DraftLink(tt.email, tt.thread); got != tt.want {
				t.Errorf("DraftLink(%q, %q) = %q, want %q", tt.email, tt.thread, got, tt.want)
			}
		}
	}
	if got := (google.Endpoints{}).GmailWebURL(); got != "https://mail.google.com" {
		t.Errorf("Gmail's web UI is %q, want https://mail.google.com", got)
	}
}

// SendAs returns at most MaxSendAs addresses, the primary first.
func TestSendAsBound(t *testing.T) {
	for _, aliases := range []int{gmail.MaxSendAs - 1, gmail.MaxSendAs} {
		e := newEnv(t)
		list := make([]gmailsvc.SendAs, aliases)
		for i := range list {
			list[i] = gmailsvc.SendAs{SendAsEmail: fmt.Sprintf("a%d@example.com", i)}
		}
		if err := e.Emu.Gmail().SetSendAs(user, list); err != nil {
			t.Fatal(err)
		}
		got, err := e.gc.SendAs(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != gmail.MaxSendAs || !got[0].Primary {
			t.Errorf("%d aliases and the primary: SendAs returned %d, want %d, the primary first", aliases, len(got), gmail.MaxSendAs)
		}
	}
}
