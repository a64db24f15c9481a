package mimemsg

import (
	"bytes"
	"context"
	"errors"
	"net/mail"
	"strings"
	"testing"

	"github.com/emersion/go-message"

	"github.com/drivemail/drivemail/exportfmt"
)

// FuzzMessage builds messages from arbitrary names, subjects and
// addresses. Each is either refused with an *InputError sentence, or
// written as a 7-bit message that Go's parsers read back to the same
// values. A name cleaned by exportfmt.CleanName is never refused.
func FuzzMessage(f *testing.F) {
	f.Add("report.pdf", "Quarterly report", "bob@example.com", "Bob")
	f.Add("Отчёт за 2024.pdf", "Тема письма — résumé", "José <jose@example.org>", "José Müller")
	f.Add("a\r\nb.txt", "Hi\r\nBcc: x@y.z", "a@b.c\r\nBcc: v@w.x", "=?utf-8?q?x?=")
	f.Add(strings.Repeat("長", 100)+".docx", strings.Repeat("word ", 250), "\"q, r\" <q@r.st>", "\"quoted\"")
	f.Add("", "", "", "")
	f.Add("..", "=?utf-8?b?SGk=?=", "a@例え.jp", "a  b")
	f.Add("x\u202Egpj.exe", "\t", "josé@example.com", strings.Repeat("n", 300))
	f.Fuzz(func(t *testing.T, name, subject, addr, display string) {
		cleaned := exportfmt.CleanName(name)
		m := Message{
			From:    "Sender <sender@example.com>",
			To:      []string{addr},
			Cc:      []string{"cc@example.com"},
			Subject: subject,
			Text:    display,
			HTML:    `<p><img src="cid:ii_0@drivemail"></p>`,
			Inline:  []Part{inlinePart(cleaned, "image/png", "ii_0@drivemail", "inline")},
			Attachments: []Part{
				filePart(name, "", "raw name"),
				filePart(cleaned, exportfmt.MimeTypeByName(cleaned), "cleaned name"),
			},
		}
		p, err := Prepare(m)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Prepare = %v (%T), not an *InputError", err, err)
			}
			if strings.ContainsAny(ie.Error(), "\r\n") || ie.Error() == "" {
				t.Fatalf("bad sentence %q", ie.Error())
			}
			// Refusals are only ever for the raw inputs.
			if ie.Field != "to" && ie.Field != "subject" && ie.Field != "attachment" {
				t.Fatalf("refused %s: %v", ie.Field, ie)
			}
			if ie.Field == "attachment" {
				m.Attachments = m.Attachments[1:]
				_, err := Prepare(m)
				if errors.As(err, &ie) && (ie.Field == "attachment" || ie.Field == "inline") {
					t.Fatalf("a cleaned name %q was refused: %v", cleaned, err)
				}
			}
			return
		}
		var out bytes.Buffer
		if _, err := p.Stream(context.Background(), &out); err != nil {
			t.Fatalf("Stream: %v", err)
		}
		raw := out.Bytes()
		for i, c := range raw {
			if c >= 0x80 || c == 0 {
				t.Fatalf("byte %#x at %d: the message is not 7-bit", c, i)
			}
			if c == '\n' && (i == 0 || raw[i-1] != '\r') || c == '\r' && (i+1 == len(raw) || raw[i+1] != '\n') {
				t.Fatalf("a bare CR or LF at %d", i)
			}
		}
		for _, line := range bytes.Split(raw, []byte("\r\n")) {
			if len(line) > 998 {
				t.Fatalf("a line of %d bytes", len(line))
			}
		}

		msg, root := parseGo(t, raw)
		if got, err := wordDecoder.DecodeHeader(msg.Header.Get("Subject")); err != nil || got != strings.TrimSpace(subject) {
			t.Fatalf("subject %q → %q (%v)", subject, got, err)
		}
		want, _ := ParseAddresses("to", []string{addr})
		got, err := msg.Header.AddressList("To")
		if len(want) == 0 && err == mail.ErrHeaderNotPresent {
			err = nil
		}
		if err != nil || len(got) != len(want) {
			t.Fatalf("To %q → %v (%v); want %v", addr, got, err, want)
		}
		for i := range want {
			if got[i].Address != want[i].Address || got[i].Name != want[i].Name {
				t.Fatalf("To %d: %+v, want %+v", i, *got[i], *want[i])
			}
		}
		body, at := "multipart/related[text/html,image/png]", 0
		if display != "" {
			body, at = "multipart/alternative[text/plain,"+body+"]", 1
		}
		if s := root.shape(); s != "multipart/mixed["+body+",application/octet-stream,"+leafType(cleaned)+"]" {
			t.Fatalf("shape %s", s)
		}
		leaves := root.leaves()
		if n := leaves[at+2]; n.filename != name || n.name != name || string(n.body) != "raw name" {
			t.Fatalf("attachment %q came back as %q / %q", name, n.filename, n.name)
		}
		if n := leaves[at+3]; n.filename != cleaned || string(n.body) != "cleaned name" {
			t.Fatalf("attachment %q came back as %q", cleaned, n.filename)
		}
		if n := leaves[at+1]; n.filename != cleaned || n.contentID != "<ii_0@drivemail>" {
			t.Fatalf("inline %q came back as %q %q", cleaned, n.filename, n.contentID)
		}
		if at == 1 && string(leaves[0].body) != crlf(normaliseBody(display)) {
			t.Fatalf("text %q came back as %q", display, leaves[0].body)
		}
		if _, err := message.Read(bytes.NewReader(raw)); err != nil {
			t.Fatalf("go-message: %v", err)
		}
	})
}

// leafType is the media type a part written with MimeTypeByName(name)
// gets, after partContentType's rules.
func leafType(name string) string {
	t := exportfmt.MimeTypeByName(name)
	if strings.HasPrefix(t, "message/") {
		return "application/octet-stream"
	}
	return t
}
