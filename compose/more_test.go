package compose_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"net/mail"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/handle"
)

func tgzOf(t *testing.T, files map[string]int) []byte {
	t.Helper()
	var pairs []any
	for name, size := range files {
		pairs = append(pairs, name, bytes.Repeat([]byte("x"), size))
	}
	return tgzOfFiles(t, pairs...)
}

// tgzOfFiles is a tar.gz of name, content pairs.
func tgzOfFiles(t *testing.T, pairs ...any) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for i := 0; i < len(pairs); i += 2 {
		data := pairs[i+1].([]byte)
		if err := tw.WriteHeader(&tar.Header{Name: pairs[i].(string), Mode: 0o644, Size: int64(len(data))}); err != nil {
			t.Fatal(err)
		}
		tw.Write(data)
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// TestTarGzInspectedWhileStreaming: a .tgz from Drive with a blocked
// entry is refused as its bytes pass, and nothing is sent; a clean one goes.
func TestTarGzInspectedWhileStreaming(t *testing.T) {
	e := newEnv(t, compose.Config{})
	bad := e.Put(user, drivesvc.FileSpec{Name: "tools.tgz", Content: tgzOf(t, map[string]int{"readme.txt": 5000, "bin/run.exe": 10})})
	good := e.Put(user, drivesvc.FileSpec{Name: "docs.tar.gz", Content: tgzOf(t, map[string]int{"a.txt": 10, "b/c.pdf": 10})})
	before := e.Emu.Stats()
	_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "tgz", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(bad.ID)}}}}, compose.Options{})
	if !isRefusal(err) || !strings.Contains(err.Error(), "run.exe") || !strings.Contains(err.Error(), "Nothing was sent") {
		t.Fatalf("err = %v, want a refusal naming run.exe that says nothing was sent", err)
	}
	if !strings.HasPrefix(err.Error(), "Attachment 1: ") || !strings.Contains(err.Error(), "Send a link to the file instead or remove it from the archive.") {
		t.Errorf("err = %q, want it to name the entry and offer a link to the Drive file", err)
	}
	outboxUnchanged(t, before, e.Emu.Stats())
	if _, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "tgz", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(good.ID)}}}}, compose.Options{}); err != nil {
		t.Fatalf("clean tar.gz: %v", err)
	}
}

// TestModelWrittenArchivesChecked: archives written into the call are
// checked before anything is sent.
func TestModelWrittenArchivesChecked(t *testing.T) {
	e := newEnv(t, compose.Config{})
	for name, data := range map[string][]byte{
		"bundle.zip": zipOf(t, "ok.txt", "evil.js"),
		"bundle.tgz": tgzOf(t, map[string]int{"evil.js": 3}),
	} {
		before := e.Emu.Stats()
		_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "x", BodyText: "hi",
			Attachments: []compose.Attachment{{Name: name, Source: compose.Content{Encoding: compose.Base64, Data: base64.StdEncoding.EncodeToString(data)}}}}, compose.Options{})
		if !isRefusal(err) || !strings.Contains(err.Error(), "evil.js") {
			t.Errorf("%s: err = %v, want a refusal naming evil.js", name, err)
		}
		if err != nil && (strings.Contains(err.Error(), "link") || !strings.Contains(err.Error(), "Leave that file out of the archive")) {
			t.Errorf("%s: err = %q, want advice for content written into the call, which has no file to link to", name, err)
		}
		unchanged(t, before, e.Emu.Stats())
	}
}

// TestDriveTransientErrorsRetried: 503s on metadata and on opening a
// download are retried, and one message goes.
func TestDriveTransientErrorsRetried(t *testing.T) { synctest.Test(t, testDriveTransientErrorsRetried) }

func testDriveTransientErrorsRetried(t *testing.T) {
	e := newBubbleEnv(t, compose.Config{})
	f, b := e.putBytes("report.pdf", 50_000)
	path := "/drive/v3/files/" + f.ID
	e.Inject(
		emulator.Fault{Method: "GET", PathPrefix: path, Status: 503},           // metadata
		emulator.Fault{Method: "GET", PathPrefix: path, Delay: 1_000_000},      // metadata, retried
		emulator.Fault{Method: "GET", PathPrefix: path, Status: 429, Times: 2}, // download open, twice
	)
	e.sendFileOnce("retry", f, b)
}

// TestReplyThreads: a reply given thread_id and in_reply_to (the
// message_id a send returned) carries In-Reply-To and References, a reply
// subject, and lands in the thread: the emulator applies Gmail's three
// threading criteria, so a reply missing any of them would not.
func TestReplyThreads(t *testing.T) {
	e := newEnv(t, compose.Config{})
	first, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "Plan", BodyText: "v1"}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := mail.ReadMessage(bytes.NewReader(e.Message(user, first.ID)))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Header.Get("Message-Id"); first.MessageID == "" || got != first.MessageID {
		t.Fatalf("result message_id %q, the message carries %q", first.MessageID, got)
	}
	reply, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "Plan", BodyText: "v2",
		ThreadID: first.ThreadID, InReplyTo: first.MessageID}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if reply.ThreadID != first.ThreadID || reply.Subject != "Re: Plan" {
		t.Errorf("reply thread %q subject %q, want %q and \"Re: Plan\"", reply.ThreadID, reply.Subject, first.ThreadID)
	}
	r, err := mail.ReadMessage(bytes.NewReader(e.Message(user, reply.ID)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Header.Get("In-Reply-To") != first.MessageID || r.Header.Get("References") != first.MessageID || r.Header.Get("Subject") != "Re: Plan" {
		t.Errorf("In-Reply-To %q, References %q, Subject %q; want %q twice and Re: Plan",
			r.Header.Get("In-Reply-To"), r.Header.Get("References"), r.Header.Get("Subject"), first.MessageID)
	}
	if reply.MessageID == first.MessageID || r.Header.Get("Message-Id") != reply.MessageID {
		t.Errorf("the reply's message_id %q (header %q) is not its own", reply.MessageID, r.Header.Get("Message-Id"))
	}

	// references alone: the last one is the parent, also In-Reply-To; the
	// third message threads on the reply.
	third, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "Re: Plan", BodyText: "v3",
		ThreadID: first.ThreadID, References: []string{first.MessageID + " " + reply.MessageID}}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := mail.ReadMessage(bytes.NewReader(e.Message(user, third.ID)))
	if third.ThreadID != first.ThreadID || h.Header.Get("In-Reply-To") != reply.MessageID ||
		h.Header.Get("References") != first.MessageID+" "+reply.MessageID {
		t.Errorf("references only: thread %q, In-Reply-To %q, References %q", third.ThreadID, h.Header.Get("In-Reply-To"), h.Header.Get("References"))
	}
	// in_reply_to missing from references is added at their end.
	fourth, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "RE: plan", BodyText: "v4",
		ThreadID: first.ThreadID, InReplyTo: strings.Trim(third.MessageID, "<>"), References: []string{first.MessageID}}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, _ = mail.ReadMessage(bytes.NewReader(e.Message(user, fourth.ID)))
	if fourth.ThreadID != first.ThreadID || h.Header.Get("References") != first.MessageID+" "+third.MessageID || h.Header.Get("Subject") != "RE: plan" {
		t.Errorf("in_reply_to beside references: thread %q, References %q, Subject %q", fourth.ThreadID, h.Header.Get("References"), h.Header.Get("Subject"))
	}

	_, err = e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "x", BodyText: "x", ThreadID: "not a thread!"}, compose.Options{})
	if !isRefusal(err) || !strings.Contains(err.Error(), "thread_id") {
		t.Errorf("bad thread id: err = %v", err)
	}
}

// TestRepliesGmailWouldNotThread: without ReadMail, thread_id without a
// Message-ID to answer is refused, saying what to pass; a subject of
// another topic sends, and Gmail starts a new conversation (its thread_id differs);
// in_reply_to without thread_id threads for the recipients only.
func TestRepliesGmailWouldNotThread(t *testing.T) {
	e := newEnv(t, compose.Config{})
	first, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "Plan", BodyText: "v1"}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := e.Emu.Stats()
	_, err = e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "Re: Plan", BodyText: "v2", ThreadID: first.ThreadID}, compose.Options{})
	if !isRefusal(err) {
		t.Fatalf("thread_id alone: err = %v, want a refusal", err)
	}
	for _, want := range []string{"Pass in_reply_to", "message_id", "could not read the thread", "leave thread_id out"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	unchanged(t, before, e.Emu.Stats())

	other, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "Budget", BodyText: "v2",
		ThreadID: first.ThreadID, InReplyTo: first.MessageID}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if other.ThreadID == first.ThreadID || other.Subject != "Re: Budget" {
		t.Errorf("another subject: thread %q subject %q, want a new thread (Gmail's subject criterion)", other.ThreadID, other.Subject)
	}
	loose, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "Plan", BodyText: "v3", InReplyTo: first.MessageID}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := mail.ReadMessage(bytes.NewReader(e.Message(user, loose.ID)))
	if loose.ThreadID == first.ThreadID || h.Header.Get("In-Reply-To") != first.MessageID || h.Header.Get("Subject") != "Re: Plan" {
		t.Errorf("in_reply_to alone: thread %q, In-Reply-To %q, Subject %q", loose.ThreadID, h.Header.Get("In-Reply-To"), h.Header.Get("Subject"))
	}
}

// TestUnknownThreadIDNamesIt: Gmail answers a thread_id it does not know
// with a bare 400 ("Invalid thread_id value"); the refusal names the
// thread_id as the likely cause and what to do, for a send and a draft,
// and nothing goes. A 400 without a thread_id keeps the general advice.
func TestUnknownThreadIDNamesIt(t *testing.T) {
	e := newEnv(t, compose.Config{})
	for _, draft := range []bool{false, true} {
		before := e.Emu.Stats()
		_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "Re: Plan", BodyText: "v2", ThreadID: "18f3a2b4c5d6e7f8", InReplyTo: "<m1@example.org>"},
			compose.Options{Draft: draft})
		if !isRefusal(err) {
			t.Fatalf("draft=%v: err = %v, want a refusal", draft, err)
		}
		for _, want := range []string{"most likely because of its thread_id", "Leave thread_id out", "from the message being answered", "Nothing was"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("draft=%v: refusal %q lacks %q", draft, err, want)
			}
		}
		outboxUnchanged(t, before, e.Emu.Stats())
	}

	e.Inject(emulator.Fault{Method: "POST", PathPrefix: "/upload/gmail/v1/users/me/messages/send", Status: 400})
	_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "Plan", BodyText: "v1"}, compose.Options{})
	if !isRefusal(err) || strings.Contains(err.Error(), "thread_id") || !strings.Contains(err.Error(), "Check the recipients and headers") {
		t.Errorf("a 400 without thread_id: err = %v, want the general advice", err)
	}
}

// zipOfStoredZips is a zip holding inner zips stored without compression,
// as zip tools write entries that do not shrink; inner[i] lists the names
// in the i-th inner zip.
func zipOfStoredZips(t *testing.T, inner ...[]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i, names := range inner {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("part%d.zip", i+1), Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(zipOf(t, names...))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestZipOfStoredZips: the inner zips of a zip are checked by Range reads
// as far as the read budget goes; the rest are left to Gmail, and a clean
// archive with more of them than the budget covers still goes.
func TestZipOfStoredZips(t *testing.T) {
	e := newEnv(t, compose.Config{})
	clean := zipOfStoredZips(t, []string{"a.txt"}, []string{"b.txt"}, []string{"c.txt"}, []string{"d.txt"}, []string{"e.txt"})
	f := e.Put(user, drivesvc.FileSpec{Name: "bundle.zip", Content: clean})
	e.sendFileOnce("zip of zips", f, clean)

	bad := e.Put(user, drivesvc.FileSpec{Name: "tools.zip", Content: zipOfStoredZips(t, []string{"readme.txt", "setup.exe"}, []string{"b.txt"})})
	before := e.Emu.Stats()
	_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "zip", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(bad.ID)}}}}, compose.Options{})
	if !isRefusal(err) || !strings.Contains(err.Error(), "part1.zip/setup.exe") {
		t.Fatalf("err = %v, want a refusal naming part1.zip/setup.exe", err)
	}
	unchanged(t, before, e.Emu.Stats())
}

// gzOf compresses n bytes of noise into a .gz whose header names inner.
func gzOf(t *testing.T, inner string, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	gz.Name = inner
	noise := make([]byte, n)
	for i := range noise {
		noise[i] = byte(i*7919 + i/13)
	}
	if _, err := gz.Write(noise); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGzipHeaderCheckedBeforeDownload: a .gz whose header names a blocked
// file is refused after one Range read of its first KiB, before any
// download or Gmail request; a .gz of an allowed file goes.
func TestGzipHeaderCheckedBeforeDownload(t *testing.T) {
	e := newEnv(t, compose.Config{})
	bad := e.Put(user, drivesvc.FileSpec{Name: "installer.gz", Content: gzOf(t, "setup.exe", 1<<20)})
	good := e.Put(user, drivesvc.FileSpec{Name: "data.csv.gz", Content: gzOf(t, "data.csv", 10_000)})
	before := e.Emu.Stats()
	_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "gz", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(bad.ID)}}}}, compose.Options{})
	if !isRefusal(err) || !strings.Contains(err.Error(), `contains "setup.exe"`) {
		t.Fatalf("err = %v, want a refusal naming setup.exe", err)
	}
	after := e.Emu.Stats()
	unchanged(t, before, after)
	if after.BytesServed != before.BytesServed {
		t.Errorf("the refusal downloaded %d bytes", after.BytesServed-before.BytesServed)
	}
	fs, fsBefore := after.Files[bad.ID], before.Files[bad.ID]
	if reads, read := fs.RangeReads-fsBefore.RangeReads, fs.RangeBytes-fsBefore.RangeBytes; reads != 1 || read > 1024 {
		t.Errorf("checking the header took %d Range requests for %d bytes; want one of at most 1 KiB", reads, read)
	}
	res, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "gz", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(good.ID)}}}}, compose.Options{})
	if err != nil || len(res.Attached) != 1 {
		t.Fatalf("data.csv.gz: %v %+v", err, res)
	}
}
