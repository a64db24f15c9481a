package compose

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/mimemsg"
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
// the message it answers when the thread has it (a thread_id alone
// answers the latest), else the thread's first; a request validate will
// refuse, and a reply_to's, read no thread; a thread Gmail does not have
// is refused as unknown, a token that cannot read leaves the request as
// it is.
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
		{"thread_id alone", Request{Subject: "Budget", ThreadID: id}, fakeThread{msgs: thread}, 1, "Re: Plan"},
		{"thread_id alone, a token that cannot read", Request{Subject: "Budget", ThreadID: id}, fakeThread{err: gerr(403, gmail.ErrScope)}, 1, "Budget"},
		{"thread_id alone, no such thread", Request{Subject: "Budget", ThreadID: id}, fakeThread{err: gerr(404, gmail.ErrNotFound)}, 1, string(kindUnknownThread)},
		{"a malformed thread_id", Request{Subject: "Budget", ThreadID: "not a thread!", InReplyTo: "<p2@x.org>"}, fakeThread{msgs: thread}, 0, "Budget"},
		{"a reply_to", Request{Subject: "Budget", ThreadID: id, InReplyTo: "<p2@x.org>", ReplyTo: handle.Message{ID: "m2"}}, fakeThread{msgs: thread}, 0, "Budget"},
		{"a token that cannot read", Request{Subject: "Budget", ThreadID: id, InReplyTo: "<p2@x.org>"}, fakeThread{err: gerr(403, gmail.ErrScope)}, 1, "Budget"},
		{"no such thread", Request{Subject: "Budget", ThreadID: id, InReplyTo: "<p2@x.org>"}, fakeThread{err: gerr(404, gmail.ErrNotFound)}, 1, string(kindUnknownThread)},
		{"Gmail busy, tried three times", Request{Subject: "Budget", ThreadID: id, InReplyTo: "<p2@x.org>"}, fakeThread{err: gerr(503, gmail.ErrUnavailable)}, 3, string(kindMailUnavailable)},
	} {
		t.Run(tt.name, inBubble(func(t *testing.T) {
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
		}))
	}
}

// TestAnswerLatest: a thread_id alone answers the thread's latest
// message sent or received, its References the thread's Message-IDs
// oldest first, the first and the latest past MaxReferenceEntries;
// drafts and Message-IDs a message may not carry are passed over, and
// a thread without a message to answer is refused, nothing read again.
func TestAnswerLatest(t *testing.T) {
	const id = "18f3a2b4c5d6e7f8"
	msg := func(mid string, labels ...string) gmail.Message {
		return gmail.Message{ID: mid, Subject: "Plan", MessageID: mid, Labels: labels}
	}
	var long []gmail.Message
	var longWant []string
	for i := range 150 {
		m := fmt.Sprintf("<p%d@x.org>", i)
		long = append(long, msg(m, "INBOX"))
		if i == 0 || i >= 150-MaxReferenceEntries+1 {
			longWant = append(longWant, m)
		}
	}
	for _, tt := range []struct {
		name string
		msgs []gmail.Message
		want []string // References; In-Reply-To is the last; nil: refused
	}{
		{"one message", []gmail.Message{msg("<p1@x.org>", "INBOX")}, []string{"<p1@x.org>"}},
		{"the latest is the user's own", []gmail.Message{msg("<p1@x.org>", "INBOX"), msg("<p2@x.org>", "SENT")}, []string{"<p1@x.org>", "<p2@x.org>"}},
		{"a draft last", []gmail.Message{msg("<p1@x.org>", "INBOX"), msg("<p2@x.org>", "INBOX"), msg("<d@x.org>", "DRAFT")}, []string{"<p1@x.org>", "<p2@x.org>"}},
		{"Message-IDs a reply may not name", []gmail.Message{msg("<p1@x.org>"), msg("<Re: Plan@x.org>"), msg("<a@b@>"), msg(""), msg("<p2@x.org> <p3@x.org>"),
			msg("no-brackets@x.org"), msg("<" + strings.Repeat("a", 495) + "@x.org>")}, []string{"<p1@x.org>"}},
		{"a Message-ID seen twice", []gmail.Message{msg("<p1@x.org>"), msg("<p2@x.org>"), msg("<p1@x.org>")}, []string{"<p2@x.org>", "<p1@x.org>"}},
		{"150 messages", long, longWant},
		{"drafts only", []gmail.Message{msg("<d@x.org>", "DRAFT")}, nil},
		{"no message", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeThread{msgs: tt.msgs}
			got, err := withThreadSubject(context.Background(), fake, Request{Subject: "Plan", ThreadID: id}, true)
			if tt.want == nil {
				r, ok := refusal.As(err)
				if !ok || r.Kind != kindThreadWithoutReply || !strings.Contains(r.Text, "Nothing was saved.") || !strings.Contains(r.Text, "Leave thread_id out") {
					t.Errorf("err = %v, want the thread_without_reply refusal saying nothing was saved", err)
				}
				return
			}
			if err != nil || got.InReplyTo != tt.want[len(tt.want)-1] || !slices.Equal(got.References, tt.want) {
				t.Errorf("In-Reply-To %q, References %q, err %v; want References %q", got.InReplyTo, got.References, err, tt.want)
			}
			if _, err := replyHeaders(got); err != nil {
				t.Errorf("replyHeaders refuses what answerLatest completed: %v", err)
			}
			if fake.reads != 1 {
				t.Errorf("%d reads of the thread, want 1", fake.reads)
			}
		})
	}
}

// TestAnswerableIDsPassMimemsg: answerableID takes a Message-ID exactly
// when mimemsg accepts it in References, so a reply it completes is
// never refused for the thread's ids.
func TestAnswerableIDsPassMimemsg(t *testing.T) {
	for _, mid := range []string{"<p1@x.org>", "<a.b+c_d$e@host>", "<Re: Plan@x.org>", "<a@b@>", "<@x.org>", "<x.org@>", "<a;b@x.org>",
		"<a\\b@x.org>", "<a\"b@x.org>", "<a,b@x.org>", "<caf\u00e9@x.org>", "<" + strings.Repeat("a", 492) + "@x.org>", "<" + strings.Repeat("a", 493) + "@x.org>"} {
		_, err := mimemsg.PrepareHeader(mimemsg.Message{From: "a@x.org", To: []string{"b@x.org"}, References: []string{mid}})
		if got := answerableID(gmail.Message{MessageID: mid}) != ""; got != (err == nil) {
			t.Errorf("%q: answerableID takes it: %v; mimemsg: %v", mid, got, err)
		}
	}
}

// TestFirstAndLatestAtTheEdge: MaxReferenceEntries ids stay as they are;
// one more drops the second, keeping the first and the latest.
func TestFirstAndLatestAtTheEdge(t *testing.T) {
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("<%d@example.org>", i)
		}
		return out
	}
	for _, n := range []int{1, MaxReferenceEntries, MaxReferenceEntries + 1, 3 * MaxReferenceEntries} {
		in := ids(n)
		got := firstAndLatest(slices.Clone(in))
		want := in
		if n > MaxReferenceEntries {
			want = append([]string{in[0]}, in[n-MaxReferenceEntries+1:]...)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d ids: got %d, first %q last %q; want %d, first %q last %q", n, len(got), got[0], got[len(got)-1], len(want), want[0], want[len(want)-1])
		}
	}
}
