package compose_test

import (
	"bytes"
	"mime"
	"net/mail"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/handle"
)

// threadsGet is the emulator's route of users.threads.get.
const threadsGet = "GET /gmail/v1/users/{userId}/threads/{id}"

// threadReply is a reply in thread to dana's message "<Q3-Plan@example.org>"
// (e.deliver's Message-ID for the subject "Q3 Plan"), by thread_id and
// in_reply_to, with subject.
func threadReply(thread, subject string) compose.Request {
	return compose.Request{To: []string{"dana@example.org"}, Subject: subject, BodyText: "The numbers look right.",
		ThreadID: thread, InReplyTo: "<Q3-Plan@example.org>"}
}

// TestThreadIDReplyTakesTheThreadsSubject: where mail may be read
// (Options.ReadMail), a thread_id reply whose subject is not the
// thread's (reply prefixes, case and spaces aside) goes with "Re: " and
// the thread's subject, and Gmail keeps it in the thread; one with the
// thread's subject goes as given. Each reads the thread once.
func TestThreadIDReplyTakesTheThreadsSubject(t *testing.T) {
	for _, tc := range []struct {
		name, subject string
		draft         bool
		want          string
		fromThread    bool
	}{
		{"another subject", "Budget", false, "Re: Q3 Plan", true},
		{"another subject, a draft", "Budget", true, "Re: Q3 Plan", true},
		{"no subject", "", false, "Re: Q3 Plan", true},
		{"the subject with the thread's words moved", "Plan Q3", false, "Re: Q3 Plan", true},
		{"the thread's subject", "Q3 Plan", false, "Re: Q3 Plan", false},
		{"the thread's subject in other case and spacing", "q3  PLAN", false, "Re: q3  PLAN", false},
		{"the thread's subject, forwarded and answered", "FW: Re: Q3 Plan", false, "FW: Re: Q3 Plan", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, compose.Config{})
			thread := threadIDOf(t, e, e.deliver(user, "Q3 Plan", nil))
			before := e.Emu.Stats()
			res, err := e.send(threadReply(thread, tc.subject), compose.Options{ReadMail: true, Draft: tc.draft})
			if err != nil {
				t.Fatal(err)
			}
			h, err := mail.ReadMessage(bytes.NewReader(e.Message(user, res.ID)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := new(mime.WordDecoder).DecodeHeader(h.Header.Get("Subject"))
			if err != nil || got != tc.want || res.Subject != tc.want || res.SubjectFromThread != tc.fromThread {
				t.Errorf("Subject header %q, result %q (from the thread: %v); want %q (from the thread: %v)", got, res.Subject, res.SubjectFromThread, tc.want, tc.fromThread)
			}
			if got := threadIDOf(t, e, res.ID); got != thread || res.ThreadID != thread {
				t.Errorf("Gmail put it in thread %s (result %s), want %s", got, res.ThreadID, thread)
			}
			if n := e.Emu.Stats().Paths[threadsGet] - before.Paths[threadsGet]; n != 1 {
				t.Errorf("threads.get called %d times, want once", n)
			}
		})
	}
}

// TestThreadSubjectNeedsReadMail: without Options.ReadMail no mail is
// read and a reply of another subject goes as it did (Gmail starts a new
// conversation, which the result shows); with it but a token that
// cannot read (gmail.compose reads no thread), the same.
func TestThreadSubjectNeedsReadMail(t *testing.T) {
	for _, tc := range []struct {
		name     string
		readMail bool
		scopes   []string
		reads    int64
	}{
		{"no ReadMail", false, []string{emutest.ScopeGmailSend, emutest.ScopeGmailReadonly}, 0},
		{"ReadMail, a token that may only send and draft", true, []string{emutest.ScopeGmailSend, emutest.ScopeGmailCompose}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, compose.Config{})
			thread := threadIDOf(t, e, e.deliver(user, "Q3 Plan", nil))
			e.hc = e.Client(user, append([]string{emutest.ScopeDriveReadonly}, tc.scopes...)...)
			before := e.Emu.Stats()
			res, err := e.send(threadReply(thread, "Budget"), compose.Options{ReadMail: tc.readMail})
			if err != nil {
				t.Fatal(err)
			}
			if res.Subject != "Re: Budget" || res.SubjectFromThread || res.ThreadID == thread {
				t.Errorf("subject %q (from the thread: %v), thread %s; want \"Re: Budget\" in a new thread, as Gmail does", res.Subject, res.SubjectFromThread, res.ThreadID)
			}
			if n := e.Emu.Stats().Paths[threadsGet] - before.Paths[threadsGet]; n != tc.reads {
				t.Errorf("threads.get called %d times, want %d", n, tc.reads)
			}
		})
	}
}

// TestThreadSubjectUnknownThread: where mail may be read, a thread_id
// the account does not have (none has it, or another account's) is
// refused by its read, before any download
// or upload, with the unknown-thread sentence, for a send and a draft.
func TestThreadSubjectUnknownThread(t *testing.T) {
	e := newEnv(t, compose.Config{})
	f, _ := e.putBytes("numbers.bin", 4096)
	for _, thread := range []string{"18f3a2b4c5d6e7f8", otherThread(t, e)} {
		for _, draft := range []bool{false, true} {
			req := threadReply(thread, "Budget")
			req.Attachments = []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}}
			before := e.Emu.Stats()
			_, err := e.send(req, compose.Options{ReadMail: true, Draft: draft})
			if !isRefusal(err) {
				t.Fatalf("thread %s, draft=%v: err = %v, want a refusal", thread, draft, err)
			}
			for _, want := range []string{"Gmail does not know that thread_id", "Nothing was", "Leave thread_id out"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("thread %s, draft=%v: refusal %q lacks %q", thread, draft, err, want)
				}
			}
			unchanged(t, before, e.Emu.Stats())
		}
	}
}

// otherThread is the thread of a message in the other user's mailbox.
func otherThread(t *testing.T, e *env) string {
	t.Helper()
	d, err := e.Emu.Gmail().Deliver(other, strings.NewReader("From: dana@example.org\r\nTo: "+other+"\r\nSubject: Q3 Plan\r\nMessage-ID: <Q3-Plan@example.org>\r\n\r\nhi\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	return d.ThreadID
}
