package oauth_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestRegistration(t *testing.T) {
	h := newHarness(t, options{})
	status, out := h.register(map[string]any{
		"client_name": "Claude", "redirect_uris": []string{"https://claude.ai/api/mcp/auth_callback", "http://localhost/callback"},
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"token_endpoint_auth_method": "none", "scope": "drivemail", "logo_uri": "https://claude.ai/logo.png",
	})
	if status != http.StatusCreated || !strings.HasPrefix(str(out, "client_id"), "dmc_") || out["client_secret"] != nil ||
		str(out, "token_endpoint_auth_method") != "none" || str(out, "client_name") != "Claude" {
		t.Fatalf("register: %d %v", status, out)
	}
	c, err := h.store.GetClient(t.Context(), str(out, "client_id"))
	if err != nil || len(c.RedirectURIs) != 2 || c.SecretHash != "" {
		t.Fatalf("stored %+v, %v", c, err)
	}
}

func TestRegistrationRefusals(t *testing.T) {
	h := newHarness(t, options{regLimit: 1000})
	uris := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "https://app.example/cb" + strings.Repeat("x", i)
		}
		return out
	}
	tests := []struct {
		name  string
		meta  map[string]any
		error string
		says  string
	}{
		{"no redirect URIs", map[string]any{"client_name": "x"}, "invalid_redirect_uri", "redirect_uris is required"},
		{"http on a public host", map[string]any{"redirect_uris": []string{"http://app.example/cb"}}, "invalid_redirect_uri", "non-loopback"},
		{"javascript", map[string]any{"redirect_uris": []string{"javascript:alert(1)"}}, "invalid_redirect_uri", `the scheme "javascript"`},
		{"javascript with a path", map[string]any{"redirect_uris": []string{"javascript://x/%0Aalert(1)"}}, "invalid_redirect_uri", `the scheme "javascript"`},
		{"data", map[string]any{"redirect_uris": []string{"data:text/html,hi"}}, "invalid_redirect_uri", `the scheme "data"`},
		{"file", map[string]any{"redirect_uris": []string{"file:///etc/passwd"}}, "invalid_redirect_uri", `the scheme "file"`},
		{"websocket", map[string]any{"redirect_uris": []string{"wss://app.example/cb"}}, "invalid_redirect_uri", `the scheme "wss"`},
		{"two-letter scheme", map[string]any{"redirect_uris": []string{"ab://cb"}}, "invalid_redirect_uri", "too short"},
		{"custom scheme without a path", map[string]any{"redirect_uris": []string{"myapp:cb"}}, "invalid_redirect_uri", "no path"},
		{"custom scheme, bad host", map[string]any{"redirect_uris": []string{"cursor://*/cb"}}, "invalid_redirect_uri", "not a valid host"},
		// Hosts that would land in the consent page's CSP as more than a host.
		{"wildcard host", map[string]any{"redirect_uris": []string{"https://*/cb"}}, "invalid_redirect_uri", "not a valid host"},
		{"host with a semicolon", map[string]any{"redirect_uris": []string{"https://evil.com;sandbox/cb"}}, "invalid_redirect_uri", "not a valid host"},
		{"host with an underscore", map[string]any{"redirect_uris": []string{"https://a_b.example/cb"}}, "invalid_redirect_uri", "not a valid host"},
		{"label of 64 characters", map[string]any{"redirect_uris": []string{"https://" + strings.Repeat("a", 64) + ".example/cb"}}, "invalid_redirect_uri", "not a valid host"},
		{"label ending in a hyphen", map[string]any{"redirect_uris": []string{"https://app-.example/cb"}}, "invalid_redirect_uri", "not a valid host"},
		{"port 65536", map[string]any{"redirect_uris": []string{"https://app.example:65536/cb"}}, "invalid_redirect_uri", "invalid port"},
		{"empty port", map[string]any{"redirect_uris": []string{"https://app.example:/cb"}}, "invalid_redirect_uri", "empty port"},
		{"IPv6 with a zone", map[string]any{"redirect_uris": []string{"http://[fe80::1%25en0]/cb"}}, "invalid_redirect_uri", "invalid IPv6"},
		{"fragment", map[string]any{"redirect_uris": []string{"https://app.example/cb#x"}}, "invalid_redirect_uri", "fragment"},
		{"credentials", map[string]any{"redirect_uris": []string{"https://u:p@app.example/cb"}}, "invalid_redirect_uri", "credentials"},
		{"relative", map[string]any{"redirect_uris": []string{"/cb"}}, "invalid_redirect_uri", "not an absolute URL"},
		// The consent page shows the host: one spelled in look-alike letters
		// (a Cyrillic "е" here) would pass for claude.ai there.
		{"look-alike host", map[string]any{"redirect_uris": []string{"https://claud\u0435.ai/api/mcp/auth_callback"}}, "invalid_redirect_uri", "xn--"},
		{"look-alike host, percent-encoded", map[string]any{"redirect_uris": []string{"https://claud%D0%B5.ai/cb"}}, "invalid_redirect_uri", "xn--"},
		{"11 redirect URIs", map[string]any{"redirect_uris": uris(11)}, "invalid_redirect_uri", "at most 10"},
		{"URI of 2001 characters", map[string]any{"redirect_uris": []string{"https://app.example/" + strings.Repeat("a", 1981)}}, "invalid_redirect_uri", "longer than 2000"},
		{"name of 101 characters", map[string]any{"redirect_uris": uris(1), "client_name": strings.Repeat("é", 101)}, "invalid_client_metadata", "longer than 100"},
		{"name with a newline", map[string]any{"redirect_uris": uris(1), "client_name": "Claude\nApprove"}, "invalid_client_metadata", "control characters"},
		{"implicit grant", map[string]any{"redirect_uris": uris(1), "grant_types": []string{"implicit"}}, "invalid_client_metadata", "must include authorization_code"},
		{"refresh without code", map[string]any{"redirect_uris": uris(1), "grant_types": []string{"refresh_token"}}, "invalid_client_metadata", "must include authorization_code"},
		{"token response", map[string]any{"redirect_uris": uris(1), "response_types": []string{"token"}}, "invalid_client_metadata", "response type"},
		{"private_key_jwt", map[string]any{"redirect_uris": uris(1), "token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata", "not supported"},
		{"not an object", nil, "invalid_client_metadata", "JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, out := h.register(tc.meta)
			if status != http.StatusBadRequest || str(out, "error") != tc.error || !strings.Contains(str(out, "error_description"), tc.says) {
				t.Fatalf("got %d %v, want %s saying %q", status, out, tc.error, tc.says)
			}
		})
	}
	// The edges that pass.
	for name, meta := range map[string]map[string]any{
		"10 redirect URIs":        {"redirect_uris": uris(10)},
		"URI of 2000 characters":  {"redirect_uris": []string{"https://app.example/" + strings.Repeat("a", 1980)}},
		"name of 100 characters":  {"redirect_uris": uris(1), "client_name": strings.Repeat("é", 100)},
		"IPv6 loopback over http": {"redirect_uris": []string{"http://[::1]:8080/cb"}},
		"punycode host":           {"redirect_uris": []string{"https://xn--claud-3ve.ai/cb"}},
		"label of 63 characters":  {"redirect_uris": []string{"https://" + strings.Repeat("a", 63) + ".example/cb"}},
		"port 65535":              {"redirect_uris": []string{"https://app.example:65535/cb"}},
		"three-letter scheme":     {"redirect_uris": []string{"abc:/cb"}},
	} {
		if status, out := h.register(meta); status != http.StatusCreated {
			t.Errorf("%s: %d %v", name, status, out)
		}
	}
}

func TestRegistrationBodyLimit(t *testing.T) {
	h := newHarness(t, options{})
	post := func(size int) int {
		head := `{"redirect_uris":["https://app.example/cb"],"padding":"`
		body := head + strings.Repeat("p", size-len(head)-2) + `"}`
		resp, err := http.Post(h.srv.URL+"/oauth/register", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := post(32 << 10); s != http.StatusCreated {
		t.Fatalf("a body of exactly 32 KiB: %d", s)
	}
	if s := post(32<<10 + 1); s != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body of 32 KiB + 1: %d", s)
	}
}

func TestRegistrationRateLimit(t *testing.T) {
	h := newHarness(t, options{regLimit: 3})
	meta := map[string]any{"redirect_uris": []string{"https://app.example/cb"}}
	for i := range 3 {
		if s, out := h.register(meta); s != http.StatusCreated {
			t.Fatalf("registration %d of 3: %d %v", i+1, s, out)
		}
	}
	body, _ := json.Marshal(meta)
	resp, err := http.Post(h.srv.URL+"/oauth/register", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	decodeJSON(resp, &out)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(str(out, "error_description"), "at most 3 an hour") {
		t.Fatalf("registration 4 of 3: %d %v", resp.StatusCode, out)
	}
	h.clock.Advance(61 * 60e9) // the next hour's window
	if s, out := h.register(meta); s != http.StatusCreated {
		t.Fatalf("after the window: %d %v", s, out)
	}
}

// TestRegistrationRateLimitPerIPv6Block counts IPv6 clients by their /64,
// which one subscriber or host usually holds whole: counted per address,
// a client would get a fresh allowance from each of 2^64 addresses.
func TestRegistrationRateLimitPerIPv6Block(t *testing.T) {
	const from = "X-Test-Client-Address" // the address the test claims to call from
	h := newHarness(t, options{regLimit: 2, clientIP: func(r *http.Request) string { return r.Header.Get(from) }})
	register := func(addr string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/oauth/register", strings.NewReader(`{"redirect_uris":["https://app.example/cb"]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(from, addr)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		addr string
		want int
	}{
		{"2001:db8:1:2::1", http.StatusCreated},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", http.StatusCreated},
		{"2001:db8:1:2::3", http.StatusTooManyRequests}, // the /64's third
		{"2001:db8:1:3::1", http.StatusCreated},         // the next /64
		{"192.0.2.1", http.StatusCreated},
		{"::ffff:192.0.2.1", http.StatusCreated}, // the same IPv4 client's second
		{"192.0.2.1", http.StatusTooManyRequests},
		{"192.0.2.2", http.StatusCreated}, // IPv4 counts per address
	} {
		if got := register(tc.addr); got != tc.want {
			t.Errorf("a registration from %s: %d, want %d", tc.addr, got, tc.want)
		}
	}
}
