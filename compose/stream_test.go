package compose_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/identity"
)

func ptr[T any](v T) *T { return &v }

func outboxUnchanged(t *testing.T, before, after emulator.Stats) {
	t.Helper()
	if after.MessagesSent != before.MessagesSent || after.DraftsCreated != before.DraftsCreated {
		t.Errorf("outbox changed: sent %d→%d, drafts %d→%d", before.MessagesSent, after.MessagesSent, before.DraftsCreated, after.DraftsCreated)
	}
	if after.UploadsFinished != before.UploadsFinished {
		t.Errorf("an upload was finalized: %d→%d", before.UploadsFinished, after.UploadsFinished)
	}
}

// TestExportPastLimitSendsNothing: a Doc whose export grows past 25 MiB
// (through files.download's operation, past files.export's 10 MB cap) is
// counted as it streams and abandoned before Gmail would send it.
func TestExportPastLimitSendsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 25 MiB")
	}
	e := newEnv(t, compose.Config{})
	doc := e.Put(user, drivesvc.FileSpec{Name: "Huge", Kind: drivesvc.KindDoc, DocFillBytes: compose.MaxAttachmentBytes + 1<<20})
	before := e.Emu.Stats()
	_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "big", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(doc.ID), As: "txt"}}}}, compose.Options{})
	if !isRefusal(err) || !strings.Contains(err.Error(), "25 MiB") || !strings.Contains(err.Error(), "Nothing was sent") {
		t.Fatalf("err = %v, want the 25 MiB refusal saying nothing was sent", err)
	}
	after := e.Emu.Stats()
	outboxUnchanged(t, before, after)
	served := after.BytesServed - before.BytesServed
	if after.Paths["GET /download"]-before.Paths["GET /download"] != 1 {
		t.Errorf("paths %v: want the export read from files.download's downloadUri", after.Paths)
	}
	if served < compose.MaxAttachmentBytes {
		t.Errorf("only %d export bytes were served; the breach must come from streaming past 25 MiB", served)
	}
	t.Logf("export served %d bytes; Gmail uploads started %d; paths %v", served, after.UploadsStarted-before.UploadsStarted, after.Paths)
}

// TestDriveCutSendsNothing: a download cut half way abandons the message.
// With small chunks Gmail already holds part of it when the cut comes, so
// the pass is not restarted: one upload session, never finalized.
func TestDriveCutSendsNothing(t *testing.T) {
	e := newEnv(t, compose.Config{}, account.Options{GmailChunkSize: 256 << 10})
	f, _ := e.putBytes("report.pdf", 2<<20)
	e.Inject(emulator.Fault{Method: "GET", PathPrefix: "/drive/v3/files/" + f.ID, Times: 20, CutResponseAfter: ptr(int64(1 << 20))})
	before := e.Emu.Stats()
	_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "cut", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}}}, compose.Options{})
	if !isRefusal(err) || !strings.Contains(err.Error(), "part-way") {
		t.Fatalf("err = %v, want the part-way refusal", err)
	}
	after := e.Emu.Stats()
	outboxUnchanged(t, before, after)
	if n := after.UploadsStarted - before.UploadsStarted; n != 1 {
		t.Errorf("%d upload sessions opened; want 1 (no whole-pass retry once Gmail has bytes)", n)
	}
}

// TestDriveCutOnceIsRetried: one cut before Gmail was contacted restarts
// the pass, and exactly one whole message goes.
func TestDriveCutOnceIsRetried(t *testing.T) { synctest.Test(t, testDriveCutOnceIsRetried) }

func testDriveCutOnceIsRetried(t *testing.T) {
	e := newBubbleEnv(t, compose.Config{})
	f, b := e.putBytes("report.pdf", 2<<20)
	// The first matching request is the metadata call; the second is the
	// download, cut half way.
	e.Inject(emulator.Fault{Method: "GET", PathPrefix: "/drive/v3/files/" + f.ID, Times: 2, CutResponseAfter: ptr(int64(1 << 20))})
	e.sendFileOnce("cut once", f, b)
}

// TestGmailSessionOpenFailsSendsNothing: Gmail failing the request that
// opens the upload session means nothing was sent, and the refusal says so.
func TestGmailSessionOpenFailsSendsNothing(t *testing.T) {
	e := newEnv(t, compose.Config{}, account.Options{GmailChunkSize: 256 << 10})
	f, _ := e.putBytes("report.pdf", 600_000)
	e.Inject(emulator.Fault{Method: "POST", PathPrefix: "/upload/gmail/v1/users/me/messages/send", Status: 503})
	before := e.Emu.Stats()
	_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "open fails", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}}}, compose.Options{})
	if !isRefusal(err) || !strings.Contains(err.Error(), "Nothing was sent") {
		t.Fatalf("err = %v, want a refusal saying nothing was sent", err)
	}
	outboxUnchanged(t, before, e.Emu.Stats())
}

// TestGmailChunkFaultsSendOnce: 503s and connection cuts on resumable
// chunks, including a cut of the final chunk's answer after Gmail stored
// the message, still end in exactly one message.
func TestGmailChunkFaultsSendOnce(t *testing.T) {
	const path = "/upload/gmail/v1/users/me/messages/send"
	tests := []struct {
		name   string
		faults []emulator.Fault
	}{
		{"503 on chunks", []emulator.Fault{
			{Method: "POST", PathPrefix: path, Delay: 1_000_000}, // 1 ms: the session open passes
			{PathPrefix: path, Status: 503, Times: 2},
		}},
		{"request cut mid-chunk", []emulator.Fault{
			{Method: "POST", PathPrefix: path, Delay: 1_000_000},
			{PathPrefix: path, CutRequestAfter: ptr(int64(100_000))},
		}},
		{"final chunk cut mid-request", []emulator.Fault{
			{PathPrefix: path, Delay: 1_000_000, Times: 3}, // 1 ms: the open and two middle chunks pass
			{PathPrefix: path, CutRequestAfter: ptr(int64(10_000))},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, inBubble(func(t *testing.T) {
			e := newBubbleEnv(t, compose.Config{}, account.Options{GmailChunkSize: 256 << 10})
			// ~575 KB encoded: open, two 256 KiB chunks, a final one.
			f, b := e.putBytes("report.pdf", 420_000)
			e.Inject(tt.faults...)
			e.sendFileOnce(tt.name, f, b)
		}))
	}
}

// TestConcurrencyCap: with one slot, sends queue instead of failing, and
// a send waiting for a slot gives up with its context.
func TestConcurrencyCap(t *testing.T) { synctest.Test(t, testConcurrencyCap) }

func testConcurrencyCap(t *testing.T) {
	e := newBubbleEnv(t, compose.Config{MaxConcurrentSends: 1})
	f, _ := e.putBytes("a.pdf", 100_000)
	req := compose.Request{To: []string{"zoe@example.org"}, Subject: "cap", BodyText: "hi", Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}}}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.svc.Send(context.Background(), e.acct(), req, compose.Options{})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Send: %v", err)
		}
	}
	if st := e.Emu.Stats(); st.MessagesSent != 4 {
		t.Errorf("messages sent = %d, want 4", st.MessagesSent)
	}

	// A send holds the only slot while Gmail is slow; another gives up
	// waiting when its context ends, having sent nothing.
	e.Inject(emulator.Fault{Method: "PUT", PathPrefix: "/upload/gmail/", Delay: 1_000_000_000})
	slow := make(chan error, 1)
	streamed := make(chan struct{})
	var once sync.Once
	// Progress reports the whole message written while Gmail holds its
	// answer back: from then on, the slow send holds the slot.
	progress := func(int64, int64) { once.Do(func() { close(streamed) }) }
	go func() {
		_, err := e.svc.Send(context.Background(), e.acct(), req, compose.Options{Progress: progress})
		slow <- err
	}()
	select {
	case <-streamed:
	case err := <-slow:
		t.Fatalf("the slow send ended before its message was written: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := e.svc.Send(ctx, e.acct(), req, compose.Options{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting send: err = %v, want the context's deadline", err)
	}
	if err := <-slow; err != nil {
		t.Errorf("slow send: %v", err)
	}
	if st := e.Emu.Stats(); st.MessagesSent != 5 {
		t.Errorf("messages sent = %d, want 5", st.MessagesSent)
	}
}

// TestGmailFinalAnswerCut: Gmail stores the message (or the draft) and
// answers 200, but the answer's body is cut. Asked how the upload went,
// Gmail answers again with the ids, and the send succeeds; when every
// answer is cut, the message went all the same, exactly once, and the
// refusal says so, so the model does not send it again; a draft is said
// to be saved, never sent.
func TestGmailFinalAnswerCut(t *testing.T) {
	tests := []struct {
		name         string
		path         string
		draft        bool
		cuts         int
		want         []string // the refusal's words; none: the send succeeds
		sent, drafts int64
	}{
		{"send, asked again", "/upload/gmail/v1/users/me/messages/send", false, 1, nil, 1, 0},
		{"draft, asked again", "/upload/gmail/v1/users/me/drafts", true, 1, nil, 0, 1},
		{"send", "/upload/gmail/v1/users/me/messages/send", false, 100, []string{"has been sent", "Do not send it again"}, 1, 0},
		{"draft", "/upload/gmail/v1/users/me/drafts", true, 100, []string{"saved the draft", "Do not save it again"}, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, compose.Config{}, account.Options{GmailChunkSize: 256 << 10})
			f, _ := e.putBytes("report.pdf", 420_000)
			e.Inject(
				emulator.Fault{PathPrefix: tt.path, Delay: 1_000_000, Times: 3}, // 1 ms: the open and two middle chunks pass
				emulator.Fault{PathPrefix: tt.path, CutResponseAfter: ptr(int64(0)), Times: tt.cuts},
			)
			res, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "cut answer", BodyText: "hi",
				Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}}}, compose.Options{Draft: tt.draft})
			if st := e.Emu.Stats(); st.MessagesSent != tt.sent || st.DraftsCreated != tt.drafts {
				t.Errorf("sent %d, drafts %d; want %d and %d", st.MessagesSent, st.DraftsCreated, tt.sent, tt.drafts)
			}
			if tt.want == nil {
				if err != nil || res.ID == "" {
					t.Fatalf("Send = %+v, %v; want the ids Gmail gave when asked again", res, err)
				}
				return
			}
			if !isRefusal(err) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal %q lacks %q", err, w)
				}
			}
			if tt.draft && strings.Contains(err.Error(), "sent") {
				t.Errorf("a draft's refusal speaks of sending: %q", err)
			}
		})
	}
}

// growingDownloads serves one file's download with extra bytes after
// Drive's own, as when the file is replaced between the metadata call
// and the download.
type growingDownloads struct {
	base   http.RoundTripper
	fileID string
}

func (g growingDownloads) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := g.base.RoundTrip(r)
	if err != nil || r.URL.Path != "/drive/v3/files/"+g.fileID || r.URL.Query().Get("alt") != "media" {
		return res, err
	}
	res.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(res.Body, strings.NewReader("appended since")), res.Body}
	return res, nil
}

// TestFileChangedWhileSendingSendsNothing: a file that grew in Drive
// after its size was read is abandoned with a sentence that says so,
// not an internal error.
func TestFileChangedWhileSendingSendsNothing(t *testing.T) {
	e := newEnv(t, compose.Config{})
	f, _ := e.putBytes("report.pdf", 100_000)
	hc := &http.Client{Transport: growingDownloads{base: e.hc.Transport, fileID: f.ID}}
	before := e.Emu.Stats()
	_, err := e.svc.Send(context.Background(), e.as(identity.User{}, hc), compose.Request{To: []string{"zoe@example.org"}, Subject: "grown", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}}}, compose.Options{})
	if !isRefusal(err) || !strings.Contains(err.Error(), `"report.pdf" changed in Google Drive`) || !strings.Contains(err.Error(), "Nothing was sent") {
		t.Fatalf("err = %v, want a refusal saying report.pdf changed and nothing was sent", err)
	}
	outboxUnchanged(t, before, e.Emu.Stats())
}

// TestGmailForbiddenSaysWhatToDo: Gmail's 403 for an account that may not
// send is a sentence that says nothing went and whom to ask.
func TestGmailForbiddenSaysWhatToDo(t *testing.T) {
	e := newEnv(t, compose.Config{})
	e.Inject(emulator.Fault{Method: "POST", PathPrefix: "/upload/gmail/v1/users/me/messages/send", Status: 403})
	before := e.Emu.Stats()
	_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "policy", BodyText: "hi"}, compose.Options{})
	if !isRefusal(err) || !strings.Contains(err.Error(), "Nothing was sent") || !strings.Contains(err.Error(), "administrator whether") {
		t.Fatalf("err = %v, want a refusal saying nothing was sent and to ask the administrator", err)
	}
	outboxUnchanged(t, before, e.Emu.Stats())
}

// TestGmailFailureStopsDriveReads: Gmail refuses to open the upload
// session while the writer waits on a Drive download that stalls. The
// send returns with Gmail's refusal long before the Drive delay would
// have ended, having sent nothing: the writer's Drive read is cancelled
// with the upload.
func TestGmailFailureStopsDriveReads(t *testing.T) {
	const driveDelayNS = 30_000_000_000 // 30 s
	e := newEnv(t, compose.Config{}, account.Options{GmailChunkSize: 256 << 10})
	// a.pdf encodes to ~270 KB: it fills the first 256 KiB chunk (four
	// 64 KiB writes of the MIME writer), and the writer then opens b.pdf
	// while Gmail is asked to open the session.
	a, _ := e.putBytes("a.pdf", 200_000)
	b, _ := e.putBytes("b.pdf", 1000)
	e.Inject(
		emulator.Fault{Method: "GET", PathPrefix: "/drive/v3/files/" + b.ID, Delay: 1_000_000}, // 1 ms: the metadata call passes
		emulator.Fault{Method: "GET", PathPrefix: "/drive/v3/files/" + b.ID, Delay: driveDelayNS},
		emulator.Fault{Method: "POST", PathPrefix: "/upload/gmail/v1/users/me/messages/send", Status: 503},
	)
	before := e.Emu.Stats()
	done := make(chan error, 1)
	go func() {
		_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "early failure", BodyText: "hi",
			Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(a.ID)}}, {Source: compose.DriveFile{Handle: handle.MustParse(b.ID)}}}}, compose.Options{})
		done <- err
	}()
	select {
	case err := <-done:
		if !isRefusal(err) || !strings.Contains(err.Error(), "Gmail is busy") || !strings.Contains(err.Error(), "Nothing was sent") {
			t.Fatalf("err = %v, want Gmail's refusal saying nothing was sent", err)
		}
	case <-time.After(driveDelayNS / 2):
		t.Fatalf("Send still waits on the stalled Drive download after Gmail failed")
	}
	outboxUnchanged(t, before, e.Emu.Stats())
}

// TestDriveStallAbandonsSend: a Drive download that sends nothing for the
// idle timeout fails the pass; Gmail already holds the first chunk, so
// the pass is not restarted, the refusal says Drive stalled, and the send
// returns long before the stalled download would have answered.
func TestDriveStallAbandonsSend(t *testing.T) { synctest.Test(t, testDriveStallAbandonsSend) }

func testDriveStallAbandonsSend(t *testing.T) {
	const driveDelayNS = 30_000_000_000 // 30 s
	e := newBubbleEnv(t, compose.Config{}, account.Options{GmailChunkSize: 256 << 10, DriveIdleTimeout: 200 * time.Millisecond})
	// As in TestGmailFailureStopsDriveReads: a.pdf fills the first chunk,
	// so Gmail has been contacted when b.pdf's download stalls.
	a, _ := e.putBytes("a.pdf", 200_000)
	b, _ := e.putBytes("b.pdf", 1000)
	e.Inject(
		emulator.Fault{Method: "GET", PathPrefix: "/drive/v3/files/" + b.ID, Delay: 1_000_000}, // 1 ms: the metadata call passes
		emulator.Fault{Method: "GET", PathPrefix: "/drive/v3/files/" + b.ID, Delay: driveDelayNS},
	)
	before := e.Emu.Stats()
	done := make(chan error, 1)
	go func() {
		_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "stall", BodyText: "hi",
			Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(a.ID)}}, {Source: compose.DriveFile{Handle: handle.MustParse(b.ID)}}}}, compose.Options{})
		done <- err
	}()
	select {
	case err := <-done:
		if !isRefusal(err) || !strings.Contains(err.Error(), "stalled while sending attachment 2") || !strings.Contains(err.Error(), "Nothing was sent") {
			t.Fatalf("err = %v, want the refusal saying Drive stalled and nothing was sent", err)
		}
	case <-time.After(driveDelayNS / 2):
		t.Fatalf("Send still waits on a Drive download that sends nothing")
	}
	after := e.Emu.Stats()
	outboxUnchanged(t, before, after)
	if n := after.UploadsStarted - before.UploadsStarted; n != 1 {
		t.Errorf("%d upload sessions opened; want 1 (no whole-pass retry once Gmail has bytes)", n)
	}
}

// TestDriveStallBeforeGmailIsRetried: a stall while the first chunk was
// still filling (nothing reached Gmail) restarts the pass, and exactly
// one whole message goes.
func TestDriveStallBeforeGmailIsRetried(t *testing.T) {
	synctest.Test(t, testDriveStallBeforeGmailIsRetried)
}

func testDriveStallBeforeGmailIsRetried(t *testing.T) {
	e := newBubbleEnv(t, compose.Config{}, account.Options{DriveIdleTimeout: 200 * time.Millisecond})
	f, b := e.putBytes("report.pdf", 100_000)
	e.Inject(
		emulator.Fault{Method: "GET", PathPrefix: "/drive/v3/files/" + f.ID, Delay: 1_000_000}, // 1 ms: the metadata call passes
		emulator.Fault{Method: "GET", PathPrefix: "/drive/v3/files/" + f.ID, Delay: 30_000_000_000},
	)
	e.sendFileOnce("stall once", f, b)
}

// TestGmailStallSaysNothingWasSent: a Gmail chunk that gets no answer
// within the chunk timeout, even when retried, abandons the send with a
// sentence that says Gmail stalled and nothing was sent.
func TestGmailStallSaysNothingWasSent(t *testing.T) {
	synctest.Test(t, testGmailStallSaysNothingWasSent)
}

func testGmailStallSaysNothingWasSent(t *testing.T) {
	const path = "/upload/gmail/v1/users/me/messages/send"
	e := newBubbleEnv(t, compose.Config{}, account.Options{GmailChunkSize: 256 << 10, GmailChunkTimeout: 200 * time.Millisecond})
	f, _ := e.putBytes("report.pdf", 600_000)
	e.Inject(
		emulator.Fault{Method: "POST", PathPrefix: path, Delay: 1_000_000}, // 1 ms: the session open passes
		emulator.Fault{PathPrefix: path, Delay: 4_000_000_000, Times: 5},   // 4 s: every try of the first chunk
	)
	before := e.Emu.Stats()
	_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "gmail stalls", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}}}, compose.Options{})
	if !isRefusal(err) || !strings.Contains(err.Error(), "Gmail stopped answering") || !strings.Contains(err.Error(), "Nothing was sent") {
		t.Fatalf("err = %v, want the refusal saying Gmail stalled and nothing was sent", err)
	}
	outboxUnchanged(t, before, e.Emu.Stats())
}
