package compose_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drivemail/drivemail/clientfile/clientfiletest"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/internal/logtest"
	"github.com/drivemail/drivemail/internal/refusal"
)

func driveFile(id string) compose.Attachment {
	return compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(id)}}
}

// Confirm is shown the message as it will go, once every check has
// passed and before anything is downloaded or Gmail is contacted: From,
// every recipient, the subject, each file (name, size, type, the format
// of an export, the tab of a csv, a link and where it points) and the
// body's first lines. Then the message goes as summarized.
func TestConfirmSeesTheMessageBeforeAnyDownload(t *testing.T) {
	e := newEnv(t, compose.Config{})
	pdf, pdfBytes := e.putBytes("Q3 Report.pdf", 2000)
	logo, _ := e.putBytes("logo.png", 300)
	doc := e.Put(user, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "x"})
	sheet := e.Put(user, drivesvc.FileSpec{Name: "Budget", Kind: drivesvc.KindSheet, Tabs: []drivesvc.Tab{{Title: "Summary"}, {Title: "Q1"}}})
	roadmap := e.Put(user, drivesvc.FileSpec{Name: "Roadmap", Kind: drivesvc.KindDoc, DocText: "y", LinkShared: true})
	var body strings.Builder
	for i := 1; i <= compose.SummaryLines+2; i++ {
		fmt.Fprintf(&body, "Line %d of the message.\n\n", i)
	}
	req := compose.Request{
		To: []string{"zoe@example.org", "yan@example.org"}, Cc: []string{"xia@example.org"}, Bcc: []string{"wil@example.org"},
		Subject: "Q3 figures", BodyText: body.String(), BodyHTML: `<p>See <img src="cid:logo.png"></p>`,
		Attachments: []compose.Attachment{
			driveFile(pdf.ID),
			driveFile(logo.ID),
			{Source: compose.DriveFile{Handle: handle.MustParse(doc.ID), As: "pdf"}},
			{Source: compose.DriveFile{Handle: handle.MustParse(sheet.ID), As: "csv", Sheet: "Q1"}},
			driveFile(roadmap.ID),
			{Name: "notes.txt", Source: compose.Content{Encoding: compose.Text, Data: "remember"}},
		},
	}
	before := e.Emu.Stats()
	var (
		got     compose.Summary
		atAsk   emulator.Stats
		calls   int
		confirm = func(ctx context.Context, s compose.Summary) error {
			calls++
			got, atAsk = s, e.Emu.Stats()
			return nil
		}
	)
	acct := e.as(identity.User{ID: "u1", Email: user}, nil)
	res, err := e.svc.Send(context.Background(), acct, req, compose.Options{Confirm: confirm})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if calls != 1 {
		t.Fatalf("Confirm called %d times, want once", calls)
	}
	if atAsk.Downloads != before.Downloads || atAsk.UploadsStarted != before.UploadsStarted || atAsk.MessagesSent != before.MessagesSent {
		t.Errorf("by the time the user was asked: downloads %d→%d, Gmail uploads %d→%d", before.Downloads, atAsk.Downloads, before.UploadsStarted, atAsk.UploadsStarted)
	}
	want := compose.Summary{
		From: user, To: req.To, Cc: req.Cc, Bcc: req.Bcc, Subject: "Q3 figures",
		Files: []compose.SummaryFile{
			{Name: "Q3 Report.pdf", MimeType: "application/pdf", Bytes: 2000, Goes: compose.GoesAttached, From: compose.FromDrive, FileID: pdf.ID},
			{Name: "logo.png", MimeType: "image/png", Bytes: 300, Goes: compose.GoesInline, From: compose.FromDrive, FileID: logo.ID},
			{Name: "Plan.pdf", MimeType: "application/pdf", Bytes: -1, Goes: compose.GoesAttached, From: compose.FromDrive, ExportedAs: "pdf", FileID: doc.ID},
			{Name: "Budget.csv", MimeType: "text/csv", Bytes: -1, Goes: compose.GoesAttached, From: compose.FromDrive, ExportedAs: "csv", Sheet: "Q1", FileID: sheet.ID},
			{Name: "Roadmap", Goes: compose.GoesLinked, From: compose.FromDrive, FileID: roadmap.ID, Access: "every recipient"},
			{Name: "notes.txt", MimeType: "text/plain; charset=utf-8", Bytes: 8, Goes: compose.GoesAttached, From: compose.FromCall},
		},
		BodyMore: true,
	}
	for i := 1; i <= compose.SummaryLines; i++ {
		want.Body = append(want.Body, fmt.Sprintf("Line %d of the message.", i))
	}
	want.Revision = got.Revision
	if len(got.Files) == len(want.Files) {
		if link := got.Files[4].URL; !strings.Contains(link, "/document/d/"+roadmap.ID) {
			t.Errorf("the link's URL %q is not the Doc's", link)
		}
		want.Files[4].URL = got.Files[4].URL
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summary:\n got %+v\nwant %+v", got, want)
	}
	if len(got.Revision) != 32 {
		t.Errorf("revision %q, want 32 hex digits", got.Revision)
	}
	if after := e.Emu.Stats(); after.MessagesSent != before.MessagesSent+1 {
		t.Fatalf("messages sent %d→%d, want one", before.MessagesSent, after.MessagesSent)
	}
	_, root := goParse(t, e.Message(user, res.ID))
	found := false
	for _, l := range root.leaves() {
		if l.Filename == "Q3 Report.pdf" && bytes.Equal(l.Body, pdfBytes) {
			found = true
		}
	}
	if !found {
		t.Error("the message lacks Q3 Report.pdf as Drive holds it")
	}
}

// A send whose Confirm says no ends with Confirm's error, as it is, having
// downloaded and sent nothing; its log line says it was not confirmed,
// by the refusal's kind.
func TestAnUnconfirmedSendSendsNothing(t *testing.T) {
	logs := &logtest.Buffer{}
	e := newEnv(t, compose.Config{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	pdf, _ := e.putBytes("Q3.pdf", 5000)
	no := refusal.New("send_declined", "The user declined.")
	before := e.Emu.Stats()
	_, err := e.send(message(driveFile(pdf.ID)), compose.Options{Confirm: func(context.Context, compose.Summary) error { return no }})
	if err != no {
		t.Fatalf("Send = %v, want Confirm's own refusal", err)
	}
	unchanged(t, before, e.Emu.Stats())
	if line := logs.String(); !strings.Contains(line, `msg="send not confirmed"`) || !strings.Contains(line, "refusal=send_declined") || strings.Contains(line, "send refused") {
		t.Errorf("log: %s", line)
	}
}

// A send that a check refuses is never put to the user: eleven files are
// refused as they always were, Confirm uncalled.
func TestARefusedSendIsNeverConfirmed(t *testing.T) {
	e := newEnv(t, compose.Config{})
	var eleven []compose.Attachment
	for i := range 11 {
		f, _ := e.putBytes(fmt.Sprintf("f%02d.pdf", i), 100)
		eleven = append(eleven, driveFile(f.ID))
	}
	asked := false
	_, err := e.send(message(eleven...), compose.Options{Confirm: func(context.Context, compose.Summary) error { asked = true; return nil }})
	if refusal.KindOf(err) != "too_many_files" || asked {
		t.Errorf("Send = %v (asked %v), want too_many_files, unasked", err, asked)
	}
}

// A send waiting for its user holds no turn: with room for one send of
// one user, another send of the same user goes while the first waits,
// and the first goes once confirmed.
func TestASendWaitingForItsUserHoldsNoTurn(t *testing.T) {
	e := newEnv(t, compose.Config{MaxConcurrentSends: 1, MaxSendsPerUser: 1, SendQueueTimeout: time.Second})
	a, _ := e.putBytes("a.pdf", 1000)
	b, _ := e.putBytes("b.pdf", 1000)
	asked, answer := make(chan struct{}), make(chan error)
	first := make(chan error, 1)
	go func() {
		_, err := e.send(message(driveFile(a.ID)), compose.Options{Confirm: func(context.Context, compose.Summary) error {
			close(asked)
			return <-answer
		}})
		first <- err
	}()
	<-asked
	if _, err := e.send(message(driveFile(b.ID)), compose.Options{}); err != nil {
		t.Fatalf("a send beside one waiting for its user: %v", err)
	}
	answer <- nil
	if err := <-first; err != nil {
		t.Fatalf("the confirmed send: %v", err)
	}
	if n := e.Emu.Stats().MessagesSent; n != 2 {
		t.Errorf("messages sent = %d, want 2", n)
	}
}

// A client's file is let go while its user is asked (its host is not
// kept waiting on a person) and fetched again to stream: the message has
// its bytes.
func TestAClientFileIsLetGoWhileTheUserIsAsked(t *testing.T) {
	e, host := clientEnv(t, nil)
	data := bytes.Repeat([]byte("chat file "), 1000)
	released := make(chan struct{})
	var gets atomic.Int32
	host.Handle("/held", func(w http.ResponseWriter, r *http.Request) {
		if gets.Add(1) == 1 {
			w.Header().Set("Content-Length", fmt.Sprint(len(data)))
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done() // the body is never read from this one
			close(released)
			return
		}
		clientfiletest.Serve(data, "text/plain", "")(w, r)
	})
	res, err := e.send(message(clientFile(host.URL("", "/held?sig=x"), "chat.txt")), compose.Options{Confirm: func(context.Context, compose.Summary) error {
		select {
		case <-released:
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("the client file's download was held while the user was asked")
		}
	}})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	_, root := goParse(t, e.Message(user, res.ID))
	if l := root.leaves(); len(l) != 2 || !bytes.Equal(l[1].Body, data) {
		t.Errorf("the message lacks the client's file as its host served it")
	}
}

// Preview gives the summary a send would be confirmed with, having
// downloaded and sent nothing; the same request gives the same revision,
// and a renamed file another.
func TestPreviewSummarizesWithoutSending(t *testing.T) {
	e := newEnv(t, compose.Config{})
	pdf, _ := e.putBytes("Q3.pdf", 3000)
	req := message(driveFile(pdf.ID))
	req.BodyText = ""
	req.BodyHTML = "<html><head><title>x</title><style>p{}</style></head><body><p>Hello <b>Zoe</b>,</p><p>the figures.</p></body></html>"
	before := e.Emu.Stats()
	ctx := context.Background()
	first, err := e.svc.Preview(ctx, e.acct(), req, compose.Options{})
	if err != nil {
		t.Fatalf("Preview: %v", err)
	}
	unchanged(t, before, e.Emu.Stats())
	if len(first.Files) != 1 || first.Files[0].Name != "Q3.pdf" || first.Files[0].Bytes != 3000 {
		t.Errorf("files %+v", first.Files)
	}
	if !reflect.DeepEqual(first.Body, []string{"Hello Zoe,", "the figures."}) || first.BodyMore {
		t.Errorf("an HTML body's first lines: %q (more %v)", first.Body, first.BodyMore)
	}
	again, err := e.svc.Preview(ctx, e.acct(), req, compose.Options{})
	if err != nil || again.Revision != first.Revision {
		t.Errorf("the same request again: revision %q, want %q (%v)", again.Revision, first.Revision, err)
	}
	rename(t, e.Env, pdf.ID, "Q4.pdf")
	renamed, err := e.svc.Preview(ctx, e.acct(), req, compose.Options{})
	if err != nil || renamed.Revision == first.Revision || renamed.Files[0].Name != "Q4.pdf" {
		t.Errorf("after a rename: %+v (%v), want another revision", renamed, err)
	}
}

// rename renames a Drive file through Drive's files.update, as its owner.
func rename(t *testing.T, e *emutest.Env, id, name string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPatch, e.URL+"/drive/v3/files/"+id, strings.NewReader(`{"name":"`+name+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.Client(user, emutest.ScopeDrive).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("rename: %s", resp.Status)
	}
}

// send_draft's Confirm is shown the draft by its headers before Gmail is
// asked to send it; a no leaves the draft in Drafts and sends nothing.
func TestSendDraftIsConfirmed(t *testing.T) {
	e := newEnv(t, compose.Config{})
	d := e.saveDraft(compose.Request{})
	acct := e.as(identity.User{ID: "u1", Email: user}, nil)
	var got compose.Summary
	no := refusal.New("send_declined", "The user declined.")
	before := e.Emu.Stats()
	_, err := e.svc.SendDraft(context.Background(), acct, d.DraftID, func(_ context.Context, s compose.Summary) error {
		got = s
		return no
	})
	if err != no {
		t.Fatalf("SendDraft = %v, want Confirm's refusal", err)
	}
	if st := e.Emu.Stats(); st.MessagesSent != before.MessagesSent || !slices.Contains(e.draftIDs(), d.DraftID) {
		t.Fatalf("a declined draft: sent %d, drafts %v", st.MessagesSent-before.MessagesSent, e.draftIDs())
	}
	want := compose.Summary{From: user, To: []string{"Zoe <zoe@example.org>"}, Subject: "Q3 figures", SavedDraft: d.DraftID, Revision: got.Revision}
	if !reflect.DeepEqual(got, want) || len(got.Revision) != 32 {
		t.Errorf("summary %+v, want %+v", got, want)
	}
	res, err := e.svc.SendDraft(context.Background(), acct, d.DraftID, func(context.Context, compose.Summary) error { return nil })
	if err != nil || res.ID == "" || e.Emu.Stats().MessagesSent != before.MessagesSent+1 {
		t.Fatalf("the confirmed draft: %+v %v", res, err)
	}
}
