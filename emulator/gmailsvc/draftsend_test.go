package gmailsvc

import (
	"bytes"
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	gmail "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
)

// TestDraftsSend: drafts.send sends a draft as it is, or with a message
// given in its place (as JSON raw or by media upload): the draft is gone,
// a new message with a new id and the SENT label is in its thread, and
// the outbox shows it sent. A draft sent already, or unknown, is 404.
func TestDraftsSend(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(svc *gmail.Service, id string) (*gmail.Message, error)
		want string // the text of the message sent
	}{
		{"as it is", func(svc *gmail.Service, id string) (*gmail.Message, error) {
			return svc.Users.Drafts.Send("me", &gmail.Draft{Id: id}).Do()
		}, "first version"},
		{"with raw in its place", func(svc *gmail.Service, id string) (*gmail.Message, error) {
			raw := base64.URLEncoding.EncodeToString(msg{from: ann, to: bob, subject: "plan", text: "second version"}.build())
			return svc.Users.Drafts.Send("me", &gmail.Draft{Id: id, Message: &gmail.Message{Raw: raw}}).Do()
		}, "second version"},
		{"with an uploaded message in its place", func(svc *gmail.Service, id string) (*gmail.Message, error) {
			return svc.Users.Drafts.Send("me", &gmail.Draft{Id: id}).
				Media(bytes.NewReader(msg{from: ann, to: bob, subject: "plan", text: "uploaded version"}.build()), googleapi.ContentType("message/rfc822"), googleapi.ChunkSize(chunk)).Do()
		}, "uploaded version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			svc := f.client(ann, scopeCompose, scopeReadonly)
			d := draftOf(t, svc, msg{from: ann, to: bob, subject: "plan", text: "first version"})
			sent, err := tc.send(svc, d.Id)
			if err != nil {
				t.Fatal(err)
			}
			if sent.Id == d.Message.Id || sent.ThreadId != d.Message.ThreadId || !slices.Contains(sent.LabelIds, "SENT") || slices.Contains(sent.LabelIds, "DRAFT") {
				t.Errorf("sent %+v from draft message %s in thread %s: want a new id, the draft's thread, SENT", sent, d.Message.Id, d.Message.ThreadId)
			}
			if raw := string(readRaw(t, svc, sent.Id)); !strings.Contains(raw, tc.want) {
				t.Errorf("sent message does not hold %q:\n%s", tc.want, raw)
			}
			_, err = svc.Users.Drafts.Get("me", d.Id).Do()
			apiError(t, err, 404, "notFound")
			_, err = svc.Users.Messages.Get("me", d.Message.Id).Do()
			apiError(t, err, 404, "notFound")
			msgs := f.gmail.Messages(ann)
			if len(msgs) != 1 || msgs[0].ID != sent.Id || msgs[0].Kind != "sent" {
				t.Errorf("outbox %+v, want the one sent message and no draft", msgs)
			}
			_, err = svc.Users.Drafts.Send("me", &gmail.Draft{Id: d.Id}).Do()
			apiError(t, err, 404, "notFound")
			if st := f.deps.Stats.Snapshot(); st.MessagesSent != 1 {
				t.Errorf("messages_sent = %d, want 1", st.MessagesSent)
			}
			if n := f.blobCount(); n != 1 {
				t.Errorf("%d blobs on disk, want the sent message's only", n)
			}
		})
	}
}

// TestDraftsSendRefusals: gmail.send may not send drafts (the discovery
// document's scopes); an unknown draft id is 404; a draft without
// recipients is refused as a send is, and stays a draft.
func TestDraftsSendRefusals(t *testing.T) {
	f := newFixture(t)
	compose := f.client(ann, scopeCompose)
	d := draftOf(t, compose, msg{from: ann, to: bob, subject: "plan", text: "x"})
	_, err := f.client(ann, scopeSend).Users.Drafts.Send("me", &gmail.Draft{Id: d.Id}).Do()
	apiError(t, err, 403, "insufficientPermissions")
	_, err = compose.Users.Drafts.Send("me", &gmail.Draft{Id: "r1234567890123456789"}).Do()
	apiError(t, err, 404, "notFound")
	_, err = compose.Users.Drafts.Send("me", &gmail.Draft{}).Do()
	apiError(t, err, 400, "invalidArgument")
	_, err = f.client(bob, scopeCompose).Users.Drafts.Send("me", &gmail.Draft{Id: d.Id}).Do()
	apiError(t, err, 404, "notFound") // another user's draft reads as unknown

	nobody := draftOf(t, compose, msg{from: ann, subject: "no one", text: "x"})
	_, err = compose.Users.Drafts.Send("me", &gmail.Draft{Id: nobody.Id}).Do()
	apiError(t, err, 400, "invalidArgument")
	if _, err := compose.Users.Drafts.Get("me", nobody.Id).Do(); err != nil {
		t.Errorf("the refused draft is gone: %v", err)
	}
	if st := f.deps.Stats.Snapshot(); st.MessagesSent != 0 {
		t.Errorf("messages_sent = %d after refusals", st.MessagesSent)
	}
}

// TestDraftsSendRewritesFrom: a draft whose From is not a verified alias
// goes from the default address, as any send does.
func TestDraftsSendRewritesFrom(t *testing.T) {
	f := newFixture(t)
	if err := f.gmail.SetSendAs(ann, annAliases); err != nil {
		t.Fatal(err)
	}
	svc := f.client(ann, scopeCompose, scopeReadonly)
	d := draftOf(t, svc, msg{from: "Sales <sales@example.org>", to: bob, subject: "pending", text: "x"})
	sent, err := svc.Users.Drafts.Send("me", &gmail.Draft{Id: d.Id}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if raw := string(readRaw(t, svc, sent.Id)); !strings.Contains(raw, "From: \"Sales\" <ann@example.com>\r\n") || !strings.Contains(raw, "X-Google-Original-From: Sales <sales@example.org>") {
		t.Errorf("sent draft's header:\n%s", raw[:min(len(raw), 400)])
	}
}
