package gmailsvc

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	gmail "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
)

// TestFieldsCutEveryAnswer: like Google, Gmail answers only the fields a
// request names, so a client that forgets one does not get it here.
func TestFieldsCutEveryAnswer(t *testing.T) {
	f := newFixture(t)
	svc := f.sender(ann)
	m := basic("fields")
	m.attach = []file{{"a.pdf", "application/pdf", pattern(3000)}}
	raw := m.build()

	sent, err := svc.Users.Messages.Send("me", &gmail.Message{}).Fields("id").
		Media(bytes.NewReader(raw), googleapi.ContentType("message/rfc822")).Do()
	if err != nil || sent.Id == "" || sent.ThreadId != "" || sent.LabelIds != nil {
		t.Fatalf("send with fields=id: %+v %v", sent, err)
	}
	jsonSent, err := svc.Users.Messages.Send("me", &gmail.Message{Raw: base64.URLEncoding.EncodeToString(raw)}).Fields("threadId").Do()
	if err != nil || jsonSent.Id != "" || jsonSent.ThreadId == "" {
		t.Errorf("JSON send with fields=threadId: %+v %v", jsonSent, err)
	}

	meta, err := svc.Users.Messages.Get("me", sent.Id).Format("metadata").Fields("id,payload/headers").Do()
	if err != nil || meta.Id != sent.Id || meta.Snippet != "" || meta.LabelIds != nil || meta.Payload == nil ||
		meta.Payload.MimeType != "" || len(meta.Payload.Headers) == 0 {
		t.Errorf("metadata with fields=id,payload/headers: %+v %v", meta, err)
	}
	full, err := svc.Users.Messages.Get("me", sent.Id).Fields("payload(parts(filename,body/attachmentId))").Do()
	if err != nil || full.Id != "" || len(full.Payload.Parts) != 2 || full.Payload.Parts[1].Filename != "a.pdf" ||
		full.Payload.Parts[1].Body.AttachmentId == "" || full.Payload.Parts[1].Body.Size != 0 {
		t.Fatalf("full with nested fields: %+v %v", full, err)
	}
	att := full.Payload.Parts[1].Body.AttachmentId

	for _, tc := range []struct {
		fields  string
		id, raw bool
	}{{"", true, true}, {"raw", false, true}, {"id", true, false}, {"*", true, true}} {
		got, err := svc.Users.Messages.Get("me", sent.Id).Format("raw").Fields(googleapi.Field(tc.fields)).Do()
		if err != nil {
			t.Fatalf("raw with fields=%q: %v", tc.fields, err)
		}
		body, _ := base64.URLEncoding.DecodeString(got.Raw)
		if (got.Id != "") != tc.id || (got.Raw != "") != tc.raw || tc.raw && !bytes.Equal(body, raw) {
			t.Errorf("raw with fields=%q: id %q, %d bytes of raw", tc.fields, got.Id, len(body))
		}
	}

	draft, err := svc.Users.Drafts.Create("me", &gmail.Draft{}).Fields("id").
		Media(bytes.NewReader(raw), googleapi.ContentType("message/rfc822")).Do()
	if err != nil || draft.Id == "" || draft.Message != nil {
		t.Fatalf("draft with fields=id: %+v %v", draft, err)
	}
	for _, tc := range []struct {
		fields  string
		id, raw bool
	}{{"", true, true}, {"message/raw", false, true}, {"message(raw,id)", false, true}, {"id", true, false}} {
		got, err := svc.Users.Drafts.Get("me", draft.Id).Format("raw").Fields(googleapi.Field(tc.fields)).Do()
		if err != nil {
			t.Fatalf("draft raw with fields=%q: %v", tc.fields, err)
		}
		hasRaw := got.Message != nil && got.Message.Raw != ""
		if (got.Id != "") != tc.id || hasRaw != tc.raw {
			t.Errorf("draft raw with fields=%q: %+v", tc.fields, got)
		}
		if hasRaw {
			if body, _ := base64.URLEncoding.DecodeString(got.Message.Raw); !bytes.Equal(body, raw) {
				t.Errorf("draft raw with fields=%q: the message differs", tc.fields)
			}
		}
	}

	list, err := svc.Users.Messages.List("me").Fields("messages/id").Do()
	if err != nil || len(list.Messages) != 3 || list.Messages[0].Id == "" || list.Messages[0].ThreadId != "" || list.ResultSizeEstimate != 0 {
		t.Errorf("list with fields=messages/id: %+v %v", list, err)
	}
	drafts, err := svc.Users.Drafts.List("me").Fields("resultSizeEstimate").Do()
	if err != nil || drafts.Drafts != nil || drafts.ResultSizeEstimate != 1 {
		t.Errorf("drafts.list with fields=resultSizeEstimate: %+v %v", drafts, err)
	}
	prof, err := svc.Users.GetProfile("me").Fields("emailAddress").Do()
	if err != nil || prof.EmailAddress != ann || prof.MessagesTotal != 0 || prof.HistoryId != 0 {
		t.Errorf("profile with fields=emailAddress: %+v %v", prof, err)
	}
	body, err := svc.Users.Messages.Attachments.Get("me", sent.Id, att).Fields("size").Do()
	if err != nil || body.Size != 3000 || body.Data != "" {
		t.Errorf("attachment with fields=size: %+v %v", body, err)
	}
	body, err = svc.Users.Messages.Attachments.Get("me", sent.Id, att).Fields("data").Do()
	if data, _ := base64.URLEncoding.DecodeString(body.Data); err != nil || body.Size != 0 || !bytes.Equal(data, pattern(3000)) {
		t.Errorf("attachment with fields=data: size %d, %d bytes, %v", body.Size, len(data), err)
	}
}

func TestFieldsRefusals(t *testing.T) {
	f := newFixture(t)
	svc := f.sender(ann)
	sent, err := send(svc, bytes.NewReader(basic("x").build()), "")
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"get, unknown field": func() error { _, err := svc.Users.Messages.Get("me", sent.Id).Fields("bogus").Do(); return err },
		"list, bad syntax":   func() error { _, err := svc.Users.Messages.List("me").Fields("messages(id").Do(); return err },
		"profile, a Message field": func() error {
			_, err := svc.Users.GetProfile("me").Fields("threadId").Do()
			return err
		},
		"upload send": func() error {
			_, err := svc.Users.Messages.Send("me", &gmail.Message{}).Fields("bogus").
				Media(bytes.NewReader(basic("y").build()), googleapi.ContentType("message/rfc822")).Do()
			return err
		},
		"resumable draft": func() error {
			_, err := svc.Users.Drafts.Create("me", &gmail.Draft{}).Fields("bogus").
				Media(bytes.NewReader(pattern(3*chunk)), googleapi.ContentType("message/rfc822"), googleapi.ChunkSize(chunk)).Do()
			return err
		},
	} {
		ge := apiError(t, call(), 400, "invalidParameter")
		if !strings.HasPrefix(ge.Message, "Invalid field selection ") {
			t.Errorf("%s: %q", name, ge.Message)
		}
	}
	if n := len(f.gmail.Messages(ann)); n != 1 {
		t.Errorf("%d messages stored; the refused uploads stored something", n)
	}
}
