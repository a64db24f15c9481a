package google

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"golang.org/x/oauth2"
)

func TestTokenAllowed(t *testing.T) {
	real := Endpoints{}
	emu := Endpoints{Base: "http://127.0.0.1:9090"}
	cases := []struct {
		e    Endpoints
		url  string
		want bool
	}{
		{real, "https://www.googleapis.com/drive/v3/files/x?alt=media", true},
		{real, "https://www.googleapis.com/upload/drive/v3/files?uploadType=resumable&upload_id=1", true},
		{real, "https://gmail.googleapis.com/upload/gmail/v1/users/me/messages/send?upload_id=1", true},
		{real, "https://sheets.googleapis.com/v4/spreadsheets/x", true},
		{real, "https://docs.google.com/spreadsheets/export?id=x&exportFormat=csv", true},
		{real, "https://DOCS.google.com:443/feeds/download/documents/export/Export?id=x", true},
		{real, "https://oauth2.googleapis.com/token", true},
		{real, "http://docs.google.com/spreadsheets/export", false},    // not https
		{real, "https://docs.google.com:8443/x", false},                // another port
		{real, "https://docs.google.com.evil.example/x", false},        // look-alike
		{real, "https://evil.example/docs.google.com", false},          // the host is what counts
		{real, "https://user@docs.google.com/x", false},                // userinfo in a URL
		{real, "https://doc-0k-sheets.googleusercontent.com/x", false}, // signed content: never with the token
		{real, "https://storage.googleapis.com/bucket/x", false},       // Google, but not ours to call
		{real, "http://127.0.0.1:9090/drive/v3/files", false},
		{emu, "http://127.0.0.1:9090/drive/v3/files", true},
		{emu, "http://127.0.0.1:9090/upload/gmail/v1/users/me/messages/send?upload_id=1", true},
		{emu, "http://127.0.0.1:9091/upload/gmail/v1/users/me/messages/send?upload_id=1", false},
		{emu, "https://127.0.0.1:9090/drive/v3/files", false},
		{emu, "http://localhost:9090/drive/v3/files", true}, // the same listener under its other loopback name (its content host)
		{emu, "http://localhost.evil:9090/drive/v3/files", false},
		{emu, "https://www.googleapis.com/drive/v3/files", false},
	}
	for _, c := range cases {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		err = c.e.TokenAllowed(u)
		if (err == nil) != c.want {
			t.Errorf("endpoints %q, %s: allowed = %v, want %v", c.e.Base, c.url, err == nil, c.want)
		}
		if err != nil && (!errors.Is(err, ErrTokenHost) || !strings.Contains(err.Error(), u.Host)) {
			t.Errorf("%s: the error %q does not name the host", c.url, err)
		}
	}
}

func TestSignedContentHost(t *testing.T) {
	for raw, want := range map[string]bool{
		"https://doc-0k-1c-sheets.googleusercontent.com/export/x": true,
		"https://drive.usercontent.google.com/download?id=x":      true,
		"http://doc-0k-1c-sheets.googleusercontent.com/export/x":  false,
		"https://googleusercontent.com.evil.example/x":            false,
		"https://evilgoogleusercontent.com/x":                     false,
		"https://x.googleusercontent.com:8443/x":                  false,
	} {
		u, _ := url.Parse(raw)
		if got := signedContentHost(u); got != want {
			t.Errorf("signedContentHost(%s) = %v, want %v", raw, got, want)
		}
	}
}

// recorder is a listener that notes every request's Authorization.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Method+" "+req.URL.Path+" auth="+req.Header.Get("Authorization"))
		r.mu.Unlock()
		io.WriteString(w, "stolen")
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// TestGuardTokenStopsEveryHop: under an oauth2.Transport as drivemail
// builds it, neither a first request nor a redirect hop reaches a
// foreign host, and the error names that host.
func TestGuardTokenStopsEveryHop(t *testing.T) {
	foreign := newRecorder(t)
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, foreign.srv.URL+"/loot", http.StatusFound)
		case "/redirect-home":
			http.Redirect(w, r, "/api", http.StatusFound)
		default:
			io.WriteString(w, r.Header.Get("Authorization"))
		}
	}))
	defer fake.Close()
	e := Endpoints{Base: fake.URL}
	hc := &http.Client{Transport: &oauth2.Transport{
		Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "ya29.secret"}),
		Base:   e.GuardToken(nil),
	}}

	resp, err := hc.Get(fake.URL + "/redirect-home")
	if err != nil {
		t.Fatalf("a redirect within Google: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "Bearer ya29.secret" {
		t.Errorf("Google's own hop got %q, want the token", body)
	}
	for _, u := range []string{foreign.srv.URL + "/direct", fake.URL + "/redirect"} {
		resp, err := hc.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET %s: succeeded; want it stopped", u)
			continue
		}
		if !errors.Is(err, ErrTokenHost) || !strings.Contains(err.Error(), strings.TrimPrefix(foreign.srv.URL, "http://")) ||
			strings.Contains(err.Error(), "ya29") {
			t.Errorf("GET %s: error %q; want one that names the foreign host and no token", u, err)
		}
	}
	if got := foreign.requests(); len(got) != 0 {
		t.Errorf("the foreign listener was reached: %q", got)
	}
}

// TestContentURLAllowed: a download's content is fetched only from
// Google's download hosts over https (or a signed googleusercontent URL),
// or from the emulator's own listener under either loopback name; never
// another host, port or scheme, nor a URL with credentials.
func TestContentURLAllowed(t *testing.T) {
	real := Endpoints{}
	emu := Endpoints{Base: "http://127.0.0.1:9090"}
	tests := []struct {
		e    Endpoints
		url  string
		want bool
	}{
		{real, "https://www.googleapis.com/drive/v3/files/abc?alt=media&source=downloadUrl", true},
		{real, "https://drive.usercontent.google.com/download?id=abc&export=download", true},
		{real, "https://doc-0s-sheets.googleusercontent.com/export/x", true},
		{real, "http://www.googleapis.com/drive/v3/files/abc", false},
		{real, "https://www.googleapis.com:8443/x", false},
		{real, "https://evil.example/googleusercontent.com", false},
		{real, "https://googleusercontent.com.evil.example/x", false},
		{real, "https://user:pw@www.googleapis.com/x", false},
		{real, "https://docs.google.com/spreadsheets/export?id=abc", false},
		{emu, "http://127.0.0.1:9090/download?id=a&op=b", true},
		{emu, "http://localhost:9090/download?id=a&op=b", true},
		{emu, "http://[::1]:9090/download", true},
		{emu, "http://localhost:9091/download", false},
		{emu, "https://localhost:9090/download", false},
		{emu, "http://example.com:9090/download", false},
		{emu, "https://www.googleapis.com/drive/v3/files/abc", false},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		err = tt.e.ContentURLAllowed(u)
		if (err == nil) != tt.want || (err != nil && !errors.Is(err, ErrTokenHost)) {
			t.Errorf("ContentURLAllowed(%q) against %q = %v, want allowed %v", tt.url, tt.e.Base, err, tt.want)
		}
	}
}
