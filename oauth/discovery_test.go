package oauth_test

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/drivemail/drivemail/oauth/cimd"
)

func request(t *testing.T, method, u string, headers map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// Every discovery URL a client tries answers with the same document, to
// GET and HEAD, whatever extra headers come along, cross-origin, with a
// short cache lifetime; a browser's preflight is answered.
func TestDiscoveryURLs(t *testing.T) {
	h := newHarness(t, options{})
	docs := map[string]string{ // path → the document it must equal
		"/.well-known/openid-configuration":         "/.well-known/oauth-authorization-server",
		"/mcp/.well-known/oauth-protected-resource": "/.well-known/oauth-protected-resource",
		"/.well-known/oauth-protected-resource/mcp": "/.well-known/oauth-protected-resource",
		"/.well-known/oauth-authorization-server":   "/.well-known/oauth-authorization-server",
		"/.well-known/oauth-protected-resource":     "/.well-known/oauth-protected-resource",
	}
	// Claude sends mcp-protocol-version on well-known fetches (claude-ai-mcp#764).
	extra := map[string]string{"MCP-Protocol-Version": "2025-11-25", "Accept": "application/json", "Origin": "http://localhost:6274", "X-Unknown": "1"}
	for path, same := range docs {
		resp, body := request(t, http.MethodGet, h.srv.URL+path, extra, "")
		_, want := request(t, http.MethodGet, h.srv.URL+same, nil, "")
		if resp.StatusCode != http.StatusOK || body != want || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s: %d %s %q, want the document at %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), body, same)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Cache-Control") != "public, max-age=300" {
			t.Errorf("GET %s: CORS %q, Cache-Control %q", path, resp.Header.Get("Access-Control-Allow-Origin"), resp.Header.Get("Cache-Control"))
		}
		head, headBody := request(t, http.MethodHead, h.srv.URL+path, extra, "")
		if head.StatusCode != http.StatusOK || headBody != "" || head.Header.Get("Content-Length") != strconv.Itoa(len(want)) {
			t.Errorf("HEAD %s: %d, body %q, length %q", path, head.StatusCode, headBody, head.Header.Get("Content-Length"))
		}
		pre, _ := request(t, http.MethodOptions, h.srv.URL+path, map[string]string{"Origin": "http://localhost:6274",
			"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "mcp-protocol-version"}, "")
		if pre.StatusCode != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != "*" ||
			!strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "MCP-Protocol-Version") {
			t.Errorf("preflight %s: %d %v", path, pre.StatusCode, pre.Header)
		}
		if post, _ := request(t, http.MethodPost, h.srv.URL+path, nil, ""); post.StatusCode != http.StatusMethodNotAllowed || post.Header.Get("Allow") == "" {
			t.Errorf("POST %s: %d, want 405 with Allow", path, post.StatusCode)
		}
	}
}

// The root aliases /register, /authorize and /token work as the /oauth/
// endpoints do: a client that found no metadata signs in through them.
func TestRootAliases(t *testing.T) {
	h := newHarness(t, options{})
	resp, body := request(t, http.MethodPost, h.srv.URL+"/register", map[string]string{"Content-Type": "application/json"},
		`{"redirect_uris":["http://127.0.0.1/callback"],"token_endpoint_auth_method":"none"}`)
	var reg map[string]any
	json.Unmarshal([]byte(body), &reg)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /register: %d %s", resp.StatusCode, body)
	}
	a := h.newAuthRequest(str(reg, "client_id"))
	authURL := strings.Replace(a.url(h.base), "/oauth/authorize?", "/authorize?", 1)
	back := newBrowser(t).signIn(h, authURL)
	form := url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")}, "client_id": {a.clientID},
		"redirect_uri": {a.redirectURI}, "code_verifier": {a.verifier}}
	resp, body = request(t, http.MethodPost, h.srv.URL+"/token", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, form.Encode())
	var tok map[string]any
	json.Unmarshal([]byte(body), &tok)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /token: %d %s", resp.StatusCode, body)
	}
	if c, _, _ := h.call(str(tok, "access_token")); c != http.StatusOK {
		t.Fatalf("the token from /token: %d", c)
	}
}

// The browser-based Inspector calls registration and the token endpoint
// cross-origin: their preflight names the headers it sends.
func TestTokenAndRegistrationPreflight(t *testing.T) {
	h := newHarness(t, options{})
	for _, path := range []string{"/oauth/token", "/oauth/register", "/token", "/register", "/oauth/revoke"} {
		resp, _ := request(t, http.MethodOptions, h.srv.URL+path, map[string]string{"Origin": "http://localhost:6274",
			"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type, mcp-protocol-version"}, "")
		allow := resp.Header.Get("Access-Control-Allow-Headers")
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "*" ||
			!strings.Contains(allow, "Content-Type") || !strings.Contains(allow, "MCP-Protocol-Version") ||
			!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") {
			t.Errorf("preflight %s: %d %v", path, resp.StatusCode, resp.Header)
		}
	}
}

// Client metadata documents at the token endpoint: a document that cannot
// be had is the publisher's problem and says so; fetches for one address
// are counted and, past the limit, refused as drivemail's own (503) so the
// client retries rather than forgetting its authorization.
func TestMetadataDocumentsAtTheTokenEndpoint(t *testing.T) {
	d := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }))
	t.Cleanup(d.Close)
	h := newHarness(t, options{fetchLim: 2, cimd: cimd.New(cimd.Config{AllowLoopback: true, RootCAs: rootsOf(d)})})
	token := func(clientID string) (int, map[string]any) {
		return h.tokenRequest(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"dm_rt_x"}, "client_id": {clientID}})
	}
	status, body := token(d.URL + "/gone.json")
	wantTokenError(t, status, body, http.StatusUnauthorized, "invalid_client", "metadata document")
	if !strings.Contains(str(body, "error_description"), "publisher") || !strings.Contains(str(body, "error_description"), "404") {
		t.Fatalf("the refusal does not name the document's answer and whose it is: %v", body)
	}
	token(d.URL + "/gone.json") // remembered: not fetched, not counted
	token(d.URL + "/second.json")
	status, body = token(d.URL + "/third.json")
	wantTokenError(t, status, body, http.StatusServiceUnavailable, "temporarily_unavailable", "at most 2 a minute")
	h.clock.Advance(60e9)
	status, body = token(d.URL + "/third.json")
	wantTokenError(t, status, body, http.StatusUnauthorized, "invalid_client", "404")
}

func rootsOf(srv *httptest.Server) *x509.CertPool {
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	return roots
}

// In demo mode a client metadata document served over http on this
// machine works, so the flow can be tried without publishing one.
func TestDemoAllowsLoopbackMetadataDocuments(t *testing.T) {
	var self string
	doc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"client_id": self + r.URL.Path, "client_name": "Local App",
			"redirect_uris": []string{"http://127.0.0.1/cb"}})
	}))
	t.Cleanup(doc.Close)
	self = doc.URL
	demo := newHarness(t, options{demo: true})
	a := demo.newAuthRequest(doc.URL + "/client.json")
	a.redirectURI = "http://127.0.0.1:9999/cb"
	p := newBrowser(t).get(a.url(demo.base))
	consentForm(t, p)
	if !strings.Contains(p.body, "Local App") {
		t.Fatalf("consent page: %.400s", p.body)
	}
	strict := newHarness(t, options{})
	a = strict.newAuthRequest(doc.URL + "/client.json")
	a.redirectURI = "http://127.0.0.1:9999/cb"
	assertErrorPage(t, newBrowser(t).get(a.url(strict.base)), http.StatusBadRequest, "not registered")
}

// TestDemoFetchesLocalDocumentsOnlyForLocalCallers: a demo that listens
// beyond loopback (--demo-public) still fetches a document on its own
// machine only for a caller on that machine; for anyone else it is the
// public-address refusal, and nothing is fetched.
func TestDemoFetchesLocalDocumentsOnlyForLocalCallers(t *testing.T) {
	const from = "X-Test-Client-Address" // the address the test claims to call from
	var self string
	var fetched atomic.Int32
	doc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"client_id": self + r.URL.Path, "client_name": "Local App",
			"redirect_uris": []string{"http://127.0.0.1/cb"}})
	}))
	t.Cleanup(doc.Close)
	self = doc.URL
	demo := newHarness(t, options{demo: true, clientIP: func(r *http.Request) string {
		if a := r.Header.Get(from); a != "" {
			return a
		}
		return "127.0.0.1"
	}})
	open := func(caller, path string) page {
		a := demo.newAuthRequest(doc.URL + path)
		a.redirectURI = "http://127.0.0.1:9999/cb"
		req, _ := http.NewRequest(http.MethodGet, a.url(demo.base), nil)
		if caller != "" {
			req.Header.Set(from, caller)
		}
		return newBrowser(t).do(req)
	}
	assertErrorPage(t, open("203.0.113.50", "/remote-first.json"), http.StatusBadRequest, "must be on a public address")
	if n := fetched.Load(); n != 0 {
		t.Fatalf("the document was fetched %d times for a remote caller", n)
	}
	consentForm(t, open("", "/client.json"))
	assertErrorPage(t, open("2001:db8::7", "/client.json"), http.StatusBadRequest, "must be on a public address") // cached, still refused
	consentForm(t, open("::1", "/remote-first.json"))                                                             // the remote refusal was not remembered
}

// Demo mode allows a developer re-running SDK examples far more than the
// 30 registrations an hour a public server allows one address.
func TestDemoLoosensTheRegistrationLimit(t *testing.T) {
	demo := newHarness(t, options{demo: true})
	meta := map[string]any{"redirect_uris": []string{"https://app.example/cb"}}
	for i := range 31 {
		if s, out := demo.register(meta); s != http.StatusCreated {
			t.Fatalf("demo registration %d: %d %v", i+1, s, out)
		}
	}
	strict := newHarness(t, options{})
	for range 30 {
		strict.register(meta)
	}
	body, _ := json.Marshal(meta)
	resp, err := http.Post(strict.srv.URL+"/oauth/register", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("registration 31 outside demo mode: %d, want 429", resp.StatusCode)
	}
}
