package google

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in, want, errPart string
	}{
		{"", "", ""},
		{"http://127.0.0.1:9090", "http://127.0.0.1:9090", ""},
		{"http://127.0.0.1:9090/", "http://127.0.0.1:9090", ""},
		{"https://emu.example", "https://emu.example", ""},
		{"127.0.0.1:9090", "", "http(s) origin"},
		{"ftp://x", "", "http(s) origin"},
		{"http://x/drive/v3", "", "without a path"},
		{"http://x?a=b", "", "without a path"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if tt.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errPart) {
				t.Errorf("Parse(%q) err = %v, want it to mention %q", tt.in, err, tt.errPart)
			}
			continue
		}
		if err != nil || got.Base != tt.want {
			t.Errorf("Parse(%q) = %q, %v; want %q", tt.in, got.Base, err, tt.want)
		}
	}
}

// The client libraries build upload URLs from the endpoint's origin and
// API paths from its path: every API must land on the emulator's origin
// at Google's own paths.
func TestEmulatedEndpointsShareOneOrigin(t *testing.T) {
	e, err := Parse("http://127.0.0.1:9090")
	if err != nil {
		t.Fatal(err)
	}
	if !e.Emulated() {
		t.Fatal("an emulator base is not Emulated")
	}
	for name, got := range map[string]string{
		"auth":     e.OAuth2().AuthURL,
		"token":    e.OAuth2().TokenURL,
		"userinfo": e.UserinfoURL(),
		"revoke":   e.RevokeURL(),
	} {
		if !strings.HasPrefix(got, "http://127.0.0.1:9090/") {
			t.Errorf("%s = %q, not on the emulator", name, got)
		}
	}
	if n := len(e.DriveOptions()) + len(e.GmailOptions()) + len(e.SheetsOptions()); n != 3 {
		t.Errorf("emulated endpoints give %d client options, want one per API", n)
	}
	var real Endpoints
	if real.Emulated() || real.DriveOptions() != nil || !strings.HasPrefix(real.OAuth2().TokenURL, "https://oauth2.googleapis.com/") {
		t.Errorf("the zero Endpoints is not Google itself: %+v", real.OAuth2())
	}
}

// The Picker's script and every origin a pick page lets in are Google's,
// or the emulator's alone when there is one.
func TestPickerSources(t *testing.T) {
	var real Endpoints
	if got := real.PickerScriptURL(); got != "https://apis.google.com/js/api.js" {
		t.Errorf("Google's Picker script = %q", got)
	}
	if src := real.PickerSources(); len(src["script-src"]) != 1 || src["script-src"][0] != "https://apis.google.com" || len(src["frame-src"]) == 0 {
		t.Errorf("Google's Picker sources = %v", src)
	}
	e, err := Parse("http://127.0.0.1:9090")
	if err != nil {
		t.Fatal(err)
	}
	if got := e.PickerScriptURL(); got != "http://127.0.0.1:9090/js/api.js" {
		t.Errorf("the emulator's Picker script = %q", got)
	}
	for directive, origins := range e.PickerSources() {
		if len(origins) != 1 || origins[0] != e.Base {
			t.Errorf("%s lets in %v, want the emulator's origin alone", directive, origins)
		}
	}
}
