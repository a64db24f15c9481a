package compose

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
)

func TestReplyRecipients(t *testing.T) {
	const me = "Ana <ana@example.com>"
	tests := []struct {
		name   string
		m      gmail.Message
		all    bool
		to, cc string
	}{
		{"sender", gmail.Message{From: "Dana <dana@x.org>", To: "ana@example.com, luis@x.org"}, false, "Dana <dana@x.org>", ""},
		{"Reply-To wins", gmail.Message{From: "dana@x.org", ReplyTo: "list@x.org", To: "ana@example.com"}, false, "list@x.org", ""},
		{"all, without the user", gmail.Message{From: "dana@x.org", To: "ANA@example.com, luis@x.org", Cc: "sam@x.org, ana@example.com"}, true, "dana@x.org,luis@x.org", "sam@x.org"},
		{"all, each once", gmail.Message{From: "dana@x.org", To: "luis@x.org", Cc: "dana@x.org, luis@x.org"}, true, "dana@x.org,luis@x.org", ""},
		{"own message goes to its recipients", gmail.Message{From: "ana@example.com", To: "zoe@x.org"}, false, "zoe@x.org", ""},
		{"own message to oneself", gmail.Message{From: "ana@example.com", To: "ana@example.com"}, false, "ana@example.com", ""},
		{"a name that needs quoting", gmail.Message{From: `"Reyes, Dana" <dana@x.org>`}, false, `"Reyes, Dana" <dana@x.org>`, ""},
		{"one bad address among good ones", gmail.Message{From: "dana@x.org", To: "luis@x.org, not an address"}, true, "dana@x.org,luis@x.org", ""},
	}
	for _, tt := range tests {
		to, cc := replyRecipients(tt.m, me, tt.all)
		if strings.Join(to, ",") != tt.to || strings.Join(cc, ",") != tt.cc {
			t.Errorf("%s: to %q cc %q, want %q and %q", tt.name, to, cc, tt.to, tt.cc)
		}
	}
}

func TestPrefixed(t *testing.T) {
	for subject, want := range map[string]string{"Plan": "Re: Plan", "Re: Plan": "Re: Plan", "RE: Plan": "RE: Plan", "Fwd: Plan": "Re: Fwd: Plan", " Plan ": "Re: Plan"} {
		if got := prefixed("Re: ", subject, "re:"); got != want {
			t.Errorf("reply to %q: %q, want %q", subject, got, want)
		}
	}
	if got := prefixed("Fwd: ", "Fw: Plan", "fwd:", "fw:"); got != "Fw: Plan" {
		t.Errorf("forward of Fw: %q", got)
	}
}

// TestForwardQuoteStaysWithinTheBodyLimit: a quote that fits is kept
// whole; one byte more and it is cut, says so, and the body stays within
// MaxBodyBytes.
func TestForwardQuoteStaysWithinTheBodyLimit(t *testing.T) {
	m := gmail.Message{From: "dana@x.org", Subject: "Log"}
	head, _ := quoteForward(gmail.Message{From: m.From, Subject: m.Subject}, "", "")
	fits := MaxBodyBytes - len(head) - len(cutNote)
	m.Text = strings.Repeat("é", fits/2)
	text, _ := quoteForward(m, "", "")
	if strings.HasSuffix(text, cutNote) || len(text) > MaxBodyBytes {
		t.Errorf("a quote that fits was cut, or the body is %d bytes", len(text))
	}
	m.Text += "xyz"
	text, _ = quoteForward(m, "", "")
	if !strings.HasSuffix(text, cutNote) || len(text) > MaxBodyBytes || !strings.Contains(text, "Subject: Log") {
		t.Errorf("a quote too long: %d bytes, cut %v", len(text), strings.HasSuffix(text, cutNote))
	}
	m.Text = strings.Repeat("<&>", MaxBodyBytes/3)
	_, html := quoteForward(m, "", "<p>hi</p>")
	if len(html) > MaxBodyBytes || !strings.Contains(html, "&lt;&amp;&gt;") {
		t.Errorf("html quote %d bytes", len(html))
	}
}

func TestHTMLText(t *testing.T) {
	got := htmlText("<html><head><TITLE>Newsletter</TITLE></head><style>p{x:1}</style><p>Hello &amp; welcome</p><div>Line<br>two</div><script>alert(1)</script></html>")
	if got != "Hello & welcome\nLine\ntwo" {
		t.Errorf("htmlText = %q", got)
	}
}

// fakeMail is a mailReader with one message, or an error for every read.
type fakeMail struct {
	m   gmail.Message
	err error
}

func (f fakeMail) Message(context.Context, string, bool) (gmail.Message, error) { return f.m, f.err }

func (f fakeMail) OpenAttachment(context.Context, string, gmail.Attachment) (io.ReadCloser, error) {
	return nil, errors.New("not here")
}

// TestReplyRefusals: a reply to a message Gmail cannot give, or to one
// without a Message-ID (Gmail's receiving side adds one, so only a
// message put in the mailbox another way lacks it), is refused with what
// became of it and what to do.
func TestReplyRefusals(t *testing.T) {
	const id = "18f3a2b4c5d6e7f8"
	gerr := func(e error) error { return &gmail.Error{Op: "messages.get", Err: e} }
	for _, tt := range []struct {
		name  string
		mail  fakeMail
		draft bool
		kind  kind
		says  string
	}{
		{"no Message-ID", fakeMail{m: gmail.Message{ID: id, From: "dana@x.org"}}, false, kindNoMessageID,
			"Gmail message 18f3a2b4c5d6e7f8 has no Message-ID header, so a reply cannot join its conversation. Nothing was sent."},
		{"no Message-ID, a draft", fakeMail{m: gmail.Message{ID: id, From: "dana@x.org"}}, true, kindNoMessageID, "Nothing was saved."},
		{"no read scope", fakeMail{err: gerr(gmail.ErrScope)}, false, kindMailScope, `"reply_to": reading Gmail needs permission`},
		{"a revoked token", fakeMail{err: gerr(gmail.ErrUnauthorized)}, false, kindGmailUnauthorized, "Reconnect drivemail"},
		{"too large to read", fakeMail{err: gerr(gmail.ErrAnswerTooLarge)}, false, kindMailTooLarge, "too large for drivemail to read whole"},
		{"Gmail busy", fakeMail{err: gerr(gmail.ErrUnavailable)}, false, kindMailUnavailable, "busy or unavailable right now, so message 18f3a2b4c5d6e7f8 could not be read"},
	} {
		t.Run(tt.name, inBubble(func(t *testing.T) {
			l := newMailLookup(tt.mail)
			_, err := withOriginal(context.Background(), l, Request{ReplyTo: handle.Message{ID: id}, BodyText: "x"}, "ana@example.com", tt.draft)
			r, ok := refusal.As(err)
			if !ok || r.Kind != tt.kind || !strings.Contains(r.Text, tt.says) {
				t.Errorf("err = %v; want %s saying %q", err, tt.kind, tt.says)
			}
		}))
	}
}
