package compat

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// Gemini CLI: docs/clients.md's row, from its source (mcp/oauth-provider.ts,
// oauth-utils.ts, tools/mcp-client.ts).
func TestGeminiCLI(t *testing.T) {
	e := setup(t)
	const redirect = "http://localhost:39867/oauth/callback"

	t.Run("GeminiCLI_HEADProbe_oauth-utils.ts", func(t *testing.T) {
		status, h := e.headersOnly(t, req{method: "HEAD", url: "/mcp", header: map[string]string{"Accept": "application/json"}})
		e.wantChallenge(t, status, h)
		e.discover(t, nil, []string{"/.well-known/oauth-protected-resource/mcp"},
			[]string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"})
	})
	body := map[string]any{"client_name": "Gemini CLI MCP Client", "redirect_uris": []string{redirect},
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"token_endpoint_auth_method": "none", "scope": ""}
	var a app
	t.Run("GeminiCLI_RegisterEmptyScope_oauth-provider.ts", func(t *testing.T) {
		var r reply
		r, a = e.register(t, "/oauth/register", body, nil)
		wantRegistered(t, r, body, "none")
	})
	var tk tokens
	t.Run("GeminiCLI_EveryScopeAndAudience_oauth-provider.ts", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		tk = e.connect(t, a, authNone, redirect, url.Values{"scope": {"drivemail"}, "audience": {"https://example.com/api"}})
		e.wantWorks(t, tk.Access)
	})
	t.Run("GeminiCLI_RefreshWithScope_oauth-provider.ts", func(t *testing.T) {
		needs(t, tk.Refresh != "", "the sign-in above")
		// It treats a missing expires_in as never expiring; wantTokens
		// checks it is there.
		next := wantTokens(t, e.tokenRequest(t, "/oauth/token", a, authNone, url.Values{"grant_type": {"refresh_token"},
			"refresh_token": {tk.Refresh}, "scope": {tk.Scope}, "resource": {e.base + "/mcp"}}))
		e.wantWorks(t, next.Access)
	})
	t.Run("GeminiCLI_DeadRefreshTokenIsInvalidGrant_oauth-provider.ts", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		// It deletes its credentials on a failed refresh and signs in
		// again: the failure must be a clean 400 invalid_grant.
		wantOAuthError(t, e.tokenRequest(t, "/oauth/token", a, authNone, url.Values{"grant_type": {"refresh_token"},
			"refresh_token": {"dm_rt_" + randomID() + randomID()}}), 400, "invalid_grant")
	})
	t.Run("GeminiCLI_Protocol2025-06-18_mcp-client.ts", func(t *testing.T) {
		session, v := e.initialize(t, e.token, "2025-06-18", "gemini-cli-mcp-client", nil)
		if v != "2025-06-18" {
			t.Errorf("negotiated %q, want the 2025-06-18 it asked for", v)
		}
		e.callTool(t, mcpCall{token: e.token, session: session, version: v, params: searchArgs})
	})
	t.Run("GeminiCLI_ToolNamesFitItsPrefix_mcp-tool.ts", func(t *testing.T) {
		// It prefixes tool names with the server's name and cuts them at 63.
		r, rr := e.post(t, mcpCall{token: e.token, version: "2025-11-25", method: "tools/list"})
		if rr == nil || r.status != 200 {
			session, _ := e.initialize(t, e.token, "2025-11-25", "gemini-cli-mcp-client", nil)
			r, rr = e.post(t, mcpCall{token: e.token, session: session, version: "2025-11-25", method: "tools/list"})
		}
		wantTools(t, r, rr)
		for _, name := range toolNames(rr) {
			if len("drivemail__"+name) > 63 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
				t.Errorf("tool %q does not survive Gemini's sanitising", name)
			}
		}
	})
}

// Goose: docs/clients.md's row (on rmcp).
func TestGoose(t *testing.T) {
	e := setup(t)
	const redirect = "http://localhost:42893/oauth_callback"
	t.Run("Goose_GETProbe_rmcp-auth.rs", func(t *testing.T) {
		status, h := e.headersOnly(t, req{method: "GET", url: "/mcp", header: map[string]string{"User-Agent": "goose/1.20.0"}})
		e.wantChallenge(t, status, h)
	})
	body := map[string]any{"client_name": "goose", "redirect_uris": []string{redirect},
		"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none",
		"response_types": []string{"code"}, "application_type": "native"}
	var a app
	t.Run("Goose_RegisterWithoutScope_goose-oauth-mod.rs", func(t *testing.T) {
		var r reply
		r, a = e.register(t, "/oauth/register", body, nil)
		wantRegistered(t, r, body, "none")
	})
	t.Run("Goose_RefreshOnEveryStart_goose-oauth-mod.rs", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		tk := e.connect(t, a, authNone, redirect, nil)
		// Each start refreshes; the chain of rotations must hold.
		for i := range 4 {
			next := e.tokenRequest(t, "/oauth/token", a, authNone, url.Values{"grant_type": {"refresh_token"},
				"refresh_token": {tk.Refresh}, "resource": {e.base + "/mcp"}})
			if next.status != 200 {
				t.Fatalf("start %d: %v", i+1, next)
			}
			tk = wantTokens(t, next)
		}
		e.wantWorks(t, tk.Access)
	})
}

// The MCP Inspector (v2, in a browser): docs/clients.md's row.
func TestInspector(t *testing.T) {
	e := setup(t)
	const origin = "http://localhost:6274"
	const redirect = "http://127.0.0.1:6274/oauth/callback"

	t.Run("Inspector_CORSPreflights_inspector-providers.ts", func(t *testing.T) {
		for _, p := range []struct{ method, path, headers string }{
			{"GET", "/.well-known/oauth-protected-resource/mcp", "mcp-protocol-version"},
			{"GET", "/.well-known/oauth-authorization-server", "mcp-protocol-version"},
			{"POST", "/oauth/register", "content-type"},
			{"POST", "/oauth/token", "content-type"},
			{"POST", "/mcp", "authorization, content-type, mcp-protocol-version, mcp-session-id"},
		} {
			r := e.do(t, req{method: "OPTIONS", url: p.path, header: map[string]string{"Origin": origin,
				"Access-Control-Request-Method": p.method, "Access-Control-Request-Headers": p.headers}})
			allowOrigin := r.header.Get("Access-Control-Allow-Origin")
			if r.status >= 300 || (allowOrigin != "*" && allowOrigin != origin) {
				t.Errorf("preflight %s %s: %v (Allow-Origin %q)", p.method, p.path, r, allowOrigin)
				continue
			}
			allowed := strings.ToLower(r.header.Get("Access-Control-Allow-Headers"))
			for _, want := range strings.Split(p.headers, ", ") {
				if allowed != "*" && !strings.Contains(allowed, want) {
					t.Errorf("preflight %s %s: Access-Control-Allow-Headers %q lacks %s", p.method, p.path, allowed, want)
				}
			}
		}
	})
	t.Run("Inspector_CORSOnChallengeAndCalls_inspector-providers.ts", func(t *testing.T) {
		// The browser must read the 401 challenge and the session id.
		r, _ := e.post(t, mcpCall{method: "initialize", params: initParams("2025-11-25", "inspector"), header: map[string]string{"Origin": origin}})
		e.wantChallenge(t, r.status, r.header)
		if ao := r.header.Get("Access-Control-Allow-Origin"); ao != "*" && ao != origin {
			t.Errorf("401 without Access-Control-Allow-Origin for %s: the browser hides the challenge", origin)
		}
		if exp := strings.ToLower(r.header.Get("Access-Control-Expose-Headers")); !strings.Contains(exp, "www-authenticate") {
			t.Errorf("401 exposes %q, want WWW-Authenticate", exp)
		}
		r, rr := e.post(t, mcpCall{token: e.token, method: "initialize", params: initParams("2025-11-25", "inspector"), header: map[string]string{"Origin": origin}})
		if r.status != 200 || rr == nil || rr.Error != nil {
			t.Fatalf("initialize from %s: %v", origin, r)
		}
		if ao := r.header.Get("Access-Control-Allow-Origin"); ao != "*" && ao != origin {
			t.Errorf("initialize without Access-Control-Allow-Origin for %s", origin)
		}
		if sid := r.header.Get("Mcp-Session-Id"); sid != "" && !strings.Contains(strings.ToLower(r.header.Get("Access-Control-Expose-Headers")), "mcp-session-id") {
			t.Errorf("Mcp-Session-Id is not exposed to the browser")
		}
	})
	body := map[string]any{"redirect_uris": []string{redirect}, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}, "client_name": "MCP Inspector",
		"client_uri": "https://github.com/modelcontextprotocol/inspector", "scope": "", "application_type": "native"}
	var a app
	t.Run("Inspector_Register_inspector-providers.ts", func(t *testing.T) {
		var r reply
		r, a = e.register(t, "/oauth/register", body, map[string]string{"Origin": origin})
		wantRegistered(t, r, body, "none")
	})
	t.Run("Inspector_OfflineAccessConsentAndIss_inspector-authorizationParams.ts", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		p := newPKCE()
		got := e.authorize(t, "/oauth/authorize", authRequest(a, redirect, p, "st-"+randomID(),
			url.Values{"resource": {e.base + "/mcp"}, "scope": {"drivemail offline_access"}, "prompt": {"consent"}}))
		e.wantIss(t, got)
		if got.params.Get("code") == "" {
			t.Fatalf("no code: %s", got.redirect)
		}
		tk := e.exchange(t, "/oauth/token", a, authNone, got.params.Get("code"), redirect, p, url.Values{"resource": {e.base + "/mcp"}})
		e.wantWorks(t, tk.Access)
	})
	t.Run("Inspector_ServerDiscoverClassifier_inspector", func(t *testing.T) {
		e.wantServerDiscover(t, "inspector", modernHeaders("server/discover"))
	})
}

// LibreChat (server-side, multi-user): docs/clients.md's row.
func TestLibreChat(t *testing.T) {
	e := setup(t)
	const redirect = "https://chat.example.org/api/mcp/drivemail/oauth/callback"
	// It registers as confidential with the first secret method the AS
	// lists, and sends scope on refresh (handler.ts).
	for _, m := range []struct {
		name, method string
		how          clientAuth
	}{
		{"LibreChat_ConfidentialBasic_librechat-handler.ts", "client_secret_basic", authBasic},
		{"LibreChat_ConfidentialPost_librechat-handler.ts", "client_secret_post", authPost},
	} {
		t.Run(m.name, func(t *testing.T) {
			body := map[string]any{"client_name": "LibreChat MCP Client", "redirect_uris": []string{redirect},
				"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
				"token_endpoint_auth_method": m.method, "scope": "drivemail"}
			r, a := e.register(t, "/oauth/register", body, nil)
			wantRegistered(t, r, body, m.method)
			needs(t, a.id != "", "the registration")
			tk := e.connect(t, a, m.how, redirect, url.Values{"scope": {"drivemail"}})
			e.wantWorks(t, tk.Access)
			extra := url.Values{"scope": {"drivemail"}, "resource": {e.base + "/mcp"}}
			e.wantConcurrentRefreshes(t, a, m.how, e.refreshAtOnce(t, a, m.how, tk.Refresh, 3, extra), extra)
		})
	}
}

// toolNames lists the names in a tools/list result.
func toolNames(rr *rpcReply) []string {
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(rr.Result, &res)
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}
