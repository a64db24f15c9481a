package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"testing"

	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/emulator/gmailsvc"
)

const scopeCompose = "https://www.googleapis.com/auth/gmail.compose"

// from and signature are refused before any Google call where the send-as
// settings cannot be read, with what would make them work; from as the
// user's own address needs none.
func TestFromAndSignatureNeedAReadScope(t *testing.T) {
	for _, tt := range []struct {
		name     string
		readMail bool
		wants    []string
	}{
		{"server without --read-mail", false, []string{"started without --read-mail", "\"from\" and \"signature\" cannot work", "restart it with --read-mail, then reconnect", "Nothing was sent."}},
		{"user who did not allow reading mail", true, []string{"has not granted", "Reconnect drivemail (sign in again) and allow reading mail", "Nothing was sent."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(d *Deps) { d.ReadMailEnabled, d.DraftsEnabled = tt.readMail, true })
			h.user.GoogleScopes = append(h.user.GoogleScopes, scopeCompose)
			for _, tool := range []string{"send_email", "create_draft"} {
				for _, args := range []string{
					`{"to":"a@example.com","subject":"s","body_text":"b","from":"billing@example.com"}`,
					`{"to":"a@example.com","subject":"s","body_text":"b","signature":true}`,
				} {
					h.mustRefuse(tool, args, tt.wants...)
				}
			}
			if h.mail.called != 0 {
				t.Errorf("compose called %d times", h.mail.called)
			}
			// The account's own address is no alias to check.
			h.mail.res = compose.Result{ID: "m1", ThreadID: "t1", From: h.user.Email}
			if res := h.call("send_email", `{"to":"a@example.com","subject":"s","body_text":"b","from":"Demo@Example.com"}`); res.IsError {
				t.Errorf("from as oneself: %s", res.text())
			}
		})
	}
}

func TestFromAndSignatureReachCompose(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.ReadMailEnabled, d.MailReader = true, &fakeMailReader{} })
	h.user.GoogleScopes = append(h.user.GoogleScopes, scopeReadonly)
	h.mail.res = compose.Result{ID: "m1", ThreadID: "t1", MessageID: "<x@example.com>", From: "billing@example.com", Signed: true, Signature: true}
	res := h.call("send_email", `{"to":"a@example.com","subject":"s","body_text":"b","from":"billing@example.com","signature":true}`)
	if res.IsError {
		t.Fatal(res.text())
	}
	if h.mail.req.From != "billing@example.com" || !h.mail.req.Signature {
		t.Errorf("compose got from %q, signature %v", h.mail.req.From, h.mail.req.Signature)
	}
	if !strings.Contains(res.text(), "Sent to a@example.com from billing@example.com (") || !strings.Contains(res.text(), "It ends with the Gmail signature of billing@example.com.") {
		t.Errorf("text %q does not name the From and the signature", res.text())
	}
	var out struct {
		From string `json:"from"`
	}
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil || out.From != "billing@example.com" {
		t.Errorf("structuredContent from %q (%v)", out.From, err)
	}
	h.mail.res.Signature = false
	if res := h.call("send_email", `{"to":"a@example.com","subject":"s","body_text":"b","signature":true}`); !strings.Contains(res.text(), "No signature was added: billing@example.com has no Gmail signature.") {
		t.Errorf("text %q does not say no signature was added", res.text())
	}
}

func TestDraftResultLinks(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.DraftsEnabled = true })
	h.user.GoogleScopes = append(h.user.GoogleScopes, scopeCompose)
	link := "https://mail.google.com/mail/u/demo@example.com/#drafts/t2"
	h.mail.res = compose.Result{ID: "m2", ThreadID: "t2", DraftID: "r-9", From: "demo@example.com", Link: link}
	res := h.call("create_draft", `{"to":"a@example.com","subject":"s","body_text":"b"}`)
	if res.IsError || !strings.Contains(res.text(), "from demo@example.com.") || !strings.HasSuffix(res.text(), "The user can open it in Gmail: "+link) {
		t.Fatalf("text %q", res.text())
	}
	var out struct{ Link, From string }
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil || out.Link != link || out.From != "demo@example.com" {
		t.Errorf("structuredContent link %q from %q (%v)", out.Link, out.From, err)
	}
}

func TestSendDraftIsListedWithDrafts(t *testing.T) {
	for _, on := range []bool{false, true} {
		h := newHarness(t, func(d *Deps) { d.DraftsEnabled = on })
		listed := strings.Contains(string(h.rpc("tools/list", map[string]any{})), `"name":"send_draft"`)
		if listed != on {
			t.Errorf("--drafts %v: send_draft listed %v", on, listed)
		}
	}
}

func TestSendDraftArguments(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.DraftsEnabled = true })
	h.user.GoogleScopes = append(h.user.GoogleScopes, scopeCompose)
	h.mustRefuse("send_draft", `{}`, `"draft_id" is required`)
	h.mustRefuse("send_draft", `{"draft_id":"https://mail.google.com/mail/#drafts/18c"}`, "is not a Gmail draft id", "pass the draft_id create_draft returned")
	h.mustRefuse("send_draft", `{"draft_id":"`+strings.Repeat("r", maxDraftIDLen+1)+`"}`, "is not a Gmail draft id")
	h.mustRefuse("send_draft", `{"draft_id":"r1","to":"a@example.com"}`, "to")
	if h.mail.called != 0 {
		t.Errorf("compose called for bad arguments")
	}
	h.mail.draft = compose.DraftSent{ID: "m3", ThreadID: "t3", MessageID: "<d@example.com>", From: "demo@example.com", Recipients: []string{"zoe@example.org"}}
	res := h.call("send_draft", `{"draft_id":" `+strings.Repeat("r", maxDraftIDLen)+` "}`)
	if res.IsError || h.mail.draftID != strings.Repeat("r", maxDraftIDLen) {
		t.Fatalf("a %d-character id: %s (compose got %q)", maxDraftIDLen, res.text(), h.mail.draftID)
	}
	want := "Sent the draft to zoe@example.org from demo@example.com (message id m3, thread t3, Message-ID <d@example.com>). It is in Sent, and no longer in Drafts."
	if res.text() != want {
		t.Errorf("text\n%q\nwant\n%q", res.text(), want)
	}
}

func TestSendDraftNeedsTheDraftsScope(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.DraftsEnabled = true })
	h.mustRefuse("send_draft", `{"draft_id":"r1"}`, "reconnect drivemail", "send_email")
	if h.mail.called != 0 {
		t.Errorf("compose called without the scope")
	}
}

// endToEndMail is a harness over an emulator whose user may send, draft
// and read mail, with a verified alias and a pending one.
func endToEndMail(t *testing.T) (*harness, *emutest.Env) {
	t.Helper()
	env := emutest.Start(t)
	if err := env.Emu.Gmail().SetSendAs(sender, []gmailsvc.SendAs{
		{SendAsEmail: sender, DisplayName: "Demo User", Signature: `<div dir="ltr">Demo User<br><a href="https://acme.example">Acme</a></div>`},
		{SendAsEmail: "billing@example.com", DisplayName: "Acme Billing"},
		{SendAsEmail: "sales@example.org", VerificationStatus: gmailsvc.VerificationPending},
	}); err != nil {
		t.Fatal(err)
	}
	svc := compose.New(compose.Config{})
	h := newHarness(t, func(d *Deps) {
		d.Mail, d.ReadMailEnabled, d.DraftsEnabled, d.MailReader = composeMail{svc: svc}, true, true, &fakeMailReader{}
	})
	h.user.GoogleScopes = append(h.user.GoogleScopes, scopeCompose, scopeReadonly)
	h.overEmulator(env, emutest.ScopeDriveReadonly, emutest.ScopeGmailSend, emutest.ScopeGmailCompose, emutest.ScopeGmailReadonly)
	return h, env
}

// rawOf is a message Gmail stored, as drivemail sent it.
func rawOf(t *testing.T, env *emutest.Env, res callResult) []byte {
	t.Helper()
	var out struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
		t.Fatal(err)
	}
	return env.Message(sender, out.ID)
}

func TestFromEndToEnd(t *testing.T) {
	h, env := endToEndMail(t)
	res := h.call("send_email", `{"to":"zoe@example.org","subject":"Invoice","body_text":"Attached.","from":"billing@example.com"}`)
	if res.IsError {
		t.Fatal(res.text())
	}
	m, err := mail.ReadMessage(bytes.NewReader(rawOf(t, env, res)))
	if err != nil {
		t.Fatal(err)
	}
	if from, err := mail.ParseAddress(m.Header.Get("From")); err != nil || from.Address != "billing@example.com" || from.Name != "Acme Billing" {
		t.Errorf("From %q in the outbox, want Acme Billing <billing@example.com>", m.Header.Get("From"))
	}
	for _, tt := range []struct{ from, want string }{
		{"ceo@example.com", "is not one of this Gmail account's send-as addresses"},
		{"sales@example.org", "Gmail has not verified the send-as address sales@example.org yet"},
	} {
		h.mustRefuse("send_email", `{"to":"zoe@example.org","subject":"s","body_text":"b","from":"`+tt.from+`"}`, tt.want, "Nothing was sent.", "demo@example.com, billing@example.com")
	}
	if n := env.Emu.Stats().MessagesSent; n != 1 {
		t.Errorf("messages sent = %d, want only the alias's", n)
	}
}

func TestSignatureEndToEnd(t *testing.T) {
	h, env := endToEndMail(t)
	res := h.call("send_email", `{"to":"zoe@example.org","subject":"Hi","body_text":"Hello","body_html":"<p>Hello</p>","signature":true}`)
	if res.IsError {
		t.Fatal(res.text())
	}
	if strings.Contains(res.text(), "<div") || strings.Contains(string(res.StructuredContent), "<div") {
		t.Errorf("the signature's HTML reached the result: %s", res.text())
	}
	text, html := textAndHTML(t, rawOf(t, env, res))
	if text != "Hello\r\n\r\n-- \r\nDemo User\r\nAcme <https://acme.example>\r\n" {
		t.Errorf("text part %q: want the body, then the signature once", text)
	}
	if strings.Count(html, `class="gmail_signature"`) != 1 || !strings.HasPrefix(html, "<p>Hello</p>") || !strings.HasSuffix(html, `<a href="https://acme.example">Acme</a></div></div>`) {
		t.Errorf("HTML part %q: want the body, then the signature once", html)
	}
}

// textAndHTML are the decoded text and HTML parts of a multipart/alternative message.
func textAndHTML(t *testing.T, raw []byte) (text, html string) {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	_, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := mr.NextPart() // decodes quoted-printable
		if err != nil {
			break
		}
		b, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
			html = string(b)
		} else {
			text = string(b)
		}
	}
	return text, html
}

func TestSendDraftEndToEnd(t *testing.T) {
	h, env := endToEndMail(t)
	d := h.call("create_draft", `{"to":"zoe@example.org","subject":"Q3","body_text":"Figures."}`)
	if d.IsError {
		t.Fatal(d.text())
	}
	var draft struct {
		DraftID string `json:"draft_id"`
	}
	if err := json.Unmarshal(d.StructuredContent, &draft); err != nil {
		t.Fatal(err)
	}
	res := h.call("send_draft", `{"draft_id":"`+draft.DraftID+`"}`)
	if res.IsError || !strings.HasPrefix(res.text(), "Sent the draft to zoe@example.org from demo@example.com (message id ") {
		t.Fatalf("send_draft: %s", res.text())
	}
	m, err := mail.ReadMessage(bytes.NewReader(rawOf(t, env, res)))
	if err != nil || m.Header.Get("Subject") != "Q3" {
		t.Fatalf("outbox: %v, %v", m, err)
	}
	svc, err := gm.NewService(context.Background(), append([]option.ClientOption{option.WithHTTPClient(h.hc)}, env.Endpoints.GmailOptions()...)...)
	if err != nil {
		t.Fatal(err)
	}
	if list, err := svc.Users.Drafts.List("me").Do(); err != nil || len(list.Drafts) != 0 {
		t.Errorf("drafts.list = %+v, %v: want the draft gone", list, err)
	}
	h.mustRefuse("send_draft", `{"draft_id":"`+draft.DraftID+`"}`, "sent already, deleted, or is another account's", "Nothing was sent.")
	if n := env.Emu.Stats().MessagesSent; n != 1 {
		t.Errorf("messages sent = %d, want 1", n)
	}
}
