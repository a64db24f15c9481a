package gmailsvc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	gmail "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

func TestSendMultipartAndReadBack(t *testing.T) {
	f := newFixture(t)
	svc := f.sender(ann)
	m := basic("quarterly report")
	m.cc, m.bcc = "Carol <carol@example.com>", "dave@example.com"
	m.attach = []file{{"report.pdf", "application/pdf", pattern(5000)}}
	raw := m.build()

	sent, err := send(svc, bytes.NewReader(raw), "")
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	if sent.Id == "" || sent.ThreadId != sent.Id || len(sent.LabelIds) != 1 || sent.LabelIds[0] != "SENT" {
		t.Errorf("sent = id %q thread %q labels %v", sent.Id, sent.ThreadId, sent.LabelIds)
	}
	if got := readRaw(t, svc, sent.Id); !bytes.Equal(got, raw) {
		t.Fatalf("format=raw differs from what was sent (%d vs %d bytes)", len(got), len(raw))
	}

	meta, err := svc.Users.Messages.Get("me", sent.Id).Format("metadata").MetadataHeaders("Subject", "bcc").Do()
	if err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{}
	for _, h := range meta.Payload.Headers {
		hdr[h.Name] = h.Value
	}
	if len(hdr) != 2 || hdr["Subject"] != "quarterly report" || hdr["Bcc"] != "dave@example.com" {
		t.Errorf("metadata headers = %v, want only Subject and Bcc", hdr)
	}
	if meta.SizeEstimate != int64(len(raw)) || meta.Snippet != "Hello quarterly report" || meta.InternalDate == 0 || meta.HistoryId == 0 {
		t.Errorf("metadata = size %d snippet %q date %d history %d", meta.SizeEstimate, meta.Snippet, meta.InternalDate, meta.HistoryId)
	}

	full, err := svc.Users.Messages.Get("me", sent.Id).Do()
	if err != nil {
		t.Fatal(err)
	}
	p := full.Payload
	if p.MimeType != "multipart/mixed" || len(p.Parts) != 2 || p.Parts[0].Parts[0].PartId != "0.0" {
		t.Fatalf("payload tree: %s with %d parts", p.MimeType, len(p.Parts))
	}
	text, _ := base64.URLEncoding.DecodeString(p.Parts[0].Parts[0].Body.Data)
	if string(text) != "Hello quarterly report" {
		t.Errorf("text body %q", text)
	}
	att := p.Parts[1]
	if att.Filename != "report.pdf" || att.Body.Size != 5000 || att.Body.AttachmentId == "" || att.Body.Data != "" {
		t.Fatalf("attachment part = %q size %d id %q", att.Filename, att.Body.Size, att.Body.AttachmentId)
	}
	body, err := svc.Users.Messages.Attachments.Get("me", sent.Id, att.Body.AttachmentId).Do()
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := base64.URLEncoding.DecodeString(body.Data); !bytes.Equal(data, pattern(5000)) || body.Size != 5000 {
		t.Error("attachments.get does not return the attached bytes")
	}

	minimal, err := svc.Users.Messages.Get("me", sent.Id).Format("minimal").Do()
	if err != nil || minimal.Payload != nil || minimal.Raw != "" || minimal.ThreadId != sent.ThreadId {
		t.Errorf("minimal = %+v, %v", minimal, err)
	}
	st := f.deps.Stats.Snapshot()
	if st.MessagesSent != 1 || st.UploadsStarted != 1 || st.UploadsFinished != 1 {
		t.Errorf("stats sent=%d started=%d finished=%d", st.MessagesSent, st.UploadsStarted, st.UploadsFinished)
	}
}

func TestSendResumableWithRetriedChunks(t *testing.T) {
	synctest.Test(t, testSendResumableWithRetriedChunks)
}

func testSendResumableWithRetriedChunks(t *testing.T) {
	f := newBubbleFixture(t)
	m := basic("big")
	m.attach = []file{{"data.bin", "application/octet-stream", pattern(750 << 10)}} // ~1 MiB encoded
	raw := m.build()
	if len(raw) < 4*chunk {
		t.Fatalf("message is %d bytes, want over four chunks", len(raw))
	}
	path := "/upload/gmail/v1/users/me/messages/send"
	cut := int64(4096)
	inject := func(fl core.Fault) func() {
		return func() {
			if err := f.faults.Add(fl); err != nil {
				t.Error(err)
			}
		}
	}
	hooks := map[int]func(){
		2: inject(core.Fault{PathPrefix: path, Status: 503, Times: 2}),
		5: inject(core.Fault{PathPrefix: path, CutRequestAfter: &cut}),
	}
	svc := f.clientWithHooks(f.deps.Accounts.IssueAccess(ann, "test", []string{scopeSend, scopeReadonly}), hooks)
	sent, err := send(svc, bytes.NewReader(raw), "")
	if err != nil {
		t.Fatalf("send with faults: %v", err)
	}
	if got := readRaw(t, svc, sent.Id); !bytes.Equal(got, raw) {
		t.Fatal("format=raw differs from what was sent")
	}
	list, err := svc.Users.Messages.List("me").Do()
	if err != nil || len(list.Messages) != 1 {
		t.Fatalf("%v messages after retried chunks, want exactly 1 (%v)", len(list.Messages), err)
	}
	if p := f.faults.Pending(); len(p) != 0 {
		t.Errorf("faults never used: %+v", p)
	}
	if st := f.deps.Stats.Snapshot(); st.MessagesSent != 1 || st.UploadsFinished != 1 {
		t.Errorf("stats sent=%d finished=%d", st.MessagesSent, st.UploadsFinished)
	}
}

// brokenReader returns its content and then an error instead of io.EOF,
// as a Drive download that fails halfway does.
type brokenReader struct{ r io.Reader }

func (b brokenReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if errors.Is(err, io.EOF) {
		return n, errors.New("drive download failed")
	}
	return n, err
}

func TestBrokenReaderSendsNothing(t *testing.T) {
	f := newFixture(t)
	svc := f.sender(ann)
	m := basic("half")
	m.attach = []file{{"a.bin", "application/octet-stream", pattern(600 << 10)}}
	raw := m.build()
	_, err := send(svc, brokenReader{bytes.NewReader(raw[:len(raw)-1000])}, "")
	if err == nil || !strings.Contains(err.Error(), "drive download failed") {
		t.Fatalf("err = %v, want the reader's error", err)
	}
	list, err := svc.Users.Messages.List("me").Do()
	if err != nil || len(list.Messages) != 0 || list.ResultSizeEstimate != 0 {
		t.Errorf("messages after a broken upload: %v (%v)", list.Messages, err)
	}
	if st := f.deps.Stats.Snapshot(); st.MessagesSent != 0 || st.UploadsStarted != 1 || st.UploadsFinished != 0 {
		t.Errorf("stats sent=%d started=%d finished=%d, want 0 1 0", st.MessagesSent, st.UploadsStarted, st.UploadsFinished)
	}
}

// sizedMessage streams a valid message of exactly n bytes without holding it.
func sizedMessage(n int64) io.Reader {
	head := "From: " + ann + "\r\nTo: " + bob + "\r\nSubject: at the cap\r\nDate: Mon, 04 May 2026 10:00:00 +0000\r\nMessage-ID: <cap@test.example>\r\nContent-Type: text/plain\r\n\r\n"
	line := strings.Repeat("x", 98) + "\r\n"
	body := io.LimitReader(&repeater{s: line}, n-int64(len(head)))
	return io.MultiReader(strings.NewReader(head), body)
}

type repeater struct {
	s   string
	off int
}

func (r *repeater) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.s[r.off:])
		n += c
		r.off = (r.off + c) % len(r.s)
	}
	return n, nil
}

func TestMessageSizeCap(t *testing.T) { synctest.Test(t, testMessageSizeCap) }

func testMessageSizeCap(t *testing.T) {
	f := newBubbleFixture(t)
	svc := f.sender(ann)
	sent, err := send(svc, sizedMessage(MaxMessageSize), "")
	if err != nil {
		t.Fatalf("a message of exactly %d bytes: %v", MaxMessageSize, err)
	}
	got, err := svc.Users.Messages.Get("me", sent.Id).Format("minimal").Do()
	if err != nil || got.SizeEstimate != MaxMessageSize {
		t.Fatalf("stored size %d (%v), want %d", got.SizeEstimate, err, MaxMessageSize)
	}
	_, err = send(svc, sizedMessage(MaxMessageSize+1), "")
	ge := apiError(t, err, http.StatusRequestEntityTooLarge, "uploadTooLarge")
	if !strings.Contains(ge.Message, "36700160") {
		t.Errorf("413 message %q does not name the limit", ge.Message)
	}
	if list, _ := svc.Users.Messages.List("me").Do(); len(list.Messages) != 1 {
		t.Errorf("%d messages, want only the one at the cap", len(list.Messages))
	}
}

func TestSendRawJSON(t *testing.T) { synctest.Test(t, testSendRawJSON) }

func testSendRawJSON(t *testing.T) {
	f := newBubbleFixture(t)
	svc := f.sender(ann)
	raw := basic("raw path").build()
	for _, enc := range []*base64.Encoding{base64.URLEncoding, base64.RawURLEncoding} {
		sent, err := svc.Users.Messages.Send("me", &gmail.Message{Raw: enc.EncodeToString(raw)}).Do()
		if err != nil {
			t.Fatalf("raw send: %v", err)
		}
		if got := readRaw(t, svc, sent.Id); !bytes.Equal(got, raw) {
			t.Error("raw JSON message not stored byte for byte")
		}
	}
	for _, tc := range []struct {
		name string
		msg  *gmail.Message
		want string
	}{
		{"no raw", &gmail.Message{}, "'raw' RFC822 payload message string or uploading message via /upload/* URL required"},
		{"not base64", &gmail.Message{Raw: "%%%"}, "Invalid value for ByteString"},
	} {
		_, err := svc.Users.Messages.Send("me", tc.msg).Do()
		var ge *googleapi.Error
		if !errors.As(err, &ge) || ge.Code != 400 || !strings.Contains(ge.Message, tc.want) {
			t.Errorf("%s: %v, want 400 %q", tc.name, err, tc.want)
		}
	}
	// The JSON path has a body limit; the upload URL is for big messages.
	big := base64.URLEncoding.EncodeToString(make([]byte, maxJSONBody))
	_, err := svc.Users.Messages.Send("me", &gmail.Message{Raw: big}).Do()
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != 400 || !strings.Contains(ge.Message, "Request payload size exceeds the limit") {
		t.Errorf("oversized JSON: %v", err)
	}
}

func TestRecipientsAndHeaders(t *testing.T) {
	f := newFixture(t)
	svc := f.sender(ann)
	for _, tc := range []struct {
		name string
		m    msg
		want string
	}{
		{"no recipients", msg{from: ann, subject: "x", text: "x"}, "Recipient address required"},
		{"bad To", msg{from: ann, to: "bob@@example", subject: "x", text: "x"}, "Invalid To header"},
		{"bad Cc", msg{from: ann, to: bob, cc: "<<", subject: "x", text: "x"}, "Invalid Cc header"},
	} {
		_, err := send(svc, bytes.NewReader(tc.m.build()), "")
		if ge := apiError(t, err, 400, "invalidArgument"); ge.Message != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, ge.Message, tc.want)
		}
	}
	// A message whose header cannot be read is refused without quoting it back.
	_, err := send(svc, strings.NewReader("secret garbage line\r\n\r\nbody"), "")
	if ge := apiError(t, err, 400, "invalidArgument"); strings.Contains(ge.Message, "secret") || !strings.Contains(ge.Message, "header cannot be read") {
		t.Errorf("unreadable header: %q", ge.Message)
	}
	// Only Bcc is still a recipient.
	if _, err := send(svc, bytes.NewReader(msg{from: ann, bcc: bob, subject: "bcc only", text: "x"}.build()), ""); err != nil {
		t.Errorf("Bcc-only message: %v", err)
	}
	// A foreign From takes the sender's address, keeping its name and the
	// original in X-Google-Original-From; Date and Message-ID are added.
	raw := "From: Mallory <mallory@evil.example>\r\nTo: " + bob + "\r\nSubject: spoof\r\n\r\nhi\r\n"
	sent, err := send(svc, strings.NewReader(raw), "")
	if err != nil {
		t.Fatal(err)
	}
	got := string(readRaw(t, svc, sent.Id))
	if !strings.HasPrefix(got, "From: \"Mallory\" <"+ann+">\r\nX-Google-Original-From: Mallory <mallory@evil.example>\r\n") ||
		strings.Count(got, "mallory@") != 1 || !strings.Contains(got, "\r\nDate: ") || !strings.Contains(got, "\r\nMessage-ID: <") ||
		!strings.HasSuffix(got, "\r\n\r\nhi\r\n") {
		t.Errorf("rewritten message:\n%s", got)
	}
	// A sniffed text/plain upload is refused like Gmail refuses it.
	_, err = svc.Users.Messages.Send("me", &gmail.Message{}).Media(strings.NewReader(raw)).Do()
	apiError(t, err, 400, "badContent")
	// Refused messages, and the original of the rewritten one, leave
	// nothing on disk: one blob for each of the two messages stored.
	if n := f.blobCount(); n != 2 {
		t.Errorf("%d blobs on disk for 2 stored messages", n)
	}
}

// TestThreading: Gmail adds a message to a thread only when the three
// criteria of the discovery document's Message.threadId hold: threadId
// given, References/In-Reply-To naming a message of the thread, the same
// Subject. Every other message starts a thread of its own.
func TestThreading(t *testing.T) {
	f := newFixture(t)
	svc := f.sender(ann)
	first, err := send(svc, bytes.NewReader(basic("plans").build()), "")
	if err != nil {
		t.Fatal(err)
	}
	second, err := send(svc, bytes.NewReader(basic("budget").build()), "")
	if err != nil {
		t.Fatal(err)
	}
	replyTo := func(subject string, headers ...string) []byte {
		m := basic(subject)
		m.extraHeaders = headers
		return m.build()
	}
	const plansID = "<plans@test.example>"
	for _, tc := range []struct {
		name   string
		raw    []byte
		thread string
		joins  bool
	}{
		{"all three criteria", replyTo("Re: plans", "In-Reply-To: "+plansID, "References: "+plansID), first.ThreadId, true},
		{"References alone, folded, among others", replyTo("RE:  Plans", "References: <older@test.example>\r\n "+plansID), first.ThreadId, true},
		{"In-Reply-To alone, no Re:", replyTo("plans", "In-Reply-To: "+plansID), first.ThreadId, true},
		{"threadId without reply headers", replyTo("Re: plans"), first.ThreadId, false},
		{"threadId, headers, another subject", replyTo("Re: other", "In-Reply-To: "+plansID, "References: "+plansID), first.ThreadId, false},
		{"threadId, headers naming a message of another thread", replyTo("Re: plans", "In-Reply-To: <budget@test.example>"), first.ThreadId, false},
		{"headers and subject, no threadId", replyTo("Re: plans", "In-Reply-To: "+plansID, "References: "+plansID), "", false},
		{"headers naming no message", replyTo("Re: plans", "In-Reply-To: <nobody@test.example>"), first.ThreadId, false},
	} {
		got, err := send(svc, bytes.NewReader(tc.raw), tc.thread)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		switch {
		case tc.joins && got.ThreadId != first.ThreadId:
			t.Errorf("%s: thread %q, want the first message's %q", tc.name, got.ThreadId, first.ThreadId)
		case !tc.joins && (got.ThreadId != got.Id || got.ThreadId == first.ThreadId || got.ThreadId == second.ThreadId):
			t.Errorf("%s: thread %q (message %q), want a new thread named by the message", tc.name, got.ThreadId, got.Id)
		}
	}
	// A draft follows the same rule.
	d, err := svc.Users.Drafts.Create("me", &gmail.Draft{Message: &gmail.Message{ThreadId: first.ThreadId}}).
		Media(bytes.NewReader(replyTo("Re: plans", "In-Reply-To: "+plansID)), googleapi.ContentType("message/rfc822")).Do()
	if err != nil || d.Message.ThreadId != first.ThreadId {
		t.Errorf("draft reply: %+v %v, want thread %q", d, err, first.ThreadId)
	}

	_, err = send(svc, bytes.NewReader(basic("lost").build()), "18f0000000000000")
	if ge := apiError(t, err, 400, "invalidArgument"); ge.Message != "Invalid thread_id value" {
		t.Errorf("unknown thread: %q", ge.Message)
	}
	// Another user's thread id is unknown to this user.
	if _, err := send(f.sender(bob), bytes.NewReader(msg{from: bob, to: ann, subject: "x", text: "x"}.build()), first.ThreadId); err == nil {
		t.Error("bob joined ann's thread")
	}
}

// TestStoredMessagesKeepTheirMessageID: a reply can thread on the
// Message-ID a message was sent with, and on the one Gmail adds when it
// had none (read back with format=metadata).
func TestStoredMessagesKeepTheirMessageID(t *testing.T) {
	f := newFixture(t)
	svc := f.sender(ann)
	withID, err := send(svc, bytes.NewReader(basic("kept").build()), "")
	if err != nil {
		t.Fatal(err)
	}
	if raw := readRaw(t, svc, withID.Id); !bytes.Contains(raw, []byte("Message-ID: <kept@test.example>\r\n")) {
		t.Errorf("stored message lost its Message-ID:\n%s", raw[:min(len(raw), 400)])
	}
	bare := []byte("From: " + ann + "\r\nTo: " + bob + "\r\nSubject: no id\r\n\r\nhello\r\n")
	noID, err := send(svc, bytes.NewReader(bare), "")
	if err != nil {
		t.Fatal(err)
	}
	meta, err := svc.Users.Messages.Get("me", noID.Id).Format("metadata").MetadataHeaders("Message-ID").Do()
	if err != nil || meta.Payload == nil || len(meta.Payload.Headers) != 1 {
		t.Fatalf("metadata: %+v %v", meta, err)
	}
	added := meta.Payload.Headers[0].Value
	if len(msgIDs(added)) != 1 {
		t.Fatalf("Gmail added Message-ID %q, not a msg-id", added)
	}
	reply := []byte("From: " + ann + "\r\nTo: " + bob + "\r\nSubject: Re: no id\r\nIn-Reply-To: " + added + "\r\n\r\nyes\r\n")
	r, err := send(svc, bytes.NewReader(reply), noID.ThreadId)
	if err != nil || r.ThreadId != noID.ThreadId {
		t.Errorf("reply to the added Message-ID: thread %q (%v), want %q", r.ThreadId, err, noID.ThreadId)
	}
}

func TestResumableProtocolByHand(t *testing.T) { synctest.Test(t, testResumableProtocolByHand) }

func testResumableProtocolByHand(t *testing.T) {
	f := newBubbleFixture(t)
	tok := f.deps.Accounts.IssueAccess(ann, "test", []string{scopeSend, scopeReadonly})
	do := func(method, url string, hdr map[string]string, body []byte) *http.Response {
		req, _ := http.NewRequest(method, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := f.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	big := basic("by hand")
	big.text = strings.Repeat("a line of the body\r\n", chunk/10) // more than one chunk
	raw := big.build()
	resp := do("POST", f.srv.URL+"/upload/gmail/v1/users/me/messages/send?uploadType=resumable",
		map[string]string{"Content-Type": "application/json", "X-Upload-Content-Type": "message/rfc822"}, []byte(`{}`))
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 200 || !strings.HasPrefix(loc, f.srv.URL+"/upload/gmail/v1/users/me/messages/send?") {
		t.Fatalf("open: %d Location %q", resp.StatusCode, loc)
	}
	// A middle chunk is a multiple of 256 KiB, as Google requires.
	resp = do("PUT", loc, map[string]string{"Content-Range": "bytes 0-" + strconv.Itoa(chunk-1) + "/*", "X-GUploader-No-308": "yes"}, raw[:chunk])
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-HTTP-Status-Code-Override") != "308" || resp.Header.Get("Range") != "bytes=0-"+strconv.Itoa(chunk-1) {
		t.Fatalf("middle chunk: %d override %q range %q", resp.StatusCode, resp.Header.Get("X-HTTP-Status-Code-Override"), resp.Header.Get("Range"))
	}
	final := func() (int, []byte) {
		resp := do("PUT", loc, map[string]string{"Content-Range": "bytes " + strconv.Itoa(chunk) + "-" + strconv.Itoa(len(raw)-1) + "/" + strconv.Itoa(len(raw))}, raw[chunk:])
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	code1, body1 := final()
	code2, body2 := final()
	var m struct{ ID string }
	if code1 != 200 || code2 != 200 || !bytes.Equal(body1, body2) || json.Unmarshal(body1, &m) != nil || m.ID == "" {
		t.Fatalf("final twice: %d %s / %d %s", code1, body1, code2, body2)
	}
	if n := len(f.gmail.Messages(ann)); n != 1 {
		t.Errorf("%d messages after the final chunk was sent twice, want 1", n)
	}
}
