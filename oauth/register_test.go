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
		{"two-letter scheme", map[string]any{"redirect_uris": []string{"ab://cb"}}, "invalid_redirect_uri", `the scheme "ab"`},
		{"a scheme without a period", map[string]any{"redirect_uris": []string{"myapp://cb"}}, "invalid_redirect_uri", "a domain you own, reversed"},
		{"reverse-domain scheme without a path", map[string]any{"redirect_uris": []string{"com.example.app:cb"}}, "invalid_redirect_uri", "no path"},
		{"reverse-domain scheme with an empty label", map[string]any{"redirect_uris": []string{"com..app:/cb"}}, "invalid_redirect_uri", `the scheme "com..app"`},
		{"reverse-domain scheme ending in a period", map[string]any{"redirect_uris": []string{"com.example.:/cb"}}, "invalid_redirect_uri", `the scheme "com.example."`},
		{"reverse-domain scheme with a plus", map[string]any{"redirect_uris": []string{"com.example+x.app:/cb"}}, "invalid_redirect_uri", `the scheme "com.example+x.app"`},
		{"editor scheme without a host", map[string]any{"redirect_uris": []string{"vscode:/callback"}}, "invalid_redirect_uri", "no host"},
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
		{"name with a newline", map[string]any{"redirect_uris": uris(1), "client_name": "Claude\nApprove"}, "invalid_client_metadata", "U+000A"},
		// The consent page shows the name to a user deciding whom to trust.
		{"name with a right-to-left override", map[string]any{"redirect_uris": uris(1), "client_name": "Claude\u202eedoC"}, "invalid_client_metadata", "U+202E"},
		{"name with a zero-width space", map[string]any{"redirect_uris": uris(1), "client_name": "Cla\u200bude"}, "invalid_client_metadata", "U+200B"},
		{"name with a zero-width joiner", map[string]any{"redirect_uris": uris(1), "client_name": "Claude\u200d"}, "invalid_client_metadata", "U+200D"},
		{"name with variation selectors", map[string]any{"redirect_uris": uris(1), "client_name": "Claude\ufe00\ufe0f"}, "invalid_client_metadata", "U+FE00"},
		{"name with a tag character", map[string]any{"redirect_uris": uris(1), "client_name": "Claude\U000E0041"}, "invalid_client_metadata", "U+E0041"},
		{"name with a Hangul filler", map[string]any{"redirect_uris": uris(1), "client_name": "\u3164"}, "invalid_client_metadata", "U+3164"},
		{"name with a line separator", map[string]any{"redirect_uris": uris(1), "client_name": "Claude\u2028Approve"}, "invalid_client_metadata", "U+2028"},
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
		"reverse-domain scheme":   {"redirect_uris": []string{"com.example.app:/oauth2redirect"}},
		"reverse-domain, a host":  {"redirect_uris": []string{"io.github.someone.app://callback"}},
		"Cursor":                  {"redirect_uris": []string{"cursor://anysphere.cursor-mcp/oauth/callback"}},
		"VS Code extension":       {"redirect_uris": []string{"vscode://saoudrizwan.claude-dev/mcp-auth/callback/abc123"}},
		"VS Code Insiders":        {"redirect_uris": []string{"vscode-insiders://saoudrizwan.claude-dev/mcp-auth/callback/abc123"}},
		"Windsurf":                {"redirect_uris": []string{"windsurf://codeium.windsurf/oauth/callback"}},
		"name in another script":  {"redirect_uris": uris(1), "client_name": "日本語クライアント"},
		"name with an accent":     {"redirect_uris": uris(1), "client_name": "Señor Client (dev)"},
	} {
		if status, out := h.register(meta); status != http.StatusCreated {
			t.Errorf("%s: %d %v", name, status, out)
		}
	}
}

// TestHostileRedirectSchemes: a scheme that is not https, loopback http,
// a reverse domain name or an editor's own is refused at registration and
// in a client metadata document. Each of these hands the URI to some
// other program (a file share, a shell, an installer, a diagnostic tool,
// another browser) or runs it as script.
func TestHostileRedirectSchemes(t *testing.T) {
	h := newHarness(t, options{regLimit: 1000})
	hostile := []string{
		"smb://evil.example/share", "ssh://evil.example/", "sftp://evil.example/x", "webcal://evil.example/cal",
		"zoommtg://zoom.us/join?confno=1", "steam://run/1", "search-ms:query=x&crumb=location:\\\\evil.example",
		"ms-msdt:/id PCWDiagnostic /skip force", "ms-officecmd:{}", "ms-excel:ofe|u|https://evil.example/x.xlsx",
		"itms-services://?action=download-manifest&url=https://evil.example/m.plist", "x-safari-https://evil.example/",
		"googlechromes://evil.example/", "microsoft-edge:https://evil.example/", "javascript:alert(1)//", "data:text/html,hi",
		"file:///etc/passwd", "vbscript:msgbox(1)", "blob:https://evil.example/uuid", "about:blank", "filesystem:https://evil.example/x",
		"view-source:https://evil.example/", "ftp://evil.example/", "ws://evil.example/", "wss://evil.example/",
		"mailto:x@evil.example", "tel:+15555550100", "intent://evil.example/x", "chrome://settings/",
		"ms-word:ofe|u|https://evil.example/x.docx", "ms-settings:privacy", "mk:@MSITStore:C:/x.chm::/x.htm", "ldap://evil.example/",
	}
	if len(hostile) != 33 {
		t.Fatalf("%d schemes listed, want the 33 tried", len(hostile))
	}
	for _, uri := range hostile {
		t.Run(uri, func(t *testing.T) {
			status, out := h.register(map[string]any{"redirect_uris": []string{uri}, "token_endpoint_auth_method": "none"})
			if status != http.StatusBadRequest || str(out, "error") != "invalid_redirect_uri" {
				t.Fatalf("registered: %d %v, want 400 invalid_redirect_uri", status, out)
			}
			if d := str(out, "error_description"); !strings.Contains(d, "which drivemail does not send codes to: use https, http on localhost") {
				t.Errorf("the refusal does not name the scheme and what to use instead: %s", d)
			}
		})
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
