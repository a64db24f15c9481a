package clientfile

import (
	"errors"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/internal/refusal"
)

// TestWordingRefusal: each failed fetch gets its kind and a sentence
// naming the file, what became of the work, and what to do; a file past
// the limit and any other error are left to the caller.
func TestWordingRefusal(t *testing.T) {
	w := Wording{File: "the file", Done: "Nothing was saved.", Instead: "Or attach it by id."}
	tests := []struct {
		err  error
		kind refusal.Kind
		says string
	}{
		{&Error{Failure: Expired, Status: 403}, KindExpired, "The download link of the file has expired or was withdrawn (its host refused it). Nothing was saved. " + AttachAgain},
		{&Error{Failure: HostNotAllowed, Host: "evil.example"}, KindRefused, `(host "evil.example" is not on the allowlist). Nothing was saved. Pass the file object exactly as the client gave it. Or attach it by id.`},
		{&Error{Failure: NotHTTPS}, KindRefused, "(not an https URL)"},
		{&Error{Failure: PrivateAddress}, KindRefused, "public address"},
		{&Error{Failure: TooManyRedirects}, KindRefused, "too many redirects"},
		{&Error{Failure: BadURL}, KindRefused, "not a download URL"},
		{&Error{Failure: Stalled}, KindStalled, "stopped sending it, or sent it too slowly. Nothing was saved. Try again in a minute; if it fails again, ask the user"},
		{&Error{Failure: TooSlow}, KindStalled, "too slowly"},
		{&Error{Failure: Unavailable, Status: 503}, KindUnavailable, "The host of the file failed while it was fetched. Nothing was saved. Try again"},
		{&Error{Failure: Truncated}, KindUnavailable, "failed while it was fetched"},
	}
	for _, tt := range tests {
		r := w.Refusal(tt.err)
		if r == nil || r.Kind != tt.kind || !strings.Contains(r.Text, tt.says) || !errors.Is(r, tt.err) {
			t.Errorf("%v: %+v; want %s saying %q", tt.err, r, tt.kind, tt.says)
		}
	}
	if r := w.Refusal(&Error{Failure: TooLarge, Limit: 10}); r != nil {
		t.Errorf("TooLarge: %v; want nil, the caller's to word", r)
	}
	if r := w.Refusal(errors.New("other")); r != nil {
		t.Errorf("another error: %v; want nil", r)
	}
	if r := (Wording{File: "f"}).Refusal(&Error{Failure: Expired}); !strings.Contains(r.Text, "(its host refused it). Ask") {
		t.Errorf("no Done: %q", r.Text)
	}
}

func TestURLName(t *testing.T) {
	for in, want := range map[string]string{
		"https://files.oaiusercontent.com/a/report.pdf":            "report.pdf",
		"https://files.oaiusercontent.com/a/report.pdf?sig=x":      "report.pdf",
		"https://files.oaiusercontent.com/a/report.pdf#page=2":     "report.pdf",
		"https://files.oaiusercontent.com/a/report.pdf?s=1#p":      "report.pdf",
		"https://files.oaiusercontent.com/file-6a5b4c3d2e1f":       "",
		"https://files.oaiusercontent.com/a/report%2Epdf":          "",
		"https://files.oaiusercontent.com/a/x.pdf:Zone.Identifier": "",
		"https://files.oaiusercontent.com/":                        "",
		"https://files.oaiusercontent.com":                         "",
		"https://files.oaiusercontent.com?name=a.pdf":              "",
		"https://files.oaiusercontent.com/a/..":                    "",
	} {
		if got := URLName(in); got != want {
			t.Errorf("URLName(%q) = %q, want %q", in, got, want)
		}
	}
}
