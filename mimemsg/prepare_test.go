package mimemsg

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/mail"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestPrepareRefusals(t *testing.T) {
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("r%d@example.com", i)
		}
		return out
	}
	tests := []struct {
		name  string
		edit  func(*Message)
		field string
		want  string
	}{
		{"CR LF in the subject", func(m *Message) { m.Subject = "Hi\r\nBcc: victim@example.com" }, "subject", "line break"},
		{"LF in the subject", func(m *Message) { m.Subject = "Hi\nthere" }, "subject", "line break"},
		{"NUL in the subject", func(m *Message) { m.Subject = "Hi\x00" }, "subject", "control character"},
		{"tab in the subject", func(m *Message) { m.Subject = "Hi\tthere" }, "subject", "control character"},
		{"C1 control in the subject", func(m *Message) { m.Subject = "H\u0085i" }, "subject", "control character"},
		{"subject of 999 characters", func(m *Message) { m.Subject = strings.Repeat("é", 999) }, "subject", "999 characters long; Gmail's limit is 998"},
		{"invalid UTF-8 subject", func(m *Message) { m.Subject = "bad \xff" }, "subject", "UTF-8"},
		{"no recipient", func(m *Message) { m.To = nil }, "to", "no recipient"},
		{"only empty recipients", func(m *Message) { m.To = []string{"", "  "} }, "to", "no recipient"},
		{"101 recipients", func(m *Message) { m.To = many(60); m.Cc = many(30); m.Bcc = many(11) }, FieldRecipients, "101 recipients; the limit is 100"},
		{"custom recipient limit", func(m *Message) { m.To = many(3); m.Limits.MaxRecipients = 2 }, FieldRecipients, "3 recipients; the limit is 2"},
		{"not an address", func(m *Message) { m.To = []string{"bob"} }, "to", `"bob" is not a valid to address`},
		{"a Reply-To that is not an address", func(m *Message) { m.ReplyTo = "help desk" }, "reply_to", `"help desk" is not a valid reply_to address`},
		{"no domain dot", func(m *Message) { m.Cc = []string{"bob@localhost"} }, "cc", "has no dot"},
		{"address literal", func(m *Message) { m.Cc = []string{"bob@[127.0.0.1]"} }, "cc", "address literals"},
		{"non-ASCII local part", func(m *Message) { m.To = []string{"josé@example.com"} }, "to", "non-ASCII characters before the @"},
		{"header injection in an address", func(m *Message) { m.To = []string{"a@example.com\r\nBcc: x@evil.com"} }, "to", "line break"},
		{"NUL in an address", func(m *Message) { m.Bcc = []string{"a@example.com\x00"} }, "bcc", "control character"},
		{"injected via an encoded name", func(m *Message) {
			m.To = []string{"=?utf-8?b?" + base64.StdEncoding.EncodeToString([]byte("a\r\nBcc: x@evil.com")) + "?= <a@example.com>"}
		}, "to", "control characters"},
		{"unparseable encoded name", func(m *Message) { m.To = []string{"=?utf-8?q?a=0D=0ABcc:_x@evil.com?= <a@example.com>"} }, "to", "not a valid to address"},
		{"hyphen label", func(m *Message) { m.To = []string{"a@-example.com"} }, "to", "hyphen"},
		{"empty label", func(m *Message) { m.To = []string{"a@example..com"} }, "to", "not a valid to address"},
		{"underscore in domain", func(m *Message) { m.To = []string{"a@ex_ample.com"} }, "to", "invalid domain"},
		{"local part of 65", func(m *Message) { m.To = []string{strings.Repeat("a", 65) + "@example.com"} }, "to", "too long before the @"},
		{"display name of 201", func(m *Message) { m.To = []string{strings.Repeat("n", 201) + " <a@example.com>"} }, "to", "201 characters long; the limit is 200"},
		{"two senders", func(m *Message) { m.From = "a@example.com, b@example.com" }, "from", "exactly one sender"},
		{"no sender", func(m *Message) { m.From = "" }, "from", "exactly one sender"},
		{"bad In-Reply-To", func(m *Message) { m.InReplyTo = "not an id" }, "in_reply_to", "not a valid message id"},
		{"In-Reply-To without @", func(m *Message) { m.InReplyTo = "<abc>" }, "in_reply_to", "left@right"},
		{"injection in In-Reply-To", func(m *Message) { m.InReplyTo = "<a@b>\r\nBcc: x@y.z" }, "in_reply_to", "not a valid message id"},
		{"bad reference", func(m *Message) { m.References = []string{"<a@b> <c(d)@e>"} }, "references", "not a valid message id"},
		{"bad Message-ID", func(m *Message) { m.MessageID = "<>" }, "Message-ID", "empty"},
		{"inline without HTML", func(m *Message) { m.Inline = []Part{inlinePart("a.png", "image/png", "x@y", "x")} }, "inline", "need an HTML body"},
		{"inline without a Content-ID", func(m *Message) {
			m.HTML = "<p>"
			m.Inline = []Part{inlinePart("a.png", "image/png", "", "x")}
		}, "inline", "no Content-ID"},
		{"Content-ID with a space", func(m *Message) {
			m.HTML = "<p>"
			m.Inline = []Part{inlinePart("a.png", "image/png", "a b@c", "x")}
		}, "inline", "contains"},
		{"duplicate Content-IDs", func(m *Message) {
			m.HTML = "<p>"
			m.Inline = []Part{inlinePart("a.png", "", "x@y", "1"), inlinePart("b.png", "", "<x@y>", "2")}
		}, "inline", "share the Content-ID"},
		{"empty file name", func(m *Message) { m.Attachments = []Part{filePart(" ", "", "x")} }, "attachment", "has no name"},
		{"slash in a file name", func(m *Message) { m.Attachments = []Part{filePart("../etc/passwd", "", "x")} }, "attachment", "path separator"},
		{"CR LF in a file name", func(m *Message) { m.Attachments = []Part{filePart("a\r\nX-Injected: yes", "", "x")} }, "attachment", "control"},
		{"bidi override in a file name", func(m *Message) { m.Attachments = []Part{filePart("report\u202Efdp.exe", "", "x")} }, "attachment", "invisible formatting"},
		{"invalid UTF-8 file name", func(m *Message) { m.Attachments = []Part{filePart("a\xff.txt", "", "x")} }, "attachment", "UTF-8"},
		{"file name of 256 bytes", func(m *Message) { m.Attachments = []Part{filePart(strings.Repeat("a", 252)+".pdf", "", "x")} }, "attachment", "256 bytes long; the limit is 255"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := base()
			tt.edit(&m)
			_, err := Prepare(m)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Prepare = %v (%T), want an *InputError", err, err)
			}
			if ie.Field != tt.field || !strings.Contains(ie.Error(), tt.want) {
				t.Errorf("Prepare = [%s] %q, want [%s] containing %q", ie.Field, ie.Error(), tt.field, tt.want)
			}
			if strings.ContainsAny(ie.Error(), "\r\n\x00") {
				t.Errorf("the sentence carries raw control characters: %q", ie.Error())
			}
		})
	}
}

func TestPrepareAcceptsEdges(t *testing.T) {
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("r%d@example.com", i)
		}
		return out
	}
	tests := []struct {
		name string
		edit func(*Message)
	}{
		{"100 recipients", func(m *Message) { m.To = many(50); m.Cc = many(30); m.Bcc = many(20) }},
		{"subject of 998 characters", func(m *Message) { m.Subject = strings.Repeat("é", 998) }},
		{"ASCII subject of 998 without a space", func(m *Message) { m.Subject = strings.Repeat("x", 998) }},
		{"empty subject", func(m *Message) { m.Subject = "" }},
		{"local part of 64", func(m *Message) { m.To = []string{strings.Repeat("a", 64) + "@example.com"} }},
		{"display name of 200", func(m *Message) { m.To = []string{strings.Repeat("n", 200) + " <a@example.com>"} }},
		{"file name of 255 bytes", func(m *Message) { m.Attachments = []Part{filePart(strings.Repeat("a", 251)+".pdf", "", "x")} }},
		{"non-ASCII file name of 255 bytes", func(m *Message) {
			m.Attachments = []Part{filePart(strings.Repeat("я", 125)+"a.pdf", "", "x")}
		}},
		{"comma list and trailing comma", func(m *Message) { m.To = []string{"a@example.com, B <b@example.org>,"} }},
		{"quoted local part", func(m *Message) { m.To = []string{`"john doe"@example.com`} }},
		{"plus addressing", func(m *Message) { m.To = []string{"a+tag@example.com"} }},
		{"punycode domain", func(m *Message) { m.To = []string{"a@xn--r8jz45g.jp"} }},
		{"unicode domain", func(m *Message) { m.To = []string{"a@例え.jp"} }},
		{"reply ids without brackets", func(m *Message) { m.InReplyTo = "abc@mail.gmail.com"; m.References = []string{"x@y"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := base()
			tt.edit(&m)
			raw, _ := build(t, m)
			msg, _ := parseGo(t, raw)
			if m.Subject != "" {
				if got, _ := wordDecoder.DecodeHeader(msg.Header.Get("Subject")); got != m.Subject {
					t.Errorf("subject round trip %q", got)
				}
			}
			for _, line := range strings.Split(string(raw), "\r\n") {
				if len(line) > 998 {
					t.Fatalf("a line of %d bytes", len(line))
				}
			}
		})
	}
}

func TestHeaders(t *testing.T) {
	date := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("", -5*3600))
	m := base()
	m.Date = date
	m.Cc = []string{"c@example.com"}
	m.Bcc = []string{"Hidden <h@example.com>"}
	m.InReplyTo = "parent@mail.gmail.com"
	m.ReplyTo = "Help Desk <help@example.com>"
	m.Text = "x"
	raw, _ := build(t, m)
	msg, _ := parseGo(t, raw)
	h := msg.Header
	if got, _ := h.Date(); !got.Equal(date) || h.Get("Date") != "Wed, 04 Mar 2026 05:06:07 -0500" {
		t.Errorf("Date %q", h.Get("Date"))
	}
	if id := h.Get("Message-Id"); !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@example.com>") || len(id) != len("<@example.com>")+36 {
		t.Errorf("Message-ID %q", id)
	}
	if h.Get("Bcc") != `"Hidden" <h@example.com>` {
		t.Errorf("Bcc %q", h.Get("Bcc"))
	}
	if h.Get("In-Reply-To") != "<parent@mail.gmail.com>" || h.Get("References") != "<parent@mail.gmail.com>" {
		t.Errorf("threading %q %q", h.Get("In-Reply-To"), h.Get("References"))
	}
	if h.Get("Reply-To") != `"Help Desk" <help@example.com>` {
		t.Errorf("Reply-To %q", h.Get("Reply-To"))
	}
	if h.Get("Mime-Version") != "1.0" {
		t.Errorf("MIME-Version %q", h.Get("Mime-Version"))
	}
	// Fields come in the usual order.
	var order []string
	for _, line := range strings.Split(string(raw[:strings.Index(string(raw), "\r\n\r\n")]), "\r\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, " ") {
			order = append(order, k)
		}
	}
	want := "Mime-Version Date Message-Id Subject From Reply-To To Cc Bcc In-Reply-To References Content-Type Content-Transfer-Encoding"
	if strings.Join(order, " ") != want {
		t.Errorf("header order %v", order)
	}
}

func TestMessageIDs(t *testing.T) {
	m := base()
	m.From = "me@例え.jp" // an IDN sender: its punycode form makes the id
	p, err := Prepare(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(p.MessageID(), "@xn--r8jz45g.jp>") {
		t.Errorf("Message-ID %q", p.MessageID())
	}
	m = base()
	m.MessageID = "given@host.example"
	if p, err = Prepare(m); err != nil || p.MessageID() != "<given@host.example>" {
		t.Errorf("Message-ID %q, %v", p.MessageID(), err)
	}
	a, _ := Prepare(base())
	b, _ := Prepare(base())
	if a.MessageID() == b.MessageID() {
		t.Error("two messages share a Message-ID")
	}
}

func TestReferences(t *testing.T) {
	var refs []string
	for i := 0; i < 50; i++ {
		refs = append(refs, fmt.Sprintf("<id%d@x.org>", i))
	}
	got, err := normMsgIDList("references", []string{strings.Join(refs[:10], ""), strings.Join(refs[10:], ", ")}, MaxReferences)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != MaxReferences || got[0] != "<id0@x.org>" || got[1] != "<id11@x.org>" || got[len(got)-1] != "<id49@x.org>" {
		t.Errorf("trimmed to %d: first %s, second %s, last %s", len(got), got[0], got[1], got[len(got)-1])
	}
	got, _ = normMsgIDList("references", refs[:MaxReferences], MaxReferences)
	if len(got) != MaxReferences || got[1] != "<id1@x.org>" {
		t.Errorf("a chain at the limit was trimmed: %v", got[:2])
	}
}

func TestHeaderFieldLimit(t *testing.T) {
	// Find, with go-message's own folding, the longest value of short
	// words that folds to MaxHeaderBytes, then check one more byte fails.
	words := strings.Repeat("abcd ", MaxHeaderBytes/5)
	n := sort.Search(len(words), func(i int) bool { return checkHeaderField("X-Test", words[:i+1]) != nil })
	if err := checkHeaderField("X-Test", strings.TrimRight(words[:n], " ")); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	over := words[:n] + "abcdefgh"
	if err := checkHeaderField("X-Test", over); err == nil || !strings.Contains(err.Error(), "the limit is 32768") {
		t.Fatalf("past the limit: %v", err)
	}
	// A To header past 32 KB is refused with a sentence.
	m := base()
	m.To = nil
	for i := 0; i < 100; i++ {
		m.To = append(m.To, fmt.Sprintf("%s <r%d@example.com>", strings.Repeat("Ж", 190), i))
	}
	_, err := Prepare(m)
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "to" || !strings.Contains(ie.Error(), "use fewer recipients or shorter names") {
		t.Fatalf("Prepare = %v", err)
	}
	// A word go-message cannot fold without adding a space is refused.
	if err := checkHeaderField("X-Test", strings.Repeat("x", 1000)); err == nil {
		t.Fatal("a 1000-byte word passed")
	}
}

func TestParseAddresses(t *testing.T) {
	got, err := ParseAddresses("to", []string{"A <a@example.com>, b@example.org", "", `"Last, First" <c@xn--r8jz45g.jp>`, "d@例え.jp"})
	if err != nil {
		t.Fatal(err)
	}
	want := []mail.Address{{Name: "A", Address: "a@example.com"}, {Address: "b@example.org"}, {Name: "Last, First", Address: "c@xn--r8jz45g.jp"}, {Address: "d@xn--r8jz45g.jp"}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if *got[i] != want[i] {
			t.Errorf("address %d = %+v, want %+v", i, *got[i], want[i])
		}
	}
	if _, err := ParseAddresses("to", []string{strings.Repeat("a", maxFieldInput+1)}); err == nil {
		t.Error("an over-long list was accepted")
	}
}
