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
	"github.com/drivemail/drivemail/internal/refusal"
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
// the account does not have (none has it, or another account's), with
// in_reply_to or alone, is refused by its read, before any download or
// upload, with the unknown-thread sentence, for a send and a draft.
func TestThreadSubjectUnknownThread(t *testing.T) {
	e := newEnv(t, compose.Config{})
	f, _ := e.putBytes("numbers.bin", 4096)
	for _, thread := range []string{"18f3a2b4c5d6e7f8", otherThread(t, e)} {
		for _, alone := range []bool{false, true} {
			for _, draft := range []bool{false, true} {
				req := threadReply(thread, "Budget")
				if alone {
					req.InReplyTo = ""
				}
				req.Attachments = []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}}
				before := e.Emu.Stats()
				_, err := e.send(req, compose.Options{ReadMail: true, Draft: draft})
				if !isRefusal(err) {
					t.Fatalf("thread %s, alone=%v, draft=%v: err = %v, want a refusal", thread, alone, draft, err)
				}
				for _, want := range []string{"Gmail does not know that thread_id", "Nothing was", "Leave thread_id out"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("thread %s, alone=%v, draft=%v: refusal %q lacks %q", thread, alone, draft, err, want)
					}
				}
				unchanged(t, before, e.Emu.Stats())
			}
		}
	}
}

// deliverInThread delivers to user a message from dana with the given
// Message-ID, answering inReplyTo when it is not "", and returns its
// Gmail id and thread.
func deliverInThread(t *testing.T, e *env, subject, messageID, inReplyTo string) (id, thread string) {
	t.Helper()
	raw := "From: Dana Reyes <dana@example.org>\r\nTo: " + user + "\r\nSubject: " + subject + "\r\nMessage-ID: " + messageID + "\r\n"
	if inReplyTo != "" {
		raw += "In-Reply-To: " + inReplyTo + "\r\nReferences: " + inReplyTo + "\r\n"
	}
	d, err := e.Emu.Gmail().Deliver(user, strings.NewReader(raw+"\r\nThe numbers.\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	return d.ID, d.ThreadID
}

// TestThreadIDAloneAnswersTheLatest: where mail may be read, a thread_id
// given without in_reply_to or references answers the thread's latest
// message, as Gmail's own reply does: In-Reply-To is its Message-ID,
// References the thread's, the subject the thread's; Gmail keeps it in
// the thread. A draft in the thread is no message to answer (no one got
// it). The thread is read once.
func TestThreadIDAloneAnswersTheLatest(t *testing.T) {
	for _, tc := range []struct {
		name, subject   string
		draft, inThread bool
		want            string
	}{
		{"a send, another subject", "Budget", false, false, "Re: Q3 Plan"},
		{"a send, no subject", "", false, false, "Re: Q3 Plan"},
		{"a draft, the thread's subject", "Q3 Plan", true, false, "Re: Q3 Plan"},
		{"a send, a draft last in the thread", "Budget", false, true, "Re: Q3 Plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, compose.Config{})
			_, thread := deliverInThread(t, e, "Q3 Plan", "<q3-first@example.org>", "")
			if _, th := deliverInThread(t, e, "Re: Q3 Plan", "<q3-latest@example.org>", "<q3-first@example.org>"); th != thread {
				t.Fatalf("the emulator put the answer in thread %s, not %s", th, thread)
			}
			if tc.inThread {
				d, err := e.send(compose.Request{To: []string{"dana@example.org"}, Subject: "Re: Q3 Plan", BodyText: "Not yet.",
					ThreadID: thread, InReplyTo: "<q3-latest@example.org>"}, compose.Options{Draft: true})
				if err != nil || threadIDOf(t, e, d.ID) != thread {
					t.Fatalf("draft in the thread: %+v, %v", d, err)
				}
			}
			before := e.Emu.Stats()
			res, err := e.send(compose.Request{To: []string{"dana@example.org"}, Subject: tc.subject, BodyText: "The numbers look right.", ThreadID: thread},
				compose.Options{ReadMail: true, Draft: tc.draft})
			if err != nil {
				t.Fatal(err)
			}
			if got := threadIDOf(t, e, res.ID); got != thread || res.ThreadID != thread {
				t.Errorf("Gmail put it in thread %s (result %s), want %s", got, res.ThreadID, thread)
			}
			h, err := mail.ReadMessage(bytes.NewReader(e.Message(user, res.ID)))
			if err != nil {
				t.Fatal(err)
			}
			if got := h.Header.Get("In-Reply-To"); got != "<q3-latest@example.org>" {
				t.Errorf("In-Reply-To %q, want the latest message's <q3-latest@example.org>", got)
			}
			if got := strings.Join(strings.Fields(h.Header.Get("References")), " "); got != "<q3-first@example.org> <q3-latest@example.org>" {
				t.Errorf("References %q, want the thread's Message-IDs, oldest first", got)
			}
			if got := h.Header.Get("Subject"); got != tc.want || res.Subject != tc.want {
				t.Errorf("Subject %q (result %q), want %q", got, res.Subject, tc.want)
			}
			if n := e.Emu.Stats().Paths[threadsGet] - before.Paths[threadsGet]; n != 1 {
				t.Errorf("threads.get called %d times, want once", n)
			}
		})
	}
}

// TestThreadIDAloneNeedsReadMail: without Options.ReadMail, or with it
// but a token that cannot read the thread, a thread_id alone is refused
// as before, with nothing sent or downloaded, by a sentence that says
// what to pass and claims nothing untrue of either case.
func TestThreadIDAloneNeedsReadMail(t *testing.T) {
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
			f, _ := e.putBytes("numbers.bin", 4096)
			_, thread := deliverInThread(t, e, "Q3 Plan", "<q3-first@example.org>", "")
			e.hc = e.Client(user, append([]string{emutest.ScopeDriveReadonly}, tc.scopes...)...)
			req := compose.Request{To: []string{"dana@example.org"}, Subject: "Q3 Plan", BodyText: "The numbers look right.", ThreadID: thread,
				Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}}}
			before := e.Emu.Stats()
			_, err := e.send(req, compose.Options{ReadMail: tc.readMail})
			r, ok := refusal.As(err)
			if !ok || r.Kind != "thread_without_reply" {
				t.Fatalf("err = %v, want the thread_without_reply refusal", err)
			}
			for _, want := range []string{"Pass in_reply_to", "could not read the thread", "leave thread_id out"} {
				if !strings.Contains(r.Text, want) {
					t.Errorf("refusal %q lacks %q", r.Text, want)
				}
			}
			unchanged(t, before, e.Emu.Stats())
			if n := e.Emu.Stats().Paths[threadsGet] - before.Paths[threadsGet]; n != tc.reads {
				t.Errorf("threads.get called %d times, want %d", n, tc.reads)
			}
		})
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
