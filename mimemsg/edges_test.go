package mimemsg

import (
	"strings"
	"testing"
)

func TestDomainEdges(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	// 253 characters: three labels of 63, one of 59 and one of 1.
	domain253 := strings.Repeat(label63+".", 3) + strings.Repeat("b", 59) + ".c"
	if len(domain253) != 253 {
		t.Fatalf("test domain is %d long", len(domain253))
	}
	tests := []struct {
		domain string
		ok     bool
	}{
		{label63 + ".com", true},
		{label63 + "a.com", false},
		{domain253, true},
		{"x" + domain253, false},
		{"a-b.example", true},
		{"a.b-", false},
		{"xn--r8jz45g.jp", true},
		{"例え.jp", true},
		{"a.b", true},
		{"a", false},
	}
	for _, tt := range tests {
		if got := domainProblem(tt.domain) == ""; got != tt.ok {
			t.Errorf("domain %q (%d) accepted %v, want %v: %s", tt.domain, len(tt.domain), got, tt.ok, domainProblem(tt.domain))
		}
	}
}

func TestMsgIDEdges(t *testing.T) {
	at := func(n int) string { return "<" + strings.Repeat("a", n-4) + "@b>" } // n bytes with brackets
	if _, err := normMsgID("in_reply_to", at(maxMsgID)); err != nil {
		t.Errorf("a msg-id of %d bytes: %v", maxMsgID, err)
	}
	if _, err := normMsgID("in_reply_to", at(maxMsgID+1)); err == nil {
		t.Errorf("a msg-id of %d bytes passed", maxMsgID+1)
	}
	for _, bad := range []string{"<a@b", "a@", "@b", "<a b@c>", "<a@b>>", "<a@b\x7f>", "<é@b>"} {
		if _, err := normMsgID("in_reply_to", bad); err == nil && bad != "<a@b" {
			t.Errorf("%q passed", bad)
		}
	}
	if id, err := normMsgID("in_reply_to", " <a@b"); err != nil || id != "<a@b>" {
		t.Errorf("a missing closing bracket is not tolerated: %q %v", id, err)
	}
}

func TestLinkURLEdges(t *testing.T) {
	prefix := "https://x.example/"
	ok := prefix + strings.Repeat("a", maxLinkURL-len(prefix))
	if err := checkLinkURL(ok); err != nil {
		t.Errorf("a URL of %d bytes: %v", len(ok), err)
	}
	if err := checkLinkURL(ok + "a"); err == nil {
		t.Errorf("a URL of %d bytes passed", len(ok)+1)
	}
}

func TestAddressInputEdge(t *testing.T) {
	long := strings.Repeat("a", maxFieldInput-len("@example.com")) + "@example.com"
	// At the input limit the list is parsed (and refused for its long
	// local part, not for its length); one byte more is refused unread.
	_, err := ParseAddresses("to", []string{long})
	if err == nil || !strings.Contains(err.Error(), "before the @") {
		t.Errorf("at the limit: %v", err)
	}
	_, err = ParseAddresses("to", []string{"a" + long})
	if err == nil || !strings.Contains(err.Error(), "list is too long") {
		t.Errorf("past the limit: %v", err)
	}
}

func TestBodyNormalisation(t *testing.T) {
	m := base()
	m.Text = "bad \xff byte\rold mac\r\nwindows\nunix"
	m.HTML = "<p>\xfe</p>"
	raw, _ := build(t, m)
	_, root := parseGo(t, raw)
	leaves := root.leaves()
	if got := string(leaves[0].body); got != "bad \uFFFD byte\r\nold mac\r\nwindows\r\nunix" {
		t.Errorf("text = %q", got)
	}
	if got := string(leaves[1].body); got != "<p>\uFFFD</p>" {
		t.Errorf("html = %q", got)
	}
	if strings.Contains(string(raw), "\xff") {
		t.Error("an invalid byte reached the message")
	}
}

func TestTextEncodingChoice(t *testing.T) {
	tests := []struct {
		text, cte string
	}{
		{"plain English", "quoted-printable"},
		{"Grüße aus Köln, wie geht's?", "quoted-printable"},
		{"Привет, как дела?", "base64"},
		{"日本語のテキスト", "base64"},
	}
	for _, tt := range tests {
		m := base()
		m.Text = tt.text
		raw, _ := build(t, m)
		if !strings.Contains(string(raw), "Content-Transfer-Encoding: "+tt.cte) {
			t.Errorf("%q not sent as %s", tt.text, tt.cte)
		}
		_, root := parseGo(t, raw)
		if string(root.body) != tt.text {
			t.Errorf("%q came back as %q", tt.text, root.body)
		}
	}
}
