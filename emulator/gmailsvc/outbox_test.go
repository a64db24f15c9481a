package gmailsvc

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
	gmail "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// get fetches a path of the fixture's server.
func (f *fixture) get(path string) (*http.Response, []byte) {
	f.t.Helper()
	resp, err := http.Get(f.srv.URL + path)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// doc is a parsed page.
type doc struct{ root *html.Node }

func parseHTML(t *testing.T, b []byte) doc {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return doc{root}
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attrOf(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

// all returns the elements under n with tag (any tag if "") and class (any if "").
func all(n *html.Node, tag, class string) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && (tag == "" || d.Data == tag) && (class == "" || hasClass(d, class)) {
			out = append(out, d)
		}
	}
	return out
}

func one(t *testing.T, n *html.Node, tag, class string) *html.Node {
	t.Helper()
	found := all(n, tag, class)
	if len(found) != 1 {
		t.Fatalf("%d <%s class=%q>, want 1", len(found), tag, class)
	}
	return found[0]
}

func textOf(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return strings.TrimSpace(b.String())
}

func TestOutboxShowsMessageWithInlineImageAndAttachment(t *testing.T) {
	f := newFixture(t)
	svc := f.sender(ann)
	png := append([]byte("\x89PNG\r\n\x1a\n"), pattern(300)...)
	pdf := append([]byte("%PDF-1.4\n"), pattern(2000)...)
	m := basic("Q3 <report> & chart")
	m.cc, m.bcc = "carol@example.com", "dave@example.com"
	m.html = `<p>See the chart:</p><img alt="chart" src="cid:chart.png"><script>alert(1)</script>`
	m.inline = []file{{"chart.png", "image/png", png}}
	m.attach = []file{{"report.pdf", "application/pdf", pdf}}
	raw := m.build()
	sent, err := send(svc, bytes.NewReader(raw), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := send(svc, bytes.NewReader(basic("second").build()), ""); err != nil {
		t.Fatal(err)
	}

	resp, body := f.get("/_emulator/outbox")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("outbox: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Errorf("outbox CSP %q", csp)
	}
	page := parseHTML(t, body)
	if n := len(all(page.root, "article", "message")); n != 2 {
		t.Fatalf("%d messages on the page, want 2", n)
	}
	if len(all(page.root, "script", "")) != 0 {
		t.Fatal("the outbox page carries a script")
	}
	var art *html.Node
	for _, a := range all(page.root, "article", "message") {
		if attrOf(a, "id") == "msg-"+sent.Id {
			art = a
		}
	}
	if art == nil || attrOf(art, "data-kind") != "sent" || attrOf(art, "data-thread-id") != sent.ThreadId {
		t.Fatal("the sent message is not on the page under its id")
	}
	for class, want := range map[string]string{
		"subject": "Q3 <report> & chart",
		"from":    "Ann <" + ann + ">",
		"to":      bob,
		"cc":      "carol@example.com",
		"bcc":     "dave@example.com",
		"date":    "Mon, 04 May 2026 10:00:00 +0000",
	} {
		if got := textOf(one(t, art, "", class)); got != want {
			t.Errorf(".%s = %q, want %q", class, got, want)
		}
	}
	if attrOf(one(t, art, "dd", "size"), "data-bytes") != strconv.Itoa(len(raw)) {
		t.Errorf("size %s, want %d", attrOf(one(t, art, "dd", "size"), "data-bytes"), len(raw))
	}
	if got := textOf(one(t, art, "pre", "text-body")); got != "Hello Q3 <report> & chart" {
		t.Errorf("text body %q", got)
	}

	// The HTML body: a sandboxed frame whose document loads the image from the emulator.
	frame := one(t, art, "iframe", "html-body")
	if sb, ok := attrValue(frame, "sandbox"); !ok || sb != "" {
		t.Errorf("iframe sandbox=%q present=%v, want an empty sandbox (no scripts, no same origin)", sb, ok)
	}
	resp, body = f.get(attrOf(frame, "src"))
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != 200 || !strings.Contains(csp, "sandbox") || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script") {
		t.Errorf("HTML body: %d CSP %q", resp.StatusCode, csp)
	}
	img := one(t, parseHTML(t, body).root, "img", "")
	src := attrOf(img, "src")
	if !strings.HasPrefix(src, "/_emulator/messages/"+sent.Id+"/parts/") {
		t.Fatalf("img src %q: cid: not resolved to the part route", src)
	}
	resp, got := f.get(src)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || !bytes.Equal(got, png) {
		t.Errorf("inline image: %d %s, bytes equal %v", resp.StatusCode, resp.Header.Get("Content-Type"), bytes.Equal(got, png))
	}
	inline := one(t, art, "li", "inline-part")
	if attrOf(inline, "data-content-id") != "chart.png" || attrOf(inline, "data-mime-type") != "image/png" {
		t.Errorf("inline part listed as %v", inline.Attr)
	}

	// The attachment: a download link with name, type and size.
	att := one(t, art, "li", "attachment")
	if attrOf(att, "data-filename") != "report.pdf" || attrOf(att, "data-mime-type") != "application/pdf" || attrOf(att, "data-size") != strconv.Itoa(len(pdf)) {
		t.Errorf("attachment listed as %v", att.Attr)
	}
	link := one(t, att, "a", "download")
	resp, got = f.get(attrOf(link, "href"))
	if resp.StatusCode != 200 || !bytes.Equal(got, pdf) || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") ||
		!strings.Contains(resp.Header.Get("Content-Disposition"), "report.pdf") {
		t.Errorf("download: %d %q, bytes equal %v", resp.StatusCode, resp.Header.Get("Content-Disposition"), bytes.Equal(got, pdf))
	}

	// The original message, byte for byte.
	resp, got = f.get(attrOf(one(t, art, "a", "raw"), "href"))
	if resp.StatusCode != 200 || !bytes.Equal(got, raw) {
		t.Error("the original message link does not serve the message as sent")
	}
}

func attrValue(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func TestOutboxJSONAndDrafts(t *testing.T) {
	f := newFixture(t)
	m := basic("with file")
	m.attach = []file{{"notes.txt", "text/plain", []byte("n")}}
	sent, err := send(f.sender(ann), bytes.NewReader(m.build()), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := send(f.sender(bob), bytes.NewReader(msg{from: bob, to: ann, subject: "from bob", text: "x"}.build()), ""); err != nil {
		t.Fatal(err)
	}
	_, body := f.get("/_emulator/messages?user=" + ann)
	var out struct{ Messages []Summary }
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 1 {
		t.Fatalf("%d messages for ann, want 1", len(out.Messages))
	}
	s := out.Messages[0]
	if s.ID != sent.Id || s.Kind != "sent" || s.Subject != "with file" || s.To[0] != bob || len(s.Files) != 1 || s.Files[0].Filename != "notes.txt" || s.Files[0].Inline {
		t.Errorf("summary = %+v", s)
	}
	_, body = f.get("/_emulator/messages")
	if err := json.Unmarshal(body, &out); err != nil || len(out.Messages) != 2 {
		t.Errorf("all users: %d messages (%v)", len(out.Messages), err)
	}
	// A message without attachments lists none as [], as every other list.
	_, body = f.get("/_emulator/messages?user=" + bob)
	var raw struct{ Messages []map[string]json.RawMessage }
	if err := json.Unmarshal(body, &raw); err != nil || len(raw.Messages) != 1 {
		t.Fatalf("bob's messages: %s (%v)", body, err)
	}
	for _, k := range []string{"files", "to", "cc", "bcc", "label_ids"} {
		if v := string(raw.Messages[0][k]); !strings.HasPrefix(v, "[") {
			t.Errorf("%s is %s, want a list", k, v)
		}
	}
	resp, _ := f.get("/_emulator/messages/nope/raw")
	if resp.StatusCode != 404 {
		t.Errorf("unknown raw: %d", resp.StatusCode)
	}
	resp, _ = f.get("/_emulator/messages/" + sent.Id + "/parts/9")
	if resp.StatusCode != 404 {
		t.Errorf("unknown part: %d", resp.StatusCode)
	}
	resp, _ = f.get("/_emulator/messages/" + sent.Id + "/html")
	if resp.StatusCode != 404 {
		t.Errorf("HTML of a text-only message: %d", resp.StatusCode)
	}

	// Drafts are on the page too, marked as drafts.
	d, err := f.sender(ann).Users.Drafts.Create("me", &gmail.Draft{}).
		Media(bytes.NewReader(msg{from: ann, subject: "unsent", text: "x"}.build()), googleapi.ContentType("message/rfc822")).Do()
	if err != nil {
		t.Fatal(err)
	}
	_, body = f.get("/_emulator/outbox")
	drafts := all(parseHTML(t, body).root, "article", "draft")
	if len(drafts) != 1 || attrOf(drafts[0], "data-draft-id") != d.Id || attrOf(drafts[0], "data-kind") != "draft" {
		t.Errorf("%d drafts on the page, want the one created", len(drafts))
	}

	// An empty outbox says so.
	empty := newFixture(t)
	_, body = empty.get("/_emulator/outbox")
	if !strings.Contains(string(body), `id="empty"`) {
		t.Error("an empty outbox does not say it is empty")
	}
}

// TestOutboxLeavesOutReceivedMail: mail delivered to an inbox (as a seed's
// is) is not on the sent-mail page or in its JSON; a message sent to
// oneself, which lands in the inbox too, is, as sent.
func TestOutboxLeavesOutReceivedMail(t *testing.T) {
	f := newFixture(t)
	for _, subject := range []string{"Invoice", "Kickoff"} {
		if _, err := f.gmail.Deliver(ann, bytes.NewReader(fromDana(subject).build())); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.gmail.Messages(""); len(got) != 0 {
		t.Errorf("received mail listed as sent: %+v", got)
	}
	_, body := f.get("/_emulator/outbox")
	if !strings.Contains(string(body), `id="empty"`) || len(all(parseHTML(t, body).root, "article", "")) != 0 {
		t.Errorf("the sent-mail page shows received mail:\n%s", body)
	}
	sent, err := send(f.sender(ann), bytes.NewReader(msg{from: ann, to: ann, subject: "note to self", text: "x"}.build()), "")
	if err != nil {
		t.Fatal(err)
	}
	got := f.gmail.Messages(ann)
	if len(got) != 1 || got[0].ID != sent.Id || got[0].Kind != "sent" || !slices.Contains(got[0].LabelIDs, "SENT") || !slices.Contains(got[0].LabelIDs, "INBOX") {
		t.Errorf("after a send to oneself the outbox lists %+v, want that one message, sent, in SENT and INBOX", got)
	}
}

// A draft's link (Gmail's /mail/u/EMAIL/#drafts/…) opens the sent-mail
// page, where drafts are listed, instead of a 404.
func TestGmailWebPagesLeadToTheOutbox(t *testing.T) {
	mux := http.NewServeMux()
	New(core.Deps{}).registerOutbox(mux)
	for _, path := range []string{"/mail/", "/mail/u/demo@example.com/"} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusFound || rec.Header().Get("Location") != "/_emulator/outbox" {
			t.Errorf("GET %s: %d to %q, want 302 to /_emulator/outbox", path, rec.Code, rec.Header().Get("Location"))
		}
	}
}
