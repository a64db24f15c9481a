package compose_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
)

const attachmentsGet = "GET /gmail/v1/users/{userId}/messages/{messageId}/attachments/{id}"

// inFile is an attachment of a message in the inbox.
type inFile struct {
	name, mimeType string
	data           []byte
}

// deliver files a message from dana into owner's inbox and returns its
// Gmail id; extra headers go first.
func (e *env) deliver(owner, subject string, extra []string, files ...inFile) string {
	e.t.Helper()
	var b strings.Builder
	for _, h := range extra {
		b.WriteString(h + "\r\n")
	}
	fmt.Fprintf(&b, "From: Dana Reyes <dana@example.org>\r\nTo: %s\r\nSubject: %s\r\nDate: Mon, 04 May 2026 10:00:00 +0000\r\n", owner, subject)
	fmt.Fprintf(&b, "Message-ID: <%s@example.org>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n", strings.ReplaceAll(subject, " ", "-"))
	b.WriteString("--B\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHello,\r\nthe numbers are in.\r\n")
	for _, f := range files {
		fmt.Fprintf(&b, "--B\r\nContent-Type: %s\r\nContent-Disposition: attachment; filename=%q\r\nContent-Transfer-Encoding: base64\r\n\r\n", f.mimeType, f.name)
		enc := base64.StdEncoding.EncodeToString(f.data)
		for len(enc) > 76 {
			b.WriteString(enc[:76] + "\r\n")
			enc = enc[76:]
		}
		b.WriteString(enc + "\r\n")
	}
	b.WriteString("--B--\r\n")
	d, err := e.Emu.Gmail().Deliver(owner, strings.NewReader(b.String()))
	if err != nil {
		e.t.Fatal(err)
	}
	return d.ID
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func msgRef(id string) handle.Message { return handle.Message{ID: id} }

func gmailAtt(id, name string) compose.Attachment {
	return compose.Attachment{Source: compose.GmailAttachment{Message: msgRef(id), Name: name}}
}

func TestGmailAttachmentGoesByteForByte(t *testing.T) {
	e := newEnv(t, compose.Config{})
	invoice := randomBytes(700_001)
	logo := randomBytes(2000)
	id := e.deliver(user, "Invoice May", nil, inFile{"invoice.pdf", "application/pdf", invoice}, inFile{"logo.png", "image/png", logo})

	res, err := e.send(compose.Request{To: []string{"acct@example.org"}, Subject: "Invoice", BodyText: "See attached.",
		BodyHTML: `<p>Our logo: <img src="cid:logo.png"></p>`,
		Attachments: []compose.Attachment{
			{Name: "May invoice", Source: compose.GmailAttachment{Message: msgRef(id), Name: "Invoice.PDF"}},
			gmailAtt(id, "logo.png"),
		}}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attached) != 1 || res.Attached[0].Name != "May invoice.pdf" || res.Attached[0].Bytes != int64(len(invoice)) ||
		res.Attached[0].FromMessage != id || res.Attached[0].MimeType != "application/pdf" {
		t.Errorf("attached %+v", res.Attached)
	}
	if len(res.Inline) != 1 || res.Inline[0].Name != "logo.png" {
		t.Errorf("inline %+v", res.Inline)
	}
	_, root := goParse(t, e.Message(user, res.ID))
	var gotInvoice, gotLogo []byte
	for _, l := range root.leaves() {
		switch l.Filename {
		case "May invoice.pdf":
			gotInvoice = l.Body
		case "logo.png":
			gotLogo = l.Body
		}
	}
	if !bytes.Equal(gotInvoice, invoice) || !bytes.Equal(gotLogo, logo) {
		t.Error("the attachments sent differ from the ones in Gmail")
	}
}

func TestGmailAttachmentRefusals(t *testing.T) {
	e := newEnv(t, compose.Config{})
	id := e.deliver(user, "Files", nil, inFile{"a.pdf", "application/pdf", []byte("%PDF")}, inFile{"b.png", "image/png", []byte("png")})
	plain := e.deliver(user, "No files", nil)
	bobs := e.deliver(other, "Bob's", nil, inFile{"secret.pdf", "application/pdf", []byte("%PDF")})
	exe := e.deliver(user, "Tool", nil, inFile{"setup.exe", "application/octet-stream", []byte("MZ")})
	send := func(atts ...compose.Attachment) error {
		_, err := e.send(compose.Request{To: []string{"z@example.org"}, Subject: "x", BodyText: "x", Attachments: atts}, compose.Options{})
		return err
	}
	before := e.Emu.Stats()

	err := send(gmailAtt(id, "c.pdf"))
	for _, want := range []string{`no attachment named "c.pdf"`, `"a.pdf", "b.png"`, "Use one of those names"} {
		if !isRefusal(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("unknown name: %v, want %q", err, want)
		}
	}
	if err := send(gmailAtt(plain, "a.pdf")); !isRefusal(err) || !strings.Contains(err.Error(), "has no attachments") {
		t.Errorf("a message without files: %v", err)
	}
	errOther := send(gmailAtt(bobs, "secret.pdf"))
	errNone := send(gmailAtt("18f0000000000000", "secret.pdf"))
	if !isRefusal(errOther) || strings.Replace(errOther.Error(), bobs, "ID", 1) != strings.Replace(errNone.Error(), "18f0000000000000", "ID", 1) {
		t.Errorf("another account's message and none read differently:\n%v\n%v", errOther, errNone)
	}
	if err := send(gmailAtt(exe, "setup.exe")); !isRefusal(err) || !strings.Contains(err.Error(), "save_to_drive") {
		t.Errorf("a blocked type: %v, want a refusal that offers save_to_drive", err)
	}
	after := e.Emu.Stats()
	if after.MessagesSent != before.MessagesSent || after.Paths[attachmentsGet] != before.Paths[attachmentsGet] {
		t.Errorf("refusals sent %d messages and downloaded %d attachments, want none",
			after.MessagesSent-before.MessagesSent, after.Paths[attachmentsGet]-before.Paths[attachmentsGet])
	}
}

// TestGmailAttachmentsOverTheLimitRefusedBeforeDownload: 25 MiB and one
// byte in two Gmail attachments is refused from their metadata, with
// their sizes, before any byte is fetched.
func TestGmailAttachmentsOverTheLimitRefusedBeforeDownload(t *testing.T) {
	e := newEnv(t, compose.Config{})
	half := compose.MaxAttachmentBytes / 2
	a := e.deliver(user, "Part one", nil, inFile{"one.bin", "application/octet-stream", randomBytes(half)})
	b := e.deliver(user, "Part two", nil, inFile{"two.bin", "application/octet-stream", randomBytes(half + 1)})
	before := e.Emu.Stats()
	_, err := e.send(compose.Request{To: []string{"z@example.org"}, Subject: "x", BodyText: "x",
		Attachments: []compose.Attachment{gmailAtt(a, "one.bin"), gmailAtt(b, "two.bin")}}, compose.Options{})
	for _, want := range []string{"25.0 MiB (26,214,401 bytes)", `"two.bin" is 12.5 MiB (13,107,201 bytes)`, "save_to_drive"} {
		if !isRefusal(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %v lacks %q", err, want)
		}
	}
	if got := e.Emu.Stats().Paths[attachmentsGet] - before.Paths[attachmentsGet]; got != 0 {
		t.Errorf("%d attachments downloaded before the refusal", got)
	}
}

// TestGmailZipCheckedWhileItStreams: a zip from Gmail cannot be read by
// Range, so its directory is checked from the tail at the end of its
// stream: a blocked entry abandons the message, and nothing is sent.
func TestGmailZipCheckedWhileItStreams(t *testing.T) {
	e := newEnv(t, compose.Config{})
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range []string{"photos/a.jpg", "photos/run.bat"} {
		w, _ := zw.Create(n)
		w.Write(randomBytes(40_000))
	}
	zw.Close()
	id := e.deliver(user, "Photos", nil, inFile{"photos.zip", "application/zip", buf.Bytes()})
	before := e.Emu.Stats()
	_, err := e.send(compose.Request{To: []string{"z@example.org"}, Subject: "x", BodyText: "x",
		Attachments: []compose.Attachment{gmailAtt(id, "photos.zip")}}, compose.Options{})
	for _, want := range []string{"photos/run.bat", "save_to_drive", "Nothing was sent"} {
		if !isRefusal(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %v lacks %q", err, want)
		}
	}
	if got := e.Emu.Stats().MessagesSent - before.MessagesSent; got != 0 {
		t.Errorf("%d messages sent", got)
	}
}

func header(t *testing.T, raw []byte) mail.Header {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return m.Header
}

// TestReplyToThreadsAsGmailDoes: a reply to a message in the inbox meets
// the three conditions the emulator holds Gmail's threading to, and goes
// to the sender; reply_all adds everyone but the user.
func TestReplyToThreadsAsGmailDoes(t *testing.T) {
	e := newEnv(t, compose.Config{})
	id := e.deliver(user, "Contract", []string{"Cc: Luis Ortega <luis@example.org>, " + user, "References: <draft-0@example.org>"})

	res, err := e.send(compose.Request{ReplyTo: msgRef(id), BodyText: "Signed, thanks."}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	orig := header(t, e.Message(user, id))
	h := header(t, e.Message(user, res.ID))
	if res.Subject != "Re: Contract" || h.Get("Subject") != "Re: Contract" {
		t.Errorf("subject %q", h.Get("Subject"))
	}
	if h.Get("In-Reply-To") != orig.Get("Message-Id") || h.Get("References") != "<draft-0@example.org> "+orig.Get("Message-Id") {
		t.Errorf("In-Reply-To %q, References %q", h.Get("In-Reply-To"), h.Get("References"))
	}
	if addrs(h.Get("To")) != "dana@example.org" || h.Get("Cc") != "" {
		t.Errorf("reply To %q Cc %q, want the sender only", h.Get("To"), h.Get("Cc"))
	}
	// Gmail's three conditions met: the emulator put it in the thread.
	if thread := threadIDOf(t, e, id); res.ThreadID != thread {
		t.Errorf("reply in thread %s, the original's is %s", res.ThreadID, thread)
	}

	all, err := e.send(compose.Request{ReplyTo: msgRef(id), ReplyAll: true, BodyText: "To all."}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h = header(t, e.Message(user, all.ID))
	if addrs(h.Get("To")) != "dana@example.org" || addrs(h.Get("Cc")) != "luis@example.org" {
		t.Errorf("reply all To %q Cc %q: want the sender, then the others without the user", h.Get("To"), h.Get("Cc"))
	}
	if !slices.Equal(all.Recipients, []string{"Dana Reyes <dana@example.org>", "Luis Ortega <luis@example.org>"}) {
		t.Errorf("result recipients %v", all.Recipients)
	}

	// Each default can be overridden; another subject starts a new thread.
	over, err := e.send(compose.Request{ReplyTo: msgRef(id), To: []string{"sam@example.org"}, Subject: "Other topic", BodyText: "x"}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h = header(t, e.Message(user, over.ID))
	if addrs(h.Get("To")) != "sam@example.org" || over.ThreadID == res.ThreadID {
		t.Errorf("override: To %q, thread %s (the conversation's is %s)", h.Get("To"), over.ThreadID, res.ThreadID)
	}

	// A reply to the user's own message goes to its recipients.
	mine, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "Plan", BodyText: "v1"}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.send(compose.Request{ReplyTo: msgRef(mine.ID), BodyText: "v2"}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h := header(t, e.Message(user, again.ID)); addrs(h.Get("To")) != "zoe@example.org" || again.ThreadID != mine.ThreadID {
		t.Errorf("reply to own message: To %q thread %s, want zoe@example.org in %s", h.Get("To"), again.ThreadID, mine.ThreadID)
	}
}

// addrs lists the bare addresses of a header value.
func addrs(v string) string {
	list, err := mail.ParseAddressList(v)
	if err != nil {
		return "unparsable: " + v
	}
	var out []string
	for _, a := range list {
		out = append(out, a.Address)
	}
	return strings.Join(out, ",")
}

// threadIDOf is the thread Gmail filed message id in.
func threadIDOf(t *testing.T, e *env, id string) string {
	t.Helper()
	svc, err := gm.NewService(context.Background(), option.WithHTTPClient(e.hc), option.WithEndpoint(e.URL+"/"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := svc.Users.Messages.Get("me", id).Format("minimal").Do()
	if err != nil {
		t.Fatal(err)
	}
	return m.ThreadId
}

func TestReplyAndForwardRefusals(t *testing.T) {
	e := newEnv(t, compose.Config{})
	id := e.deliver(user, "Contract", nil)
	bobs := e.deliver(other, "Bob's", nil)
	before := e.Emu.Stats()
	for _, tt := range []struct {
		name string
		req  compose.Request
		want string
	}{
		{"both", compose.Request{ReplyTo: msgRef(id), Forward: msgRef(id), To: []string{"z@example.org"}}, `"reply_to" or "forward", not both`},
		{"reply_all alone", compose.Request{ReplyAll: true, To: []string{"z@example.org"}, Subject: "x", BodyText: "x"}, `"reply_all" goes with "reply_to"`},
		{"thread_id with reply_to", compose.Request{ReplyTo: msgRef(id), ThreadID: "18f3a2b4c5d6e7f8", BodyText: "x"}, "Leave them out"},
		{"another account's message", compose.Request{ReplyTo: msgRef(bobs), BodyText: "x"}, "no Gmail message with id " + bobs + " is visible"},
		{"no such message", compose.Request{ReplyTo: msgRef("18f0000000000000"), BodyText: "x"}, "no Gmail message with id 18f0000000000000 is visible"},
		{"forward without to", compose.Request{Forward: msgRef(id)}, `"forward" needs "to"`},
		{"forward of another account's", compose.Request{Forward: msgRef(bobs), To: []string{"z@example.org"}}, "it is another account's"},
	} {
		for _, draft := range []bool{false, true} {
			_, err := e.send(tt.req, compose.Options{Draft: draft})
			if !isRefusal(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s (draft %v): %v, want %q", tt.name, draft, err, tt.want)
			}
		}
	}
	after := e.Emu.Stats()
	if after.MessagesSent != before.MessagesSent || after.DraftsCreated != before.DraftsCreated {
		t.Error("a refused reply or forward went out")
	}
}

func TestForwardQuotesAndAttaches(t *testing.T) {
	e := newEnv(t, compose.Config{})
	a, b := randomBytes(50_000), randomBytes(3)
	id := e.deliver(user, "Invoice May", nil, inFile{"invoice.pdf", "application/pdf", a}, inFile{"invoice.pdf", "application/pdf", b})

	res, err := e.send(compose.Request{Forward: msgRef(id), To: []string{"acct@example.org"}, BodyText: "For the books.",
		BodyHTML: "<p>For the books.</p>"}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Subject != "Fwd: Invoice May" || len(res.Attached) != 2 {
		t.Fatalf("subject %q, attached %+v", res.Subject, res.Attached)
	}
	h, root := goParse(t, e.Message(user, res.ID))
	if h.Get("In-Reply-To") != "" || h.Get("Subject") != "Fwd: Invoice May" {
		t.Errorf("a forward's headers: In-Reply-To %q Subject %q", h.Get("In-Reply-To"), h.Get("Subject"))
	}
	var bodies []string
	var files [][]byte
	for _, l := range root.leaves() {
		if l.Filename != "" {
			files = append(files, l.Body)
		} else {
			bodies = append(bodies, string(l.Body))
		}
	}
	// Two attachments of one name each go, byte for byte, in order.
	if len(files) != 2 || !bytes.Equal(files[0], a) || !bytes.Equal(files[1], b) {
		t.Error("the forwarded attachments differ from the original's")
	}
	text := strings.Join(bodies, "\n")
	for _, want := range []string{"For the books.", "---------- Forwarded message ---------", "From: Dana Reyes <dana@example.org>",
		"Subject: Invoice May", "the numbers are in.", "&lt;dana@example.org&gt;"} {
		if !strings.Contains(text, want) {
			t.Errorf("bodies lack %q:\n%s", want, text)
		}
	}
}

// TestGmailDownloadCutPartWay: a Gmail answer cut before Gmail has any
// byte of the message is read again in a new pass (nothing can be sent
// twice), and one that keeps failing is refused, with nothing sent.
func TestGmailDownloadCutPartWay(t *testing.T) { synctest.Test(t, testGmailDownloadCutPartWay) }

func testGmailDownloadCutPartWay(t *testing.T) {
	e := newBubbleEnv(t, compose.Config{})
	data := randomBytes(2 << 20)
	id := e.deliver(user, "Scans", nil, inFile{"scans.bin", "application/octet-stream", data})
	cut := func(times int) {
		e.Inject(emulator.Fault{Method: "GET", PathPrefix: "/gmail/v1/users/me/messages/" + id + "/attachments/", Times: times, CutResponseAfter: ptr(int64(100_000))})
	}
	req := compose.Request{To: []string{"z@example.org"}, Subject: "Scans", BodyText: "x", Attachments: []compose.Attachment{gmailAtt(id, "scans.bin")}}

	cut(1)
	res, err := e.send(req, compose.Options{})
	if err != nil {
		t.Fatalf("one cut answer: %v", err)
	}
	_, root := goParse(t, e.Message(user, res.ID))
	if l := root.leaves(); len(l) != 2 || !bytes.Equal(l[1].Body, data) {
		t.Error("the attachment sent after a retried pass differs")
	}

	before := e.Emu.Stats()
	cut(10)
	_, err = e.send(req, compose.Options{})
	for _, want := range []string{"Gmail stopped sending attachment 1 (\"scans.bin\") part-way", "Nothing was sent"} {
		if !isRefusal(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("a cut that lasts: %v, want %q", err, want)
		}
	}
	if got := e.Emu.Stats().MessagesSent - before.MessagesSent; got != 0 {
		t.Errorf("%d messages sent", got)
	}
}

// TestReplyToAMessageWithoutSender: a message without a sender has no
// one to answer: refused with nothing sent, and the reply goes once "to"
// names whom to answer.
func TestReplyToAMessageWithoutSender(t *testing.T) {
	e := newEnv(t, compose.Config{})
	d, err := e.Emu.Gmail().Deliver(user, strings.NewReader("Message-ID: <note-1@example.org>\r\nTo: "+user+"\r\nSubject: Note\r\n\r\nHello.\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	before := e.Emu.Stats()
	_, err = e.send(compose.Request{ReplyTo: msgRef(d.ID), BodyText: "Thanks."}, compose.Options{})
	if r, ok := refusal.As(err); !ok || r.Kind != "no_recipient" || !strings.Contains(r.Text, `has no sender address drivemail can reply to. Nothing was sent. Give "to"`) {
		t.Errorf("a reply to no one: %v", err)
	}
	outboxUnchanged(t, before, e.Emu.Stats())
	res, err := e.send(compose.Request{ReplyTo: msgRef(d.ID), To: []string{"dana@example.org"}, BodyText: "Thanks."}, compose.Options{})
	if err != nil || res.Subject != "Re: Note" {
		t.Fatalf("a reply with to: %+v, %v", res, err)
	}
}
