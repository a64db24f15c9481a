package gmailsvc

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	gmail "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
)

func TestScopes(t *testing.T) {
	f := newFixture(t)
	sent, err := send(f.sender(ann), bytes.NewReader(basic("s").build()), "")
	if err != nil {
		t.Fatal(err)
	}
	raw := basic("x").build()
	for _, tc := range []struct {
		name   string
		scopes []string
		call   func(svc *gmail.Service) error
		code   int
		reason string
	}{
		{"send with readonly", []string{scopeReadonly}, func(s *gmail.Service) error { _, err := send(s, bytes.NewReader(raw), ""); return err }, 403, "insufficientPermissions"},
		{"send with compose", []string{scopeCompose}, func(s *gmail.Service) error { _, err := send(s, bytes.NewReader(raw), ""); return err }, 0, ""},
		{"send with mail.google.com", []string{scopeFull}, func(s *gmail.Service) error { _, err := send(s, bytes.NewReader(raw), ""); return err }, 0, ""},
		{"draft with send only", []string{scopeSend}, func(s *gmail.Service) error {
			_, err := s.Users.Drafts.Create("me", &gmail.Draft{}).Media(bytes.NewReader(raw), googleapi.ContentType("message/rfc822")).Do()
			return err
		}, 403, "insufficientPermissions"},
		{"list with send only", []string{scopeSend}, func(s *gmail.Service) error { _, err := s.Users.Messages.List("me").Do(); return err }, 403, "insufficientPermissions"},
		{"get with send only", []string{scopeSend}, func(s *gmail.Service) error { _, err := s.Users.Messages.Get("me", sent.Id).Do(); return err }, 403, "insufficientPermissions"},
		{"get with readonly", []string{scopeReadonly}, func(s *gmail.Service) error {
			_, err := s.Users.Messages.Get("me", sent.Id).Format("raw").Do()
			return err
		}, 0, ""},
		{"raw with metadata scope", []string{scopeMetadata}, func(s *gmail.Service) error {
			_, err := s.Users.Messages.Get("me", sent.Id).Format("raw").Do()
			return err
		}, 403, "forbidden"},
		{"metadata with metadata scope", []string{scopeMetadata}, func(s *gmail.Service) error {
			_, err := s.Users.Messages.Get("me", sent.Id).Format("metadata").Do()
			return err
		}, 0, ""},
		{"q with metadata scope", []string{scopeMetadata}, func(s *gmail.Service) error { _, err := s.Users.Messages.List("me").Q("x").Do(); return err }, 403, "forbidden"},
		{"profile with send only", []string{scopeSend}, func(s *gmail.Service) error { _, err := s.Users.GetProfile("me").Do(); return err }, 403, "insufficientPermissions"},
		{"another user's mailbox", []string{scopeFull}, func(s *gmail.Service) error { _, err := s.Users.Messages.List(bob).Do(); return err }, 403, "forbidden"},
		{"own address as userId", []string{scopeFull}, func(s *gmail.Service) error { _, err := s.Users.Messages.List("Ann@Example.com").Do(); return err }, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(f.client(ann, tc.scopes...))
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			apiError(t, err, tc.code, tc.reason)
		})
	}
	// No token at all.
	_, err = f.clientWithHooks("ya29.nothing", nil).Users.Messages.List("me").Do()
	apiError(t, err, http.StatusUnauthorized, "authError")
}

func TestUsersNeverSeeEachOthersMail(t *testing.T) {
	f := newFixture(t)
	sent, err := send(f.sender(ann), bytes.NewReader(basic("private").build()), "")
	if err != nil {
		t.Fatal(err)
	}
	bobSvc := f.sender(bob)
	_, err = bobSvc.Users.Messages.Get("me", sent.Id).Do()
	missing := apiError(t, err, 404, "notFound")
	_, err = bobSvc.Users.Messages.Get("me", "18f00000deadbeef").Do()
	if other := apiError(t, err, 404, "notFound"); other.Message != missing.Message {
		t.Errorf("another user's id says %q, a missing id %q: they must not differ", missing.Message, other.Message)
	}
	if list, _ := bobSvc.Users.Messages.List("me").Do(); len(list.Messages) != 0 {
		t.Errorf("bob lists %d messages", len(list.Messages))
	}
}

func TestDrafts(t *testing.T) {
	f := newFixture(t)
	svc := f.sender(ann)
	small := msg{from: ann, subject: "draft without recipients", text: "later"}.build()
	d1, err := svc.Users.Drafts.Create("me", &gmail.Draft{}).Media(bytes.NewReader(small), googleapi.ContentType("message/rfc822")).Do()
	if err != nil {
		t.Fatalf("multipart draft: %v", err)
	}
	bigMsg := basic("big draft")
	bigMsg.attach = []file{{"a.bin", "application/octet-stream", pattern(400 << 10)}}
	big := bigMsg.build()
	d2, err := svc.Users.Drafts.Create("me", &gmail.Draft{}).Media(bytes.NewReader(big), googleapi.ContentType("message/rfc822"), googleapi.ChunkSize(chunk)).Do()
	if err != nil {
		t.Fatalf("resumable draft: %v", err)
	}
	d3, err := svc.Users.Drafts.Create("me", &gmail.Draft{Message: &gmail.Message{Raw: base64.URLEncoding.EncodeToString(small)}}).Do()
	if err != nil {
		t.Fatalf("raw draft: %v", err)
	}
	for _, d := range []*gmail.Draft{d1, d2, d3} {
		if d.Id == "" || d.Id[0] != 'r' || d.Message == nil || !slices.Equal(d.Message.LabelIds, []string{"DRAFT"}) {
			t.Errorf("draft = %+v", d)
		}
	}
	got, err := svc.Users.Drafts.Get("me", d2.Id).Format("raw").Do()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := base64.URLEncoding.DecodeString(got.Message.Raw); got.Id != d2.Id || !bytes.Equal(b, big) {
		t.Error("drafts.get format=raw is not the uploaded message")
	}
	list, err := svc.Users.Drafts.List("me").Do()
	if err != nil || len(list.Drafts) != 3 || list.Drafts[0].Id != d3.Id || list.Drafts[2].Id != d1.Id {
		t.Fatalf("drafts.list = %v (%v), want the three, newest first", list, err)
	}
	msgs, err := svc.Users.Messages.List("me").LabelIds("DRAFT").Do()
	if err != nil || len(msgs.Messages) != 3 {
		t.Errorf("messages with DRAFT: %d (%v)", len(msgs.Messages), err)
	}
	if sent, _ := svc.Users.Messages.List("me").LabelIds("SENT").Do(); len(sent.Messages) != 0 {
		t.Errorf("drafts listed as SENT: %d", len(sent.Messages))
	}
	if _, err := svc.Users.Drafts.Get("me", "r123").Do(); err == nil {
		t.Error("unknown draft id found")
	}
	if st := f.deps.Stats.Snapshot(); st.DraftsCreated != 3 || st.MessagesSent != 0 {
		t.Errorf("stats drafts=%d sent=%d", st.DraftsCreated, st.MessagesSent)
	}
}

func TestListPagingAndSearch(t *testing.T) {
	f := newFixture(t)
	svc := f.sender(ann)
	var ids []string
	for i := range 5 {
		m := basic(fmt.Sprintf("note %d", i))
		if i == 3 {
			m.subject, m.text = "invoice march", "see attached"
			m.to = "Carol <carol@example.com>"
			m.attach = []file{{"invoice.pdf", "application/pdf", pattern(10)}}
		}
		sent, err := send(svc, bytes.NewReader(m.build()), "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append([]string{sent.Id}, ids...) // newest first
	}
	var got []string
	token := ""
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("paging does not end")
		}
		call := svc.Users.Messages.List("me").MaxResults(2)
		if token != "" {
			call = call.PageToken(token)
		}
		page, err := call.Do()
		if err != nil {
			t.Fatal(err)
		}
		if page.ResultSizeEstimate != 5 || len(page.Messages) > 2 {
			t.Fatalf("page of %d, estimate %d", len(page.Messages), page.ResultSizeEstimate)
		}
		for _, m := range page.Messages {
			got = append(got, m.Id)
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	if !slices.Equal(got, ids) {
		t.Errorf("paged ids %v, want %v", got, ids)
	}

	for _, tc := range []struct {
		q    string
		want int
	}{
		{"subject:invoice", 1},
		{"to:carol", 1},
		{"from:ann@example.com", 5},
		{"has:attachment", 1},
		{"filename:pdf", 1},
		{"-subject:invoice", 4},
		{`"invoice march"`, 1},
		{`"march invoice"`, 0},
		{"note", 4},
		{"in:sent note", 4},
		{"in:drafts", 0},
		{"rfc822msgid:<invoice.march@test.example>", 1},
		{"larger:100 smaller:1m", 5},
		{"larger:1m", 0},
		{"unknownop:value", 0},
	} {
		res, err := svc.Users.Messages.List("me").Q(tc.q).Do()
		if err != nil || len(res.Messages) != tc.want {
			t.Errorf("q=%s: %d messages (%v), want %d", tc.q, len(res.Messages), err, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		call *gmail.UsersMessagesListCall
	}{
		{"bad page token", svc.Users.Messages.List("me").PageToken("garbage")},
		{"zero maxResults", svc.Users.Messages.List("me").MaxResults(0).PageToken("b2Zmc2V0OjA")},
	} {
		if _, err := tc.call.Do(); err == nil {
			t.Errorf("%s accepted", tc.name)
		}
	}
	// maxResults above 500 is cut to 500, as Gmail does.
	if res, err := svc.Users.Messages.List("me").MaxResults(501).Do(); err != nil || len(res.Messages) != 5 {
		t.Errorf("maxResults=501: %v", err)
	}
}

func TestProfile(t *testing.T) {
	f := newFixture(t)
	svc := f.sender(ann)
	first, _ := send(svc, bytes.NewReader(basic("a").build()), "")
	reply := basic("Re: a")
	reply.extraHeaders = []string{"In-Reply-To: <a@test.example>"}
	if _, err := send(svc, bytes.NewReader(reply.build()), first.ThreadId); err != nil {
		t.Fatal(err)
	}
	if _, err := send(svc, bytes.NewReader(basic("c").build()), ""); err != nil {
		t.Fatal(err)
	}
	p, err := svc.Users.GetProfile("me").Do()
	if err != nil || p.EmailAddress != ann || p.MessagesTotal != 3 || p.ThreadsTotal != 2 || p.HistoryId == 0 {
		t.Errorf("profile = %+v (%v)", p, err)
	}
}

// TestFullFormatReadsTheMessageOnce: format=full inlines every small
// body in one pass over the message. A pass per body made a message of
// many short parts behind one large attachment take seconds per read
// (500 parts behind 4 MiB: about 8 s), minutes near the 35 MiB cap.
func TestFullFormatReadsTheMessageOnce(t *testing.T) {
	f := newFixture(t)
	svc := f.sender(ann)
	const parts = 500
	var b bytes.Buffer
	b.WriteString("From: " + ann + "\r\nTo: " + bob + "\r\nSubject: many parts\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n")
	b.WriteString("--B\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=big.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n")
	b.WriteString(fold(base64.StdEncoding.EncodeToString(pattern(4<<20))) + "\r\n")
	for i := range parts {
		fmt.Fprintf(&b, "--B\r\nContent-Type: text/plain\r\n\r\npart %d\r\n", i)
	}
	b.WriteString("--B--\r\n")
	sent, err := send(svc, bytes.NewReader(b.Bytes()), "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	m, err := svc.Users.Messages.Get("me", sent.Id).Format("full").Do()
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.Payload.Parts); got != parts+1 {
		t.Fatalf("%d parts, want %d", got, parts+1)
	}
	for i, p := range m.Payload.Parts[1:] {
		data, err := base64.URLEncoding.DecodeString(p.Body.Data)
		if want := fmt.Sprintf("part %d", i); err != nil || string(data) != want {
			t.Fatalf("part %s: %q %v, want %q", p.PartId, data, err, want)
		}
	}
	t.Logf("format=full of %d parts: %v", parts+1, took)
	if took > 2*time.Second {
		t.Errorf("format=full took %v; the message was read once per part", took)
	}
}

func TestReadBodiesIsOnePass(t *testing.T) {
	raw := msg{from: ann, to: bob, subject: "x", text: "the text", html: "<p>hi</p>",
		attach: []file{{"a.bin", "application/octet-stream", pattern(100_000)}}}.build()
	cr := &countingReader{r: bytes.NewReader(raw)}
	got, err := readBodies(cr, map[string]bool{"0.0": true, "0.1.0": true, "1": true}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if string(got["0.0"]) != "the text" || string(got["0.1.0"]) != "<p>hi</p>" || !bytes.Equal(got["1"], pattern(10)) {
		t.Errorf("bodies %q", got)
	}
	if cr.n > int64(len(raw)) {
		t.Errorf("read %d bytes of a %d-byte message", cr.n, len(raw))
	}
}
