package compose_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/emulator/gmailsvc"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/internal/refusal"
)

// saveDraft saves a draft to zoe through compose and returns its id.
func (e *env) saveDraft(req compose.Request) compose.Result {
	e.t.Helper()
	if req.To == nil {
		req.To, req.Subject, req.BodyText = []string{"Zoe <zoe@example.org>"}, "Q3 figures", "Here they are."
	}
	res, err := e.send(req, compose.Options{Draft: true})
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

// draftIDs lists ana's drafts as Gmail's drafts.list answers them.
func (e *env) draftIDs() []string {
	e.t.Helper()
	svc, err := gm.NewService(context.Background(), append([]option.ClientOption{option.WithHTTPClient(e.hc)}, e.Endpoints.GmailOptions()...)...)
	if err != nil {
		e.t.Fatal(err)
	}
	list, err := svc.Users.Drafts.List("me").Do()
	if err != nil {
		e.t.Fatal(err)
	}
	var ids []string
	for _, d := range list.Drafts {
		ids = append(ids, d.Id)
	}
	return ids
}

func TestSendDraftSendsItAsItIs(t *testing.T) {
	var logs bytes.Buffer
	e := newEnv(t, compose.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	d := e.saveDraft(compose.Request{})
	acct := e.as(identity.User{ID: "u1", Email: user}, nil)
	res, err := e.svc.SendDraft(context.Background(), acct, d.DraftID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ID == "" || res.ID == d.ID || res.ThreadID != d.ThreadID || res.MessageID != d.MessageID || res.From != user ||
		res.Subject != "Q3 figures" || strings.Join(res.Recipients, ",") != "zoe@example.org" {
		t.Errorf("SendDraft = %+v; the draft was %+v", res, d)
	}
	// The outbox has it, as the draft was, and Drafts no longer has the draft.
	h, root := goParse(t, e.Message(user, res.ID))
	if h.Get("Subject") != "Q3 figures" || h.Get("Message-Id") != d.MessageID || string(root.leaves()[0].Body) != "Here they are." {
		t.Errorf("sent message: Subject %q, Message-ID %q", h.Get("Subject"), h.Get("Message-Id"))
	}
	if ids := e.draftIDs(); len(ids) != 0 {
		t.Errorf("drafts.list = %v, want the draft gone", ids)
	}
	if st := e.Emu.Stats(); st.MessagesSent != 1 {
		t.Errorf("messages sent = %d, want 1", st.MessagesSent)
	}
	if !strings.Contains(logs.String(), `msg="message sent" draft=false from_draft=true`) || strings.Contains(logs.String(), "zoe@") {
		t.Errorf("audit line missing, or an address logged:\n%s", logs.String())
	}

	// A second call finds no draft: a draft goes once.
	_, err = e.svc.SendDraft(context.Background(), acct, d.DraftID, nil)
	if r, ok := refusal.As(err); !ok || r.Kind != "unknown_draft" || !strings.Contains(r.Error(), "it was sent already, deleted, or is another account's. Nothing was sent.") {
		t.Errorf("a second send: %v, want unknown_draft", err)
	}
	if st := e.Emu.Stats(); st.MessagesSent != 1 {
		t.Errorf("messages sent = %d after the second call, want 1", st.MessagesSent)
	}
}

func TestSendDraftOfAnotherAccountReadsAsUnknown(t *testing.T) {
	e := newEnv(t, compose.Config{})
	d := e.saveDraft(compose.Request{})
	bob := e.as(identity.User{ID: "u2", Email: other}, e.Client(other, emutest.ScopeGmailCompose))
	for _, id := range []string{d.DraftID, "r1234567890123456789"} {
		_, err := e.svc.SendDraft(context.Background(), bob, id, nil)
		if r, ok := refusal.As(err); !ok || r.Kind != "unknown_draft" {
			t.Errorf("draft %s as bob: %v, want unknown_draft", id, err)
		}
	}
	if ids := e.draftIDs(); len(ids) != 1 || e.Emu.Stats().MessagesSent != 0 {
		t.Errorf("ana's drafts %v, sent %d: want the draft kept, nothing sent", ids, e.Emu.Stats().MessagesSent)
	}
}

// A draft from an address Gmail would not send as is refused where the
// send-as settings can be read: here an alias verified when the draft was
// saved (Gmail keeps a draft's From only then) and pending since.
func TestSendDraftFromAnAliasNoLongerVerified(t *testing.T) {
	e := newEnv(t, compose.Config{})
	if err := e.Emu.Gmail().SetSendAs(user, []gmailsvc.SendAs{{SendAsEmail: "sales@example.org"}}); err != nil {
		t.Fatal(err)
	}
	full := []string{emutest.ScopeGmailCompose, emutest.ScopeGmailReadonly}
	acct := e.as(identity.User{ID: "u1", Email: user, GoogleScopes: full}, nil)
	d, err := e.svc.Send(context.Background(), acct, compose.Request{From: "sales@example.org", To: []string{"zoe@example.org"}, Subject: "Offer", BodyText: "Hello"},
		compose.Options{Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	e.withAliases() // sales@example.org is pending now
	_, err = e.svc.SendDraft(context.Background(), acct, d.DraftID, nil)
	if r, ok := refusal.As(err); !ok || r.Kind != "unverified_alias" {
		t.Errorf("a draft from a pending alias: %v, want unverified_alias", err)
	}
	if e.Emu.Stats().MessagesSent != 0 || len(e.draftIDs()) != 1 {
		t.Errorf("want nothing sent and the draft kept")
	}
	// Without a scope that reads settings it goes, and Gmail sends it from
	// the default address.
	noRead := e.as(identity.User{ID: "u1", Email: user, GoogleScopes: []string{emutest.ScopeGmailCompose}}, e.Client(user, emutest.ScopeGmailCompose))
	res, err := e.svc.SendDraft(context.Background(), noRead, d.DraftID, nil)
	if err != nil || res.From != "sales@example.org" || !res.FromUnchecked {
		t.Fatalf("SendDraft without a read scope: %+v, %v", res, err)
	}
	if h, _ := goParse(t, e.Message(user, res.ID)); h.Get("X-Google-Original-From") == "" {
		t.Errorf("the emulator did not rewrite the From of a pending alias")
	}
}

// A send whose answer was lost is settled by whether the draft is still
// there; one Gmail refused with a 503 sent nothing.
func TestSendDraftWithoutAnAnswer(t *testing.T) {
	for _, tt := range []struct {
		name     string
		fault    emulator.Fault
		kind     refusal.Kind
		delivery refusal.Delivery
		sent     int64
	}{
		{"answer cut off", emulator.Fault{Method: http.MethodPost, PathPrefix: "/gmail/v1/users/me/drafts/send", CutResponseAfter: ptr(int64(0))},
			"maybe_sent", refusal.MaybeSent, 1},
		{"503", emulator.Fault{Method: http.MethodPost, PathPrefix: "/gmail/v1/users/me/drafts/send", Status: 503},
			"gmail_unavailable", refusal.NotSent, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, compose.Config{})
			d := e.saveDraft(compose.Request{})
			e.Inject(tt.fault)
			_, err := e.svc.SendDraft(context.Background(), e.as(identity.User{ID: "u1", Email: user}, nil), d.DraftID, nil)
			r, ok := refusal.As(err)
			if !ok || r.Kind != tt.kind || r.Delivery != tt.delivery {
				t.Fatalf("err = %v, want %s (%v)", err, tt.kind, tt.delivery)
			}
			if n := e.Emu.Stats().MessagesSent; n != tt.sent {
				t.Errorf("messages sent = %d, want %d", n, tt.sent)
			}
		})
	}
}
