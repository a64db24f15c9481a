package compose

import (
	"context"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
)

// fakeThread is a threadReader with one thread, or an error for every
// read; it counts its reads.
type fakeThread struct {
	msgs  []gmail.Message
	err   error
	reads int
}

func (f *fakeThread) Thread(context.Context, string) ([]gmail.Message, error) {
	f.reads++
	return f.msgs, f.err
}

func TestSameSubject(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{"Plan", "Plan", true},
		{"Re: Plan", "plan", true},
		{"RE:RE: fwd:  Q3   plan ", "Fw: Aw: q3 Plan", true},
		{"", "Re:", true},
		{"Plan B", "Plan", false},
		{"Re: Plan", "Budget", false},
		{"Replan", "plan", false},
	} {
		if got := sameSubject(tt.a, tt.b); got != tt.same {
			t.Errorf("sameSubject(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}

// TestWithThreadSubject: the subject a thread_id reply takes is that of
// the message it answers when the thread has it, else the thread's
// first; a request validate will refuse, and a reply_to's, read no
// thread; a thread Gmail does not have is refused as unknown, a token
// that cannot read leaves the request as it is.
func TestWithThreadSubject(t *testing.T) {
	const id = "18f3a2b4c5d6e7f8"
	thread := []gmail.Message{
		{ID: "m1", Subject: "Plan", MessageID: "<p1@x.org>"},
		{ID: "m2", Subject: "Re: Plan (v2)", MessageID: "<p2@x.org>"},
		{ID: "m3", Subject: "Re: Plan", MessageID: "<p3@x.org>"},
	}
	gerr := func(code int, e error) error { return &gmail.Error{Op: "threads.get", Code: code, Err: e} }
	for _, tt := range []struct {
		name  string
		req   Request
		fake  fakeThread
		reads int
		want  string // the subject, or the refusal's kind
	}{
		{"answers the second", Request{Subject: "Budget", ThreadID: id, InReplyTo: "<p2@x.org>"}, fakeThread{msgs: thread}, 1, "Re: Plan (v2)"},
		{"answers it by references, without brackets", Request{Subject: "Budget", ThreadID: id, References: []string{"<p1@x.org> p2@x.org"}}, fakeThread{msgs: thread}, 1, "Re: Plan (v2)"},
		{"answers none of the thread", Request{Subject: "Budget", ThreadID: id, InReplyTo: "<elsewhere@x.org>"}, fakeThread{msgs: thread}, 1, "Re: Plan"},
		{"the answered message's subject", Request{Subject: "plan (V2)", ThreadID: id, InReplyTo: "<p2@x.org>"}, fakeThread{msgs: thread}, 1, "plan (V2)"},
		{"the first's subject is not the answered one's", Request{Subject: "Plan", ThreadID: id, InReplyTo: "<p2@x.org>"}, fakeThread{msgs: thread}, 1, "Re: Plan (v2)"},
		{"no thread_id", Request{Subject: "Budget", InReplyTo: "<p2@x.org>"}, fakeThread{msgs: thread}, 0, "Budget"},
		{"thread_id alone", Request{Subject: "Budget", ThreadID: id}, fakeThread{msgs: thread}, 0, "Budget"},
		{"a malformed thread_id", Request{Subject: "Budget", ThreadID: "not a thread!", InReplyTo: "<p2@x.org>"}, fakeThread{msgs: thread}, 0, "Budget"},
		{"a reply_to", Request{Subject: "Budget", ThreadID: id, InReplyTo: "<p2@x.org>", ReplyTo: handle.Message{ID: "m2"}}, fakeThread{msgs: thread}, 0, "Budget"},
		{"a token that cannot read", Request{Subject: "Budget", ThreadID: id, InReplyTo: "<p2@x.org>"}, fakeThread{err: gerr(403, gmail.ErrScope)}, 1, "Budget"},
		{"no such thread", Request{Subject: "Budget", ThreadID: id, InReplyTo: "<p2@x.org>"}, fakeThread{err: gerr(404, gmail.ErrNotFound)}, 1, string(kindUnknownThread)},
		{"Gmail busy, tried three times", Request{Subject: "Budget", ThreadID: id, InReplyTo: "<p2@x.org>"}, fakeThread{err: gerr(503, gmail.ErrUnavailable)}, 3, string(kindMailUnavailable)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := withThreadSubject(context.Background(), &tt.fake, tt.req, false)
			if r, ok := refusal.As(err); ok {
				if string(r.Kind) != tt.want || !strings.Contains(r.Text, "Nothing was sent.") {
					t.Errorf("refused %s: %s; want %q", r.Kind, r.Text, tt.want)
				}
			} else if err != nil || got.Subject != tt.want || got.subjectFromThread != (got.Subject != tt.req.Subject) {
				t.Errorf("subject %q (from the thread: %v), err %v; want %q", got.Subject, got.subjectFromThread, err, tt.want)
			}
			if tt.fake.reads != tt.reads {
				t.Errorf("%d reads of the thread, want %d", tt.fake.reads, tt.reads)
			}
		})
	}
}
