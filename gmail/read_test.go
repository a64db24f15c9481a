package gmail_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/internal/logtest"
)

// inboxMessage is a message dana sent to ana with the given attachments
// (name → bytes), in order.
func inboxMessage(subject string, names []string, files map[string][]byte) []byte {
	var b strings.Builder
	b.WriteString("From: Dana Reyes <dana@example.org>\r\nTo: " + user + "\r\nSubject: " + subject + "\r\n")
	b.WriteString("Date: Mon, 04 May 2026 10:00:00 +0000\r\nMessage-ID: <" + strings.ReplaceAll(subject, " ", "-") + "@example.org>\r\n")
	b.WriteString("References: <older@example.org>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n")
	b.WriteString("--B\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHello Ana,\r\nthe files.\r\n")
	for _, n := range names {
		fmt.Fprintf(&b, "--B\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=%q\r\nContent-Transfer-Encoding: base64\r\n\r\n", n)
		enc := base64.StdEncoding.EncodeToString(files[n])
		for len(enc) > 76 {
			b.WriteString(enc[:76] + "\r\n")
			enc = enc[76:]
		}
		b.WriteString(enc + "\r\n")
	}
	b.WriteString("--B--\r\n")
	return []byte(b.String())
}

func deliver(t *testing.T, e *env, raw []byte) string {
	t.Helper()
	d, err := e.Emu.Gmail().Deliver(user, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return d.ID
}

func TestSearchListsHeadersAndAttachments(t *testing.T) {
	e := newEnv(t, emutest.ScopeGmailReadonly)
	files := map[string][]byte{"invoice.pdf": bytes.Repeat([]byte("%PDF"), 1000), "photo.jpg": {0xff, 0xd8, 0xff}}
	id := deliver(t, e, inboxMessage("Invoice May", []string{"invoice.pdf", "photo.jpg"}, files))
	deliver(t, e, inboxMessage("Lunch", nil, nil))

	page, err := e.gc.Search(context.Background(), "has:attachment from:dana", 10, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Messages) != 1 {
		t.Fatalf("%d messages, want 1", len(page.Messages))
	}
	m := page.Messages[0]
	if m.ID != id || m.ThreadID == "" || m.From != "Dana Reyes <dana@example.org>" || m.To != user || m.Subject != "Invoice May" ||
		m.MessageID != "<Invoice-May@example.org>" || m.References != "<older@example.org>" || m.InternalDate.IsZero() || m.Snippet == "" {
		t.Errorf("message %+v", m)
	}
	if got := strings.Join(m.Names(), ","); got != "invoice.pdf,photo.jpg" {
		t.Errorf("attachments %s", got)
	}
	if a, ok := m.Find("INVOICE.PDF"); !ok || a.Size != 4000 || a.ID == "" {
		t.Errorf("Find ignoring case: %+v, %v", a, ok)
	}
	if m.Text != "" {
		t.Error("a search read the bodies")
	}
	if _, err := e.gc.Search(context.Background(), "x", gmail.MaxSearchResults+1, ""); err == nil {
		t.Error("a search past MaxSearchResults was made")
	}
}

func TestSearchPages(t *testing.T) {
	e := newEnv(t, emutest.ScopeGmailReadonly)
	for i := 0; i < 3; i++ {
		deliver(t, e, inboxMessage(fmt.Sprintf("note %d", i), nil, nil))
	}
	first, err := e.gc.Search(context.Background(), "subject:note", 2, "")
	if err != nil || len(first.Messages) != 2 || first.NextPageToken == "" {
		t.Fatalf("first page %+v, %v", first, err)
	}
	second, err := e.gc.Search(context.Background(), "subject:note", 2, first.NextPageToken)
	if err != nil || len(second.Messages) != 1 || second.NextPageToken != "" {
		t.Fatalf("second page %+v, %v", second, err)
	}
}

func TestMessageNotFoundReadsLikeAnotherUsers(t *testing.T) {
	e := newEnv(t, emutest.ScopeGmailReadonly)
	d, err := e.Emu.Gmail().Deliver("zoe@example.org", bytes.NewReader(inboxMessage("Zoe's", nil, nil)))
	if err != nil {
		t.Fatal(err)
	}
	_, errOther := e.gc.Message(context.Background(), d.ID, false)
	_, errNone := e.gc.Message(context.Background(), "18f0000000000000", false)
	if !errors.Is(errOther, gmail.ErrNotFound) || !errors.Is(errNone, gmail.ErrNotFound) || errOther.Error() != errNone.Error() {
		t.Errorf("another user's: %v; none: %v; want the same ErrNotFound", errOther, errNone)
	}
}

// TestThreadReadsSubjectsAndMessageIDs: Thread gives the messages of a
// thread oldest first with their labels, Subject and Message-ID, and no
// other header; a thread of another account reads as one that does not exist,
// and a token that may only send cannot read one.
func TestThreadReadsSubjectsAndMessageIDs(t *testing.T) {
	e := newEnv(t, emutest.ScopeGmailReadonly)
	ctx := context.Background()
	firstID := deliver(t, e, []byte("From: dana@example.org\r\nTo: "+user+"\r\nSubject: Budget\r\nMessage-ID: <b1@example.org>\r\n\r\nv1\r\n"))
	replyID := deliver(t, e, []byte("From: dana@example.org\r\nTo: "+user+"\r\nSubject: RE: Budget\r\nMessage-ID: <b2@example.org>\r\n"+
		"In-Reply-To: <b1@example.org>\r\nReferences: <b1@example.org>\r\n\r\nv2\r\n"))
	first, err := e.gc.Message(ctx, firstID, false)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := e.gc.Thread(ctx, first.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].ID != firstID || msgs[1].ID != replyID {
		t.Fatalf("thread %s = %+v, want %s then %s", first.ThreadID, msgs, firstID, replyID)
	}
	for i, want := range [][2]string{{"Budget", "<b1@example.org>"}, {"RE: Budget", "<b2@example.org>"}} {
		m := msgs[i]
		if m.Subject != want[0] || m.MessageID != want[1] || m.ThreadID != first.ThreadID || m.From != "" || !slices.Contains(m.Labels, "INBOX") {
			t.Errorf("message %d: subject %q, Message-ID %q, thread %q, From %q, labels %v; want %q, %q, %q, no other header and INBOX",
				i, m.Subject, m.MessageID, m.ThreadID, m.From, m.Labels, want[0], want[1], first.ThreadID)
		}
	}

	zoes, err := e.Emu.Gmail().Deliver("zoe@example.org", bytes.NewReader(inboxMessage("Zoe's", nil, nil)))
	if err != nil {
		t.Fatal(err)
	}
	_, errOther := e.gc.Thread(ctx, zoes.ThreadID)
	_, errNone := e.gc.Thread(ctx, "18f0000000000000")
	if !errors.Is(errOther, gmail.ErrNotFound) || !errors.Is(errNone, gmail.ErrNotFound) {
		t.Errorf("another user's thread: %v; none: %v; want ErrNotFound", errOther, errNone)
	}
	sendOnly := newEnv(t, emutest.ScopeGmailSend)
	if _, err := sendOnly.gc.Thread(ctx, first.ThreadID); !errors.Is(err, gmail.ErrScope) {
		t.Errorf("gmail.send only: %v, want ErrScope", err)
	}
}

// TestReadsWithTheGmailAPIDisabled: with the Gmail API not enabled in
// the project, every call search_mail and save_to_drive make fails as
// ErrAPIDisabled naming gmail.googleapis.com, and the operator gets an
// error line for each, naming the API and where to enable it.
func TestReadsWithTheGmailAPIDisabled(t *testing.T) {
	e := newEnv(t, emutest.ScopeGmailReadonly)
	id := deliver(t, e, inboxMessage("Files", []string{"a.pdf"}, map[string][]byte{"a.pdf": []byte("%PDF")}))
	m, err := e.gc.Message(context.Background(), id, false)
	if err != nil {
		t.Fatal(err)
	}
	var logs logtest.Buffer
	gc, err := gmail.New(context.Background(), e.Client(user, emutest.ScopeGmailReadonly), e.Endpoints, 0, gmail.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Emu.SetAPIEnabled("gmail", false); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tt := range []struct {
		op   string
		call func() error
	}{
		{"messages.list", func() error { _, err := gc.Search(ctx, "has:attachment", 10, ""); return err }},
		{"messages.get", func() error { _, err := gc.Message(ctx, id, false); return err }},
		{"messages.attachments.get", func() error { _, err := gc.OpenAttachment(ctx, id, m.Attachments[0]); return err }},
		{"getProfile", func() error { _, err := gc.Profile(ctx); return err }},
	} {
		logs.Reset()
		err := tt.call()
		if svc, ok := gmail.DisabledAPI(err); !ok || svc != "gmail.googleapis.com" || !errors.Is(err, gmail.ErrAPIDisabled) {
			t.Errorf("%s: %v; want ErrAPIDisabled naming gmail.googleapis.com", tt.op, err)
		}
		if l := logs.String(); strings.Count(l, "level=ERROR") != 1 || !strings.Contains(l, "api=gmail.googleapis.com op="+tt.op) ||
			!strings.Contains(l, "enable_at=https://console.cloud.google.com/apis/library/gmail.googleapis.com") {
			t.Errorf("%s: log %s; want one error line naming the API and where to enable it", tt.op, l)
		}
	}
}

func TestMessageWithBodies(t *testing.T) {
	e := newEnv(t, emutest.ScopeGmailReadonly)
	id := deliver(t, e, inboxMessage("Bodies", nil, nil))
	m, err := e.gc.Message(context.Background(), id, true)
	if err != nil {
		t.Fatal(err)
	}
	if m.Text != "Hello Ana,\r\nthe files." && m.Text != "Hello Ana,\r\nthe files.\r\n" {
		t.Errorf("text %q", m.Text)
	}
}

func TestOpenAttachmentStreamsTheBytes(t *testing.T) {
	e := newEnv(t, emutest.ScopeGmailReadonly)
	big := make([]byte, 3<<20+7)
	for i := range big {
		big[i] = byte(i * 31)
	}
	files := map[string][]byte{"big.bin": big, "empty.txt": {}}
	id := deliver(t, e, inboxMessage("Big", []string{"big.bin", "empty.txt"}, files))
	m, err := e.gc.Message(context.Background(), id, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"big.bin", "empty.txt"} {
		a, _ := m.Find(name)
		rc, err := e.gc.OpenAttachment(context.Background(), id, a)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, files[name]) {
			t.Errorf("%s: %d bytes, %v; want the %d sent", name, len(got), err, len(files[name]))
		}
	}
	// The metadata's size is held: an attachment that yields other bytes fails.
	a, _ := m.Find("big.bin")
	a.Size--
	rc, err := e.gc.OpenAttachment(context.Background(), id, a)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(rc)
	rc.Close()
	if !errors.Is(err, gmail.ErrCorrupt) {
		t.Errorf("one byte more than described: %v, want ErrCorrupt", err)
	}
}

func TestOpenAttachmentStalledGmailFails(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"size":6,"data":"YWJj`)
		w.(http.Flusher).Flush()
		select { // then nothing, until the client gives up
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	gc, err := gmail.New(context.Background(), srv.Client(), google.Endpoints{Base: srv.URL}, 0, gmail.WithIdleTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := gc.OpenAttachment(context.Background(), "18f0", gmail.Attachment{ID: "att", Size: 6})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	_, err = io.ReadAll(rc)
	if !errors.Is(err, gmail.ErrStalled) {
		t.Errorf("a stalled download ended with %v, want ErrStalled", err)
	}
}
