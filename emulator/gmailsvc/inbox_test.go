package gmailsvc

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	gmail "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
)

// fromDana is a message dana@example.org sent to ann.
func fromDana(subject string, extra ...string) msg {
	return msg{from: "Dana Reyes <dana@example.org>", to: ann, subject: subject, text: "About " + subject, extraHeaders: extra}
}

func TestDeliverFilesMailFromOthersInTheInbox(t *testing.T) {
	f := newFixture(t)
	d, err := f.gmail.Deliver(ann, bytes.NewReader(fromDana("Invoice").build()))
	if err != nil {
		t.Fatal(err)
	}
	svc := f.client(ann, scopeReadonly)
	m, err := svc.Users.Messages.Get("me", d.ID).Format("metadata").Do()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(m.LabelIds, "INBOX") || !slices.Contains(m.LabelIds, "UNREAD") || slices.Contains(m.LabelIds, "SENT") {
		t.Errorf("labels %v, want INBOX and UNREAD, not SENT", m.LabelIds)
	}
	if got := header(m.Payload.Headers, "From"); got != "Dana Reyes <dana@example.org>" {
		t.Errorf("From %q: a received message keeps its sender", got)
	}
	want, _ := time.Parse(time.RFC1123Z, "Mon, 04 May 2026 10:00:00 +0000")
	if m.InternalDate != want.UnixMilli() {
		t.Errorf("internalDate %d, want the Date header's %d", m.InternalDate, want.UnixMilli())
	}
	// Bob cannot see it, and reads it exactly as a message that does not exist.
	_, errBob := f.client(bob, scopeReadonly).Users.Messages.Get("me", d.ID).Do()
	_, errNone := f.client(bob, scopeReadonly).Users.Messages.Get("me", "18f0000000000000").Do()
	apiError(t, errBob, 404, "notFound")
	apiError(t, errNone, 404, "notFound")
}

func TestDeliverAddsDateAndMessageIDItLacks(t *testing.T) {
	f := newFixture(t)
	raw := "From: dana@example.org\r\nTo: " + ann + "\r\nSubject: bare\r\n\r\nhi\r\n"
	d, err := f.gmail.Deliver(ann, strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	got := string(readRaw(t, f.client(ann, scopeReadonly), d.ID))
	if !strings.Contains(got, "\r\nDate: ") && !strings.HasPrefix(got, "Date: ") || !strings.Contains(got, "Message-ID: <emu-") {
		t.Errorf("stored message lacks the Date or Message-ID Gmail adds:\n%s", got)
	}
	if _, err := f.gmail.Deliver(ann, strings.NewReader("not a header line\x00")); err == nil {
		t.Error("a body that is no message was delivered")
	}
}

func TestReceivedRepliesJoinTheirThread(t *testing.T) {
	f := newFixture(t)
	first, err := f.gmail.Deliver(ann, bytes.NewReader(fromDana("Contract").build()))
	if err != nil {
		t.Fatal(err)
	}
	reply, err := f.gmail.Deliver(ann, bytes.NewReader(fromDana("Re: Contract", "In-Reply-To: <Contract@test.example>", "References: <Contract@test.example>").build()))
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.gmail.Deliver(ann, bytes.NewReader(fromDana("Something else", "In-Reply-To: <Contract@test.example>").build()))
	if err != nil {
		t.Fatal(err)
	}
	if reply.ThreadID != first.ThreadID {
		t.Errorf("the reply started thread %s, want %s", reply.ThreadID, first.ThreadID)
	}
	if other.ThreadID == first.ThreadID {
		t.Error("a message with another subject joined the thread")
	}
	th, err := f.client(ann, scopeReadonly).Users.Threads.Get("me", first.ThreadID).Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(th.Messages) != 2 || th.Messages[0].Id != first.ID || th.Messages[1].Id != reply.ID {
		t.Errorf("thread %s has %d messages, want the first then the reply", th.Id, len(th.Messages))
	}
	if th.Messages[1].Payload == nil || header(th.Messages[1].Payload.Headers, "Subject") != "Re: Contract" {
		t.Error("format=full thread messages lack their headers")
	}
}

func TestThreadsGet(t *testing.T) {
	f := newFixture(t)
	d, err := f.gmail.Deliver(ann, bytes.NewReader(fromDana("Plans").build()))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		scopes []string
		user   string
		id     string
		format string
		code   int
		reason string
	}{
		{"readonly, full", []string{scopeReadonly}, ann, d.ThreadID, "full", 0, ""},
		{"metadata scope, metadata", []string{scopeMetadata}, ann, d.ThreadID, "metadata", 0, ""},
		{"metadata scope, full", []string{scopeMetadata}, ann, d.ThreadID, "full", 403, "forbidden"},
		{"send scope", []string{scopeSend}, ann, d.ThreadID, "full", 403, "insufficientPermissions"},
		{"another user's thread", []string{scopeReadonly}, bob, d.ThreadID, "full", 404, "notFound"},
		{"no such thread", []string{scopeReadonly}, ann, "18f0000000000000", "full", 404, "notFound"},
		{"raw is no thread format", []string{scopeReadonly}, ann, d.ThreadID, "raw", 400, "invalidArgument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th, err := f.client(tc.user, tc.scopes...).Users.Threads.Get("me", tc.id).Format(tc.format).Do()
			if tc.code != 0 {
				apiError(t, err, tc.code, tc.reason)
				return
			}
			if err != nil || len(th.Messages) != 1 || th.Messages[0].Id != d.ID {
				t.Fatalf("threads.get = %+v, %v", th, err)
			}
		})
	}
}

// TestThreadsGetMetadataHeaders: format=metadata with metadataHeaders
// answers each message of the thread with those headers only, matched
// without regard to case, as the discovery document has it ("When given
// and format is METADATA, only include headers specified"); a nested
// fields selection cuts each message down; metadata without
// metadataHeaders keeps every header.
func TestThreadsGetMetadataHeaders(t *testing.T) {
	f := newFixture(t)
	first, err := f.gmail.Deliver(ann, bytes.NewReader(fromDana("Contract").build())) // Message-ID <Contract@test.example>
	if err != nil {
		t.Fatal(err)
	}
	reply, err := f.gmail.Deliver(ann, bytes.NewReader(fromDana("Re: Contract", "In-Reply-To: <Contract@test.example>", "References: <Contract@test.example>").build()))
	if err != nil || reply.ThreadID != first.ThreadID {
		t.Fatalf("the reply = %+v, %v; want it in thread %s", reply, err, first.ThreadID)
	}
	th, err := f.client(ann, scopeMetadata).Users.Threads.Get("me", first.ThreadID).Format("metadata").
		MetadataHeaders("subject", "MESSAGE-ID").Fields("messages(id,payload/headers)").Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(th.Messages) != 2 || th.Id != "" {
		t.Fatalf("thread = %+v: want its 2 messages and nothing the fields leave out", th)
	}
	for i, m := range th.Messages {
		var names []string
		for _, h := range m.Payload.Headers {
			names = append(names, h.Name)
		}
		if len(names) != 2 || header(m.Payload.Headers, "Subject") == "" || header(m.Payload.Headers, "Message-ID") == "" || m.ThreadId != "" || m.Payload.MimeType != "" {
			t.Errorf("message %d: headers %v, threadId %q, mimeType %q; want Subject and Message-ID only", i, names, m.ThreadId, m.Payload.MimeType)
		}
	}
	if got := header(th.Messages[1].Payload.Headers, "Subject"); got != "Re: Contract" {
		t.Errorf("second message's Subject %q, want Re: Contract", got)
	}
	all, err := f.client(ann, scopeMetadata).Users.Threads.Get("me", first.ThreadID).Format("metadata").Do()
	if err != nil {
		t.Fatal(err)
	}
	if header(all.Messages[0].Payload.Headers, "From") == "" || header(all.Messages[0].Payload.Headers, "Subject") == "" {
		t.Error("metadata without metadataHeaders left headers out")
	}
}

func TestAttachmentsGetScopesAndOwner(t *testing.T) {
	f := newFixture(t)
	m := fromDana("Invoice")
	m.attach = []file{{name: "invoice.pdf", mimeType: "application/pdf", content: pattern(5000)}}
	d, err := f.gmail.Deliver(ann, bytes.NewReader(m.build()))
	if err != nil {
		t.Fatal(err)
	}
	full, err := f.client(ann, scopeReadonly).Users.Messages.Get("me", d.ID).Do()
	if err != nil {
		t.Fatal(err)
	}
	attID := ""
	for _, p := range full.Payload.Parts {
		if p.Filename == "invoice.pdf" {
			attID = p.Body.AttachmentId
		}
	}
	if attID == "" {
		t.Fatal("no attachmentId for invoice.pdf")
	}
	body, err := f.client(ann, scopeReadonly).Users.Messages.Attachments.Get("me", d.ID, attID).Do()
	if err != nil || body.Size != 5000 {
		t.Fatalf("attachments.get = %+v, %v", body, err)
	}
	// The discovery document gives attachments.get no metadata scope.
	_, err = f.client(ann, scopeMetadata).Users.Messages.Attachments.Get("me", d.ID, attID).Do()
	apiError(t, err, 403, "insufficientPermissions")
	_, err = f.client(bob, scopeReadonly).Users.Messages.Attachments.Get("me", d.ID, attID).Do()
	apiError(t, err, 404, "notFound")
}

// clockAt makes the fixture's Gmail read its time from *now.
func (f *fixture) clockAt(now *time.Time) {
	f.deps.Now = func() time.Time { return *now }
	f.gmail = New(f.deps)
	mux := http.NewServeMux()
	f.gmail.Register(mux)
	f.srv.Config.Handler = f.faults.Middleware(mux)
}

// search lists the ids of svc's messages that match q, newest first.
func search(t *testing.T, svc *gmail.Service, q string) []string {
	t.Helper()
	res, err := svc.Users.Messages.List("me").Q(q).Do()
	if err != nil {
		t.Fatalf("q=%s: %v", q, err)
	}
	var got []string
	for _, m := range res.Messages {
		got = append(got, m.Id)
	}
	return got
}

func TestSearchOperatorsTheToolDocuments(t *testing.T) {
	f := newFixture(t)
	now := time.Now()
	f.clockAt(&now)

	old := fromDana("Old invoice")
	old.attach = []file{{name: "invoice-2025.pdf", mimeType: "application/pdf", content: []byte("%PDF old")}}
	oldRaw := bytes.Replace(old.build(), []byte("Mon, 04 May 2026 10:00:00 +0000"), []byte(now.Add(-40*24*time.Hour).Format(time.RFC1123Z)), 1)
	newer := fromDana("New invoice")
	newer.attach = []file{{name: "invoice.pdf", mimeType: "application/pdf", content: []byte("%PDF new")}}
	newRaw := bytes.Replace(newer.build(), []byte("Mon, 04 May 2026 10:00:00 +0000"), []byte(now.Add(-2*time.Hour).Format(time.RFC1123Z)), 1)
	oldD, err := f.gmail.Deliver(ann, bytes.NewReader(oldRaw))
	if err != nil {
		t.Fatal(err)
	}
	newD, err := f.gmail.Deliver(ann, bytes.NewReader(newRaw))
	if err != nil {
		t.Fatal(err)
	}
	sent, err := send(f.sender(ann), bytes.NewReader(basic("note to bob").build()), "")
	if err != nil {
		t.Fatal(err)
	}
	svc := f.client(ann, scopeReadonly)
	for q, want := range map[string][]string{
		"from:dana@example.org":     {newD.ID, oldD.ID},
		"from:Dana":                 {newD.ID, oldD.ID},
		"from:me":                   {sent.Id},
		"to:me":                     {newD.ID, oldD.ID},
		"to:bob@example.com":        {sent.Id},
		"subject:invoice":           {newD.ID, oldD.ID},
		"has:attachment":            {newD.ID, oldD.ID},
		"filename:pdf":              {newD.ID, oldD.ID},
		"filename:invoice-2025.pdf": {oldD.ID},
		"newer_than:7d":             {sent.Id, newD.ID},
		"older_than:1m":             {oldD.ID},
		"in:sent":                   {sent.Id},
		"in:inbox":                  {newD.ID, oldD.ID},
		"is:unread from:dana":       {newD.ID, oldD.ID},
		"-has:attachment":           {sent.Id},
		`"New invoice"`:             {newD.ID},
		"in:anywhere":               {sent.Id, newD.ID, oldD.ID},
	} {
		if got := search(t, svc, q); !slices.Equal(got, want) {
			t.Errorf("q=%s: %v, want %v (newest first)", q, got, want)
		}
	}
}

// TestSearchCcLabelAndDates holds cc:, label: and after:/before: to the
// Gmail Help ("Refine searches in Gmail") and the API guide ("Searching
// for messages"): a date is midnight PST, or epoch seconds; before: ends
// before its day begins.
func TestSearchCcLabelAndDates(t *testing.T) {
	f := newFixture(t)
	now := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	f.clockAt(&now)
	deliver := func(m msg, date string) string {
		t.Helper()
		raw := bytes.Replace(m.build(), []byte("Mon, 04 May 2026 10:00:00 +0000"), []byte(date), 1)
		d, err := f.gmail.Deliver(ann, bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		return d.ID
	}
	// early is the last minute of 14 January in PST (15 January in UTC),
	// late the first of 15 January in PST.
	earlyMsg := fromDana("Early")
	earlyMsg.cc = "=?UTF-8?Q?Zo=C3=AB_Ode?= <zoe@example.net>, Carl Ode <carl@example.net>"
	early := deliver(earlyMsg, "Thu, 15 Jan 2026 07:59:00 +0000")
	lateMsg := fromDana("Late")
	lateMsg.to, lateMsg.cc = "carl@example.net", "Ann <"+ann+">"
	late := deliver(lateMsg, "Thu, 15 Jan 2026 00:00:00 -0800")
	sent, err := send(f.sender(ann), bytes.NewReader(basic("note to bob").build()), "")
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	draft, err := f.sender(ann).Users.Drafts.Create("me", &gmail.Draft{}).
		Media(bytes.NewReader(msg{from: ann, to: bob, subject: "unsent", text: "x"}.build()), googleapi.ContentType("message/rfc822")).Do()
	if err != nil {
		t.Fatal(err)
	}
	between := strconv.FormatInt(time.Date(2026, 1, 15, 7, 59, 30, 0, time.UTC).Unix(), 10)
	onOrAfter15th := []string{draft.Message.Id, sent.Id, late}

	svc := f.client(ann, scopeReadonly)
	for _, tc := range []struct {
		q    string
		want []string
	}{
		// cc: reads the Cc header, addresses and names, and not To.
		{"cc:carl@example.net", []string{early}},
		{"cc:Carl", []string{early}},
		{"cc:zoë", []string{early}},
		{"cc:me", []string{late}},
		{"-cc:carl", []string{draft.Message.Id, sent.Id, late}},
		{"cc:bob@example.com", nil},

		// label: names a label, system labels here, in any case.
		{"label:inbox", []string{late, early}},
		{"label:INBOX", []string{late, early}},
		{"label:unread", []string{late, early}},
		{"label:sent", []string{sent.Id}},
		{"label:drafts", []string{draft.Message.Id}},
		{"label:draft", []string{draft.Message.Id}},
		{"-label:inbox", []string{draft.Message.Id, sent.Id}},
		{"label:inboxs", nil},
		{"label:friends", nil},

		// A day begins at midnight PST; before: stops short of it.
		{"after:2026/01/15", onOrAfter15th},
		{"before:2026/01/15", []string{early}},
		{"-before:2026/01/15", onOrAfter15th},
		{"after:2026/01/14 before:2026/01/15", []string{early}},
		{"after:01/15/2026", onOrAfter15th},
		{"before:1/15/2026", []string{early}},
		{"after:2026/1/15", onOrAfter15th},
		{"newer:2026/01/15", onOrAfter15th},
		{"older:2026/01/15", []string{early}},
		{"after:2026/05/05", nil},
		// Epoch seconds are an instant, whatever the zone.
		{"after:" + between, onOrAfter15th},
		{"before:" + between, []string{early}},
		// Forms neither document gives match nothing.
		{"after:2026-01-15", nil},
		{"after:2026/02/30", nil},
		{"before:15/01/2026", nil},
	} {
		t.Run(tc.q, func(t *testing.T) {
			if got := search(t, svc, tc.q); !slices.Equal(got, tc.want) {
				t.Errorf("q=%s: %v, want %v (newest first)", tc.q, got, tc.want)
			}
		})
	}
}

func TestSeedFSDeliversMailFolders(t *testing.T) {
	f := newFixture(t)
	first := fromDana("Seeded").build()
	reply := fromDana("Re: Seeded", "In-Reply-To: <Seeded@test.example>").build()
	fsys := fstest.MapFS{
		ann + "/_mail/1 first.eml":   {Data: first},
		ann + "/_mail/2 reply.eml":   {Data: reply},
		ann + "/_mail/notes.txt":     {Data: []byte("not mail")},
		ann + "/report.pdf":          {Data: []byte("%PDF")},
		bob + "/Projects/readme.txt": {Data: []byte("x")},
	}
	if err := f.gmail.SeedFS(fsys); err != nil {
		t.Fatal(err)
	}
	res, err := f.client(ann, scopeReadonly).Users.Messages.List("me").Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 2 || res.Messages[0].ThreadId != res.Messages[1].ThreadId {
		t.Fatalf("seeded inbox %+v, want the two .eml files in one thread", res.Messages)
	}
}

func TestInboxControlRoute(t *testing.T) {
	f := newFixture(t)
	post := func(query string, body io.Reader) *http.Response {
		resp, err := http.Post(f.srv.URL+"/_emulator/gmail/inbox"+query, "message/rfc822", body)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if resp := post("?user="+ann, bytes.NewReader(fromDana("Via route").build())); resp.StatusCode != http.StatusOK {
		t.Fatalf("deliver: %s", resp.Status)
	}
	if resp := post("", bytes.NewReader(fromDana("No user").build())); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("no user: %s, want 400", resp.Status)
	}
	res, err := f.client(ann, scopeReadonly).Users.Messages.List("me").Q("subject:route").Do()
	if err != nil || len(res.Messages) != 1 {
		t.Fatalf("delivered message not found: %+v, %v", res, err)
	}
}

func header(hs []*gmail.MessagePartHeader, name string) string {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}
