package oauth_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/oauth"
)

// The registration bodies real clients send (one per client; docs/clients.md
// says where each was seen): each registers, and the answer
// echoes what the client needs to go on.
func TestClientRegistrationShapes(t *testing.T) {
	h := newHarness(t, options{regLimit: 1000})
	tests := []struct {
		name   string
		body   string
		method string // echoed token_endpoint_auth_method
	}{
		{"Claude.ai DCR (claude-ai-mcp#1043: client_secret_post)",
			`{"redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"token_endpoint_auth_method":"client_secret_post","grant_types":["authorization_code","refresh_token"],"response_types":["code"],"client_name":"Claude"}`,
			"client_secret_post"},
		{"Claude Code DCR (§2.2)",
			`{"client_name":"Claude Code (drivemail)","redirect_uris":["http://localhost:54321/callback"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none"}`,
			"none"},
		{"VS Code (oauth.ts: device_code grant, four redirects, scope)",
			`{"client_name":"Visual Studio Code","client_uri":"https://code.visualstudio.com","grant_types":["authorization_code","refresh_token","urn:ietf:params:oauth:grant-type:device_code"],"response_types":["code"],"redirect_uris":["https://insiders.vscode.dev/redirect","https://vscode.dev/redirect","http://127.0.0.1/","http://127.0.0.1:33418/"],"scope":"drivemail","token_endpoint_auth_method":"none","application_type":"native"}`,
			"none"},
		{"Gemini CLI (scope \"\")",
			`{"client_name":"Gemini CLI MCP Client","redirect_uris":["http://localhost:7777/oauth/callback"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none","scope":""}`,
			"none"},
		{"Codex / rmcp (application_type native, callback id)",
			`{"client_name":"Codex","redirect_uris":["http://127.0.0.1:41234/callback/Zk3a9Qw_1xYz"],"grant_types":["authorization_code","refresh_token"],"token_endpoint_auth_method":"none","response_types":["code"],"scope":"read write","application_type":"native"}`,
			"none"},
		{"Goose (oauth_callback)",
			`{"client_name":"goose","redirect_uris":["http://localhost:50000/oauth_callback"],"grant_types":["authorization_code","refresh_token"],"token_endpoint_auth_method":"none","response_types":["code"],"application_type":"native"}`,
			"none"},
		{"MCP Inspector (scope \"\", client_uri)",
			`{"redirect_uris":["http://127.0.0.1:6274/oauth/callback"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"response_types":["code"],"client_name":"MCP Inspector","client_uri":"https://github.com/modelcontextprotocol/inspector","scope":"","application_type":"native"}`,
			"none"},
		{"Cursor (custom scheme, web agents, fixed port)",
			`{"client_name":"Cursor","redirect_uris":["cursor://anysphere.cursor-mcp/oauth/callback","https://www.cursor.com/agents/mcp/oauth/callback","http://localhost:8787/callback"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none"}`,
			"none"},
		{"Windsurf (custom scheme, unknown scopes)",
			`{"client_name":"Windsurf","redirect_uris":["windsurf://codeium.windsurf/mcp/oauth/callback"],"scope":"mcp.read mcp.write","token_endpoint_auth_method":"none"}`,
			"none"},
		{"LibreChat (confidential, client_secret_basic)",
			`{"client_name":"LibreChat MCP Client","redirect_uris":["https://chat.example.org/api/mcp/drivemail/oauth/callback"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"client_secret_basic","scope":"drivemail"}`,
			"client_secret_basic"},
		{"ChatGPT (iss-gated stable redirect, extra fields)",
			`{"client_name":"ChatGPT","redirect_uris":["https://chatgpt.com/connector_platform_oauth_redirect","https://chatgpt.com/connector/oauth/abc123"],"token_endpoint_auth_method":"none","jwks_uri":"https://chatgpt.com/oauth/jwks.json","software_id":"x"}`,
			"none"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var meta map[string]any
			if err := json.Unmarshal([]byte(tc.body), &meta); err != nil {
				t.Fatal(err)
			}
			status, out := h.register(meta)
			if status != http.StatusCreated {
				t.Fatalf("register: %d %v", status, out)
			}
			grants, _ := out["grant_types"].([]any)
			if str(out, "token_endpoint_auth_method") != tc.method || str(out, "scope") != oauth.Scope ||
				!slices.Equal(grants, []any{"authorization_code", "refresh_token"}) {
				t.Fatalf("answer %v: want %s echoed, scope %s, grant_types authorization_code and refresh_token", out, tc.method, oauth.Scope)
			}
			secret, hasSecret := out["client_secret"].(string)
			if (tc.method != "none") != (hasSecret && strings.HasPrefix(secret, "dm_cs_")) {
				t.Fatalf("client_secret %q for method %s", secret, tc.method)
			}
			if hasSecret && out["client_secret_expires_at"] != float64(0) {
				t.Fatalf("client_secret_expires_at = %v, want 0 (never)", out["client_secret_expires_at"])
			}
			c, err := h.store.GetClient(t.Context(), str(out, "client_id"))
			if err != nil || (hasSecret && (c.SecretHash == "" || strings.Contains(c.SecretHash, secret))) {
				t.Fatalf("stored %+v, %v: want the secret stored hashed", c, err)
			}
		})
	}
}

// A client that left grant_types out (RFC 7591 would default to the code
// grant alone) still gets a refresh token, so its user does not sign in
// again every hour.
func TestRegistrationWithoutGrantTypesGetsRefreshTokens(t *testing.T) {
	h := newHarness(t, options{})
	_, reg := h.register(map[string]any{"redirect_uris": []string{testRedirect}, "token_endpoint_auth_method": "none"})
	a := h.newAuthRequest(str(reg, "client_id"))
	status, tok := h.exchange(a, h.codeFor(a))
	if status != http.StatusOK || !strings.HasPrefix(str(tok, "refresh_token"), "dm_rt_") {
		t.Fatalf("exchange: %d %v; want a refresh token", status, tok)
	}
}

// The authorization request quirks real clients have been seen sending:
// each reaches the consent page (none is an error), and the whole flow
// with the worst of them ends in a working token for drivemail's scope.
func TestAuthorizationRequestQuirks(t *testing.T) {
	h := newHarness(t, options{})
	clientID := h.publicClient()
	tests := []struct {
		name  string
		quirk func(*authRequest)
	}{
		{"Claude: read write (claude-ai-mcp#42)", func(a *authRequest) { a.scope = "read write" }},
		{"Claude: leading space (claude-ai-mcp#453)", func(a *authRequest) { a.scope = " offline_access" }},
		{"Claude: claudeai", func(a *authRequest) { a.scope = "claudeai" }},
		{"ChatGPT reconnect: no scope", func(a *authRequest) { a.scope = "" }},
		{"Windsurf: openid email profile", func(a *authRequest) { a.scope = "openid email profile" }},
		{"scopes separated by tabs and newlines", func(a *authRequest) { a.scope = "drivemail\t\noffline_access  " }},
		{"TS SDK: offline_access with prompt=consent", func(a *authRequest) {
			a.scope = "drivemail offline_access"
			a.extra = url.Values{"prompt": {"consent"}}
		}},
		{"Gemini: audience, twice", func(a *authRequest) { a.extra = url.Values{"audience": {"a", "b"}} }},
		{"unknown parameters", func(a *authRequest) { a.extra = url.Values{"foo": {"bar"}, "nonce": {"n"}} }},
		{"no resource", func(a *authRequest) { a.resource = "" }},
		{"Claude Code: resource with a trailing slash (claude-code#52871)", func(a *authRequest) { a.resource += "/" }},
		{"resource as the origin", func(a *authRequest) { a.resource = h.base }},
		{"resource as the origin with a slash", func(a *authRequest) { a.resource = h.base + "/" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := h.newAuthRequest(clientID)
			tc.quirk(&a)
			consentForm(t, newBrowser(t).get(a.url(h.base)))
		})
	}

	// The worst at once: unknown scopes, no resource anywhere, audience.
	a := h.newAuthRequest(clientID)
	a.scope, a.resource, a.extra = "read write", "", url.Values{"audience": {"x"}, "prompt": {"consent"}}
	status, tok := h.exchange(a, h.codeFor(a))
	if status != http.StatusOK || str(tok, "scope") != oauth.Scope || str(tok, "token_type") != "Bearer" || tok["expires_in"] == nil {
		t.Fatalf("exchange: %d %v; want a Bearer token for scope %s with expires_in", status, tok, oauth.Scope)
	}
	if c, _, _ := h.call(str(tok, "access_token")); c != http.StatusOK {
		t.Fatalf("a token issued without resource anywhere: %d, want 200 (its audience is BASE/mcp)", c)
	}
	// Refresh: scope optional and never more than the grant's, whatever
	// it names; resource in any accepted spelling.
	rt := str(tok, "refresh_token")
	for _, form := range []url.Values{
		{"scope": {"offline_access"}},
		{"scope": {"read write"}, "resource": {h.base + "/mcp/"}},
		{"scope": {" drivemail offline_access"}, "resource": {h.base}},
		{},
	} {
		form.Set("grant_type", "refresh_token")
		form.Set("refresh_token", rt)
		form.Set("client_id", a.clientID)
		status, next := h.tokenRequest(form)
		if status != http.StatusOK || str(next, "scope") != oauth.Scope || str(next, "refresh_token") == "" || next["expires_in"] == nil {
			t.Fatalf("refresh with %v: %d %v", form, status, next)
		}
		rt = str(next, "refresh_token")
	}
}

// state comes back byte for byte (VS Code's is standard base64 with + / =),
// and a registered redirect URI's own query is kept as registered.
func TestStateAndRedirectQueryComeBackExactly(t *testing.T) {
	h := newHarness(t, options{})
	const registered = "https://app.example/cb?tenant=a%20b&x=1"
	_, reg := h.register(map[string]any{"redirect_uris": []string{registered}, "token_endpoint_auth_method": "none"})
	for _, state := range []string{"gXVXo0/iMD8WMolDHKxSTg==", "oauth_s_691b55f5b11481919ddp59nge4998443f", "a+b c&d=e%41"} {
		a := h.newAuthRequest(str(reg, "client_id"))
		a.redirectURI, a.state = registered, state
		back := newBrowser(t).signIn(h, a.url(h.base))
		if back.Query().Get("state") != state || back.Query().Get("iss") != h.base || back.Query().Get("code") == "" {
			t.Fatalf("state %q came back as %s", state, back)
		}
		if !strings.HasPrefix(back.RawQuery, "tenant=a%20b&x=1&") {
			t.Fatalf("the registered query was rewritten: %s", back.RawQuery)
		}
	}
}

// A native app's private-use redirect (Cursor) goes through the whole flow:
// the consent page names the app's scheme, its CSP lets the form reach that
// scheme only, and the code arrives there.
func TestPrivateUseSchemeRedirect(t *testing.T) {
	h := newHarness(t, options{})
	const cursor = "cursor://anysphere.cursor-mcp/oauth/callback"
	_, reg := h.register(map[string]any{"redirect_uris": []string{cursor}, "token_endpoint_auth_method": "none"})
	a := h.newAuthRequest(str(reg, "client_id"))
	a.redirectURI = cursor
	p := newBrowser(t).get(a.url(h.base))
	consentForm(t, p)
	if !strings.Contains(p.body, "cursor://anysphere.cursor-mcp") {
		t.Fatalf("the consent page does not name where access goes: %.600s", p.body)
	}
	if csp := p.header.Get("Content-Security-Policy"); !strings.HasSuffix(csp, "form-action 'self' "+h.google.srv.URL+" cursor:") {
		t.Fatalf("CSP %q: want form-action naming drivemail, Google and cursor: only", csp)
	}
	status, tok := h.exchange(a, h.codeFor(a))
	if status != http.StatusOK {
		t.Fatalf("exchange: %d %v", status, tok)
	}
}
