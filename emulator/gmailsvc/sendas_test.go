package gmailsvc

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	gmail "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
)

// annAliases are ann's send-as addresses in the tests: a verified alias
// with its own signature and a pending one.
var annAliases = []SendAs{
	{SendAsEmail: "billing@example.com", DisplayName: "Billing", Signature: "<div>Billing team</div>", TreatAsAlias: true},
	{SendAsEmail: "sales@example.org", VerificationStatus: VerificationPending},
}

// TestSendAsListAndGet: the real client reads the primary (isPrimary,
// isDefault, its signature) and the aliases with their verification
// status; get answers one address and 404 for any other; the scopes are
// the discovery document's, so gmail.send and gmail.compose may not read
// them.
func TestSendAsListAndGet(t *testing.T) {
	f := newFixture(t)
	if err := f.gmail.SetSendAs(ann, annAliases); err != nil {
		t.Fatal(err)
	}
	for _, scope := range []string{scopeReadonly, scopeSettingsBasic, scopeModify, scopeFull} {
		list, err := f.client(ann, scope).Users.Settings.SendAs.List("me").Do()
		if err != nil {
			t.Fatalf("%s: %v", scope, err)
		}
		if len(list.SendAs) != 3 {
			t.Fatalf("%s: %d addresses, want the primary and two aliases", scope, len(list.SendAs))
		}
		p := list.SendAs[0]
		if p.SendAsEmail != ann || !p.IsPrimary || !p.IsDefault || p.Signature != `<div dir="ltr">Ann</div>` || p.VerificationStatus != "" {
			t.Errorf("%s: primary %+v", scope, p)
		}
		if a := list.SendAs[1]; a.VerificationStatus != "accepted" || a.Signature != "<div>Billing team</div>" || a.IsPrimary || a.IsDefault {
			t.Errorf("%s: verified alias %+v", scope, a)
		}
		if a := list.SendAs[2]; a.VerificationStatus != "pending" {
			t.Errorf("%s: pending alias %+v", scope, a)
		}
	}
	svc := f.client(ann, scopeReadonly)
	got, err := svc.Users.Settings.SendAs.Get("me", "Billing@Example.com").Do()
	if err != nil || got.SendAsEmail != "billing@example.com" || got.DisplayName != "Billing" {
		t.Errorf("get: %v %+v", err, got)
	}
	_, err = svc.Users.Settings.SendAs.Get("me", "nobody@example.com").Do()
	apiError(t, err, 404, "notFound")
	for _, scope := range []string{scopeSend, scopeCompose} {
		_, err := f.client(ann, scope).Users.Settings.SendAs.List("me").Do()
		apiError(t, err, 403, "insufficientPermissions")
	}
	// Another account's aliases are not the caller's to read.
	_, err = f.client(bob, scopeReadonly).Users.Settings.SendAs.List(ann).Do()
	apiError(t, err, 403, "forbidden")
	// Without aliases set, a user has the primary alone.
	list, err := f.client(bob, scopeReadonly).Users.Settings.SendAs.List("me").Fields("sendAs(sendAsEmail,isDefault)").Do()
	if err != nil || len(list.SendAs) != 1 || list.SendAs[0].SendAsEmail != bob || !list.SendAs[0].IsDefault || list.SendAs[0].Signature != "" {
		t.Errorf("bob's send-as: %v %+v, want his primary, cut to the fields asked", err, list)
	}
}

// TestSetSendAsRefusals: a list Gmail could not hold is refused.
func TestSetSendAsRefusals(t *testing.T) {
	f := newFixture(t)
	for name, list := range map[string][]SendAs{
		"two defaults":         {{SendAsEmail: "a@example.com", IsDefault: true}, {SendAsEmail: ann, IsDefault: true}},
		"a pending default":    {{SendAsEmail: "a@example.com", IsDefault: true, VerificationStatus: VerificationPending}},
		"another primary":      {{SendAsEmail: "a@example.com", IsPrimary: true}},
		"a bad status":         {{SendAsEmail: "a@example.com", VerificationStatus: "maybe"}},
		"not an address":       {{SendAsEmail: "billing"}},
		"the same alias twice": {{SendAsEmail: "a@example.com"}, {SendAsEmail: "A@example.com"}},
	} {
		if err := f.gmail.SetSendAs(ann, list); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if n := len(f.gmail.SendAsList(ann)); n != 1 {
		t.Errorf("%d addresses after refusals, want the primary alone", n)
	}
	if err := f.gmail.SetSendAs(ann, make([]SendAs, maxSendAs+1)); err == nil {
		t.Errorf("%d addresses accepted, past the bound", maxSendAs+1)
	}
}

// TestFromRewriting: a From of a verified send-as address is sent as
// written; any other address (a pending alias, a stranger) is replaced by
// the default send-as, its name kept and the original in
// X-Google-Original-From, which the outbox shows as the From used.
func TestFromRewriting(t *testing.T) {
	f := newFixture(t)
	if err := f.gmail.SetSendAs(ann, annAliases); err != nil {
		t.Fatal(err)
	}
	svc := f.sender(ann)
	for _, tc := range []struct {
		from, want, original string
	}{
		{"Billing <billing@example.com>", "Billing <billing@example.com>", ""},
		{"Ann <ANN@example.com>", "Ann <ANN@example.com>", ""},
		{"Sales <sales@example.org>", `"Sales" <ann@example.com>`, "Sales <sales@example.org>"},
		{"mallory@evil.example", "<ann@example.com>", "mallory@evil.example"},
	} {
		sent, err := send(svc, bytes.NewReader(msg{from: tc.from, to: bob, subject: "from " + tc.from, text: "x"}.build()), "")
		if err != nil {
			t.Fatal(err)
		}
		raw := string(readRaw(t, svc, sent.Id))
		head, _, _ := strings.Cut(raw, "\r\n\r\n")
		if !strings.Contains(head, "\r\nFrom: "+tc.want+"\r\n") && !strings.HasPrefix(head, "From: "+tc.want+"\r\n") {
			t.Errorf("From %q: stored header\n%s\nwant From: %s", tc.from, head, tc.want)
		}
		if got := strings.Contains(head, "X-Google-Original-From: "+tc.original+"\r\n"); got != (tc.original != "") {
			t.Errorf("From %q: X-Google-Original-From in\n%s\nwant %q", tc.from, head, tc.original)
		}
		for _, m := range f.gmail.Messages(ann) {
			if m.ID == sent.Id && !strings.Contains(m.From, strings.Trim(strings.SplitN(tc.want, "<", 2)[1], ">")) {
				t.Errorf("From %q: the outbox shows %q, want the address used", tc.from, m.From)
			}
		}
	}
}

// TestSendAsControlRoute: PUT and GET /_emulator/gmail/sendas set and
// read a user's addresses in Gmail's own shape.
func TestSendAsControlRoute(t *testing.T) {
	f := newFixture(t)
	body, _ := json.Marshal(map[string]any{"sendAs": annAliases})
	req, _ := http.NewRequest("PUT", f.srv.URL+"/_emulator/gmail/sendas?user="+ann, bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"verificationStatus": "pending"`) {
		t.Fatalf("PUT: %d %s", resp.StatusCode, b)
	}
	req, _ = http.NewRequest("PUT", f.srv.URL+"/_emulator/gmail/sendas?user="+ann, strings.NewReader(`{"sendAs":[{"sendAsEmail":"x@example.com","isDefault":true},{"sendAsEmail":"y@example.com","isDefault":true}]}`))
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != 400 {
		t.Errorf("two defaults: %v %v, want 400", resp, err)
	}
	resp.Body.Close()
	list, err := f.client(ann, scopeReadonly).Users.Settings.SendAs.List("me").Do()
	if err != nil || len(list.SendAs) != 3 {
		t.Errorf("after the refused PUT: %v %d addresses, want the 3 set first", err, len(list.SendAs))
	}
}

// draftOf creates a draft of ann's through the real client.
func draftOf(t *testing.T, svc *gmail.Service, m msg) *gmail.Draft {
	t.Helper()
	d, err := svc.Users.Drafts.Create("me", &gmail.Draft{Message: &gmail.Message{}}).Media(bytes.NewReader(m.build()), googleapi.ContentType("message/rfc822")).Do()
	if err != nil {
		t.Fatal(err)
	}
	return d
}
