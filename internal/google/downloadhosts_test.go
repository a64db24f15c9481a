package google

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func TestParseDownloadHosts(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{in: "", want: nil},
		{in: " , ", want: nil},
		{in: "dl.google.com", want: []string{"dl.google.com"}},
		{in: "Drive2.UserContent.Google.com, files.googleapis.com", want: []string{"drive2.usercontent.google.com", "files.googleapis.com"}},
		{in: "x.googleusercontent.com", want: []string{"x.googleusercontent.com"}},
		{in: "google.com", bad: true},   // a domain itself, not a host under it
		{in: "evil.example", bad: true}, // not Google's
		{in: "googleusercontent.com.evil.example", bad: true},
		{in: "https://dl.google.com", bad: true},
		{in: "dl.google.com:443", bad: true},
		{in: "dl.google.com/path", bad: true},
		{in: "*.google.com", bad: true},
		{in: "-a.google.com", bad: true},
		{in: "a..google.com", bad: true},
		{in: strings.TrimSuffix(strings.Repeat("h.google.com,", MaxDownloadHosts), ","), want: nil},
		{in: strings.TrimSuffix(strings.Repeat("h.google.com,", MaxDownloadHosts+1), ","), bad: true},
	} {
		got, err := ParseDownloadHosts(tt.in)
		switch {
		case tt.bad && err == nil:
			t.Errorf("%q: %v, want refused", tt.in, got)
		case !tt.bad && err != nil:
			t.Errorf("%q: %v", tt.in, err)
		case !tt.bad && tt.want != nil && fmt.Sprint(got) != fmt.Sprint(tt.want):
			t.Errorf("%q: %v, want %v", tt.in, got, tt.want)
		}
		if tt.bad && err != nil && !strings.Contains(strings.ToLower(err.Error()), "google") {
			t.Errorf("%q: the refusal %q says nothing of what to give", tt.in, err)
		}
	}
}

// TestDownloadHostsExtendTheAllowlist: a host of --download-hosts is
// fetched from, with the token, over https on the default port only;
// another host, or the flag's host with an emulator, stays refused.
func TestDownloadHostsExtendTheAllowlist(t *testing.T) {
	real := Endpoints{DownloadHosts: []string{"dl2.usercontent.google.com"}}
	emu := Endpoints{Base: "http://127.0.0.1:9090", DownloadHosts: []string{"dl2.usercontent.google.com"}}
	for _, tt := range []struct {
		e    Endpoints
		url  string
		want bool
	}{
		{real, "https://dl2.usercontent.google.com/download?id=a", true},
		{real, "https://DL2.usercontent.google.com:443/download?id=a", true},
		{real, "http://dl2.usercontent.google.com/download", false},
		{real, "https://dl2.usercontent.google.com:8443/download", false},
		{real, "https://dl3.usercontent.google.com/download", false},
		{Endpoints{}, "https://dl2.usercontent.google.com/download", false},
		{emu, "https://dl2.usercontent.google.com/download", false},
	} {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		for name, check := range map[string]func(*url.URL) error{"ContentURLAllowed": tt.e.ContentURLAllowed, "TokenAllowed": tt.e.TokenAllowed} {
			if err := check(u); (err == nil) != tt.want || err != nil && !errors.Is(err, ErrTokenHost) {
				t.Errorf("%s(%q) with %v = %v, want allowed %v", name, tt.url, tt.e.DownloadHosts, err, tt.want)
			}
		}
	}
}
