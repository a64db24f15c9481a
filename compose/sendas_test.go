package compose_test

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/emulator/gmailsvc"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/internal/refusal"
)

// withAliases gives ana a verified alias with a name, a Reply-To and a
// signature, and a pending one.
func (e *env) withAliases() {
	e.t.Helper()
	if err := e.Emu.Gmail().SetSendAs(user, []gmailsvc.SendAs{
		{SendAsEmail: user, DisplayName: "Ana Lima", Signature: `<div dir="ltr">Ana Lima<br>Finance</div>`},
		{SendAsEmail: "billing@example.com", DisplayName: "Acme Billing", ReplyToAddress: "help@example.com",
			Signature: `<div>Acme Billing &amp; Co<br><a href="https://acme.example">acme.example</a></div>`},
		{SendAsEmail: "sales@example.org", VerificationStatus: gmailsvc.VerificationPending},
	}); err != nil {
		e.t.Fatal(err)
	}
}

// nothingWent fails the test if any message or draft reached Gmail.
func (e *env) nothingWent() {
	e.t.Helper()
	if st := e.Emu.Stats(); st.MessagesSent != 0 || st.DraftsCreated != 0 {
		e.t.Errorf("messages sent %d, drafts %d: want nothing", st.MessagesSent, st.DraftsCreated)
	}
}

// deliverText files a plain-text message from dana into owner's inbox
// and returns its Gmail id.
func (e *env) deliverText(owner, subject, body string) string {
	e.t.Helper()
	raw := "From: Dana Reyes <dana@example.org>\r\nTo: " + owner + "\r\nSubject: " + subject +
		"\r\nDate: Mon, 04 May 2026 10:00:00 +0000\r\nMessage-ID: <" + strings.ReplaceAll(subject, " ", "-") + "@example.org>\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n\r\n" + strings.ReplaceAll(body, "\n", "\r\n")
	d, err := e.Emu.Gmail().Deliver(owner, strings.NewReader(raw))
	if err != nil {
		e.t.Fatal(err)
	}
	return d.ID
}

func TestFromAnAliasSendsWithItsNameAndReplyTo(t *testing.T) {
	e := newEnv(t, compose.Config{})
	e.withAliases()
	res, err := e.send(compose.Request{From: "Billing@Example.com", To: []string{"zoe@example.org"}, Subject: "Invoice", BodyText: "Attached."}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.From != "billing@example.com" {
		t.Errorf("result from %q, want billing@example.com", res.From)
	}
	h, _ := goParse(t, e.Message(user, res.ID))
	from, err := mail.ParseAddress(h.Get("From"))
	if err != nil || from.Address != "billing@example.com" || from.Name != "Acme Billing" {
		t.Errorf("From %q, want Acme Billing <billing@example.com>", h.Get("From"))
	}
	if rt, err := mail.ParseAddress(h.Get("Reply-To")); err != nil || rt.Address != "help@example.com" || h.Get("X-Google-Original-From") != "" {
		t.Errorf("Reply-To %q, X-Google-Original-From %q: want the alias's Reply-To, and no rewriting", h.Get("Reply-To"), h.Get("X-Google-Original-From"))
	}
	if !strings.HasSuffix(h.Get("Message-Id"), "@example.com>") {
		t.Errorf("Message-ID %q", h.Get("Message-Id"))
	}
}

func TestFromThatGmailWouldRewriteIsRefused(t *testing.T) {
	for _, tt := range []struct {
		name, from string
		kind       refusal.Kind
		wants      []string
	}{
		{"unknown", "ceo@example.com", "unknown_alias", []string{`"ceo@example.com" is not one of this Gmail account's send-as addresses`, "Use one of: ana@example.com, billing@example.com;"}},
		{"pending", "sales@example.org", "unverified_alias", []string{"Gmail has not verified the send-as address sales@example.org yet",
			"would send the message from ana@example.com instead", "use one of: ana@example.com, billing@example.com."}},
		{"not an address", "billing", "invalid_address", []string{`"from" "billing" is not an email address`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, compose.Config{})
			e.withAliases()
			for _, draft := range []bool{false, true} {
				_, err := e.send(compose.Request{From: tt.from, To: []string{"zoe@example.org"}, Subject: "Hi", BodyText: "x"}, compose.Options{Draft: draft})
				r, ok := refusal.As(err)
				if !ok || r.Kind != tt.kind || r.Delivery != refusal.NotSent {
					t.Fatalf("draft %v: err = %v, want a %s refusal", draft, err, tt.kind)
				}
				for _, w := range tt.wants {
					if !strings.Contains(r.Error(), w) {
						t.Errorf("draft %v: %q lacks %q", draft, r.Error(), w)
					}
				}
			}
			e.nothingWent()
		})
	}
}

// Without a scope that reads Gmail settings, Gmail refuses the list and
// the send goes nowhere (the tools refuse it earlier, saying what to
// enable; this is the refusal for a grant taken back meanwhile).
func TestFromWithoutAReadScope(t *testing.T) {
	e := newEnv(t, compose.Config{})
	e.withAliases()
	hc := e.Client(user, emutest.ScopeDriveReadonly, emutest.ScopeGmailSend, emutest.ScopeGmailCompose)
	acct := e.as(identity.User{ID: "u1", Email: user}, hc)
	for _, req := range []compose.Request{{From: "billing@example.com"}, {Signature: true}} {
		req.To, req.Subject, req.BodyText = []string{"zoe@example.org"}, "Hi", "x"
		_, err := e.svc.Send(context.Background(), acct, req, compose.Options{})
		if r, ok := refusal.As(err); !ok || r.Kind != "sendas_scope" || !strings.Contains(r.Error(), "allow reading mail") {
			t.Errorf("%+v: err = %v, want sendas_scope", req, err)
		}
	}
	// from as the account's own address needs no settings.
	res, err := e.svc.Send(context.Background(), acct, compose.Request{From: "ANA@example.com", To: []string{"zoe@example.org"}, Subject: "Hi", BodyText: "x"}, compose.Options{})
	if err != nil || res.From != user {
		t.Errorf("from as oneself: %+v, %v", res, err)
	}
	st := e.Emu.Stats()
	if st.MessagesSent != 1 {
		t.Errorf("messages sent = %d, want 1", st.MessagesSent)
	}
	if n := st.Paths[sendAsList]; n != 2 {
		t.Errorf("sendAs.list was asked %d times, want once for each refused call and not for the plain send", n)
	}
}

const sendAsList = "GET /gmail/v1/users/{userId}/settings/sendAs"

func TestReadsSendAs(t *testing.T) {
	for _, tt := range []struct {
		req  compose.Request
		own  string
		want bool
	}{
		{compose.Request{}, user, false},
		{compose.Request{From: "Ana@Example.com"}, user, false},
		{compose.Request{From: "Ana <ana@example.com>"}, user, false},
		{compose.Request{From: "billing@example.com"}, user, true},
		{compose.Request{From: "ana@example.com"}, "", true},
		{compose.Request{Signature: true}, user, true},
	} {
		if got := tt.req.ReadsSendAs(tt.own); got != tt.want {
			t.Errorf("%+v.ReadsSendAs(%q) = %v, want %v", tt.req, tt.own, got, tt.want)
		}
	}
}

// bodiesOf returns a sent message's text and HTML bodies.
func bodiesOf(t *testing.T, raw []byte) (text, html string) {
	t.Helper()
	_, root := goParse(t, raw)
	for _, l := range root.leaves() {
		switch {
		case l.Filename != "":
		case l.Type == "text/plain":
			text = string(l.Body)
		case l.Type == "text/html":
			html = string(l.Body)
		}
	}
	return text, html
}

func TestSignatureGoesOnceInEachBody(t *testing.T) {
	e := newEnv(t, compose.Config{})
	e.withAliases()
	res, err := e.send(compose.Request{From: "billing@example.com", Signature: true, To: []string{"zoe@example.org"}, Subject: "Invoice",
		BodyText: "Hi Zoe,\r\nthe invoice.", BodyHTML: "<p>Hi Zoe,<br>the invoice.</p>"}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Signed || !res.Signature {
		t.Errorf("result: signed %v, signature %v", res.Signed, res.Signature)
	}
	text, html := bodiesOf(t, e.Message(user, res.ID))
	wantText := "Hi Zoe,\r\nthe invoice.\r\n\r\n-- \r\nAcme Billing & Co\r\nacme.example <https://acme.example>\r\n"
	if text != wantText {
		t.Errorf("text body\n%q\nwant\n%q", text, wantText)
	}
	if strings.Count(html, `class="gmail_signature"`) != 1 || strings.Count(html, "Acme Billing &amp; Co") != 1 ||
		!strings.HasPrefix(html, "<p>Hi Zoe,<br>the invoice.</p>") || !strings.HasSuffix(strings.TrimSpace(html), `<a href="https://acme.example">acme.example</a></div></div>`) {
		t.Errorf("HTML body %q: want the alias's signature once, at the end", html)
	}
}

// A forward's quote comes first and the signature after it, Gmail's
// default; the original's own sign-off, here the user's signature, stays
// in the quote, and the new signature goes once.
func TestSignatureAfterAForwardsQuote(t *testing.T) {
	e := newEnv(t, compose.Config{})
	e.withAliases()
	id := e.deliverText(user, "Figures", "Here they are.\n\n-- \nAna Lima\nFinance\n")
	res, err := e.send(compose.Request{Forward: msgRef(id), Signature: true, To: []string{"zoe@example.org"},
		BodyText: "FYI", BodyHTML: "<p>FYI</p>"}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	text, html := bodiesOf(t, e.Message(user, res.ID))
	quote := strings.Index(text, "---------- Forwarded message ---------")
	sig := strings.LastIndex(text, "\r\n\r\n-- \r\nAna Lima\r\nFinance\r\n")
	if quote < 0 || sig < quote || !strings.HasSuffix(text, "\r\n\r\n-- \r\nAna Lima\r\nFinance\r\n") {
		t.Errorf("text body %q: want the quote, then the signature at the end", text)
	}
	if n := strings.Count(text, "-- \r\nAna Lima"); n != 2 {
		t.Errorf("the text has %d copies of the signature, want the quote's and the new one", n)
	}
	if strings.Count(html, `class="gmail_signature"`) != 1 || strings.Index(html, "gmail_quote") > strings.Index(html, "gmail_signature") {
		t.Errorf("HTML body %q: want one signature, after the quote", html)
	}
}

func TestSignatureOfAnAddressWithout(t *testing.T) {
	e := newEnv(t, compose.Config{})
	if err := e.Emu.Gmail().SetSendAs(user, []gmailsvc.SendAs{{SendAsEmail: user, DisplayName: "Ana"}}); err != nil {
		t.Fatal(err)
	}
	res, err := e.send(compose.Request{Signature: true, To: []string{"zoe@example.org"}, Subject: "Hi", BodyText: "x"}, compose.Options{})
	if err != nil || !res.Signed || res.Signature {
		t.Fatalf("%+v, %v: want signed, with no signature added", res, err)
	}
	text, _ := bodiesOf(t, e.Message(user, res.ID))
	if text != "x" {
		t.Errorf("text %q, want the body alone", text)
	}
}

func TestSignatureTooLarge(t *testing.T) {
	e := newEnv(t, compose.Config{})
	for _, tt := range []struct {
		n    int
		kind refusal.Kind
	}{{64 << 10, ""}, {64<<10 + 1, "signature_too_large"}} {
		big := "<div>" + strings.Repeat("a", tt.n-len("<div></div>")) + "</div>"
		if err := e.Emu.Gmail().SetSendAs(user, []gmailsvc.SendAs{{SendAsEmail: user, Signature: big}}); err != nil {
			t.Fatal(err)
		}
		_, err := e.send(compose.Request{Signature: true, To: []string{"zoe@example.org"}, Subject: "Hi", BodyText: "x"}, compose.Options{})
		r, _ := refusal.As(err)
		switch {
		case tt.kind == "" && err != nil:
			t.Errorf("a %d-byte signature: %v", tt.n, err)
		case tt.kind != "" && (r == nil || r.Kind != tt.kind):
			t.Errorf("a %d-byte signature: err = %v, want %s", tt.n, err, tt.kind)
		}
	}
}

// A draft's result links to it in Gmail.
func TestDraftLink(t *testing.T) {
	e := newEnv(t, compose.Config{})
	acct := e.as(identity.User{ID: "u1", Email: user}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := e.svc.Send(ctx, acct, compose.Request{To: []string{"zoe@example.org"}, Subject: "Hi", BodyText: "x"}, compose.Options{Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	// The emulator stands in for Gmail's web UI too: its /mail/ pages lead to
	// the sent-mail page, where drafts are listed.
	if want := e.URL + "/mail/u/" + user + "/#drafts/" + res.ThreadID; res.Link != want || res.ThreadID == "" {
		t.Errorf("link %q, want %q", res.Link, want)
	}
	sent, err := e.svc.Send(ctx, acct, compose.Request{To: []string{"zoe@example.org"}, Subject: "Hi", BodyText: "x"}, compose.Options{})
	if err != nil || sent.Link != "" {
		t.Errorf("a sent message: link %q, %v; want none", sent.Link, err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
}
