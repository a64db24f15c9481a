package compat

import (
	"net/url"
	"testing"
)

// Cursor: docs/clients.md's row for it (closed source; redirect URIs from its docs and
// vendors' setup pages).
func TestCursor(t *testing.T) {
	e := setup(t)
	const scheme = "cursor://anysphere.cursor-mcp/oauth/callback"

	t.Run("Cursor_Discovery_mcpruntime-request-flow", func(t *testing.T) {
		e.discover(t, nil,
			[]string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"},
			[]string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"})
	})
	body := map[string]any{"client_name": "Cursor", "redirect_uris": []string{scheme},
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}, "token_endpoint_auth_method": "none"}
	var a app
	t.Run("Cursor_RegisterCustomScheme_cursor-mcp-docs", func(t *testing.T) {
		var r reply
		r, a = e.register(t, "/oauth/register", body, nil)
		wantRegistered(t, r, body, "none")
	})
	t.Run("Cursor_SignInToCustomScheme_RFC8252-7.1", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		// It asks for every scope in the PRM's scopes_supported.
		p := newPKCE()
		got := e.authorize(t, "/oauth/authorize", authRequest(a, scheme, p, "st-"+randomID(), url.Values{"resource": {e.base + "/mcp"}, "scope": {"drivemail"}}))
		if got.redirect == nil || got.redirect.Scheme != "cursor" || got.params.Get("code") == "" {
			t.Fatalf("want a redirect to cursor:// with a code, got %v %v", got.redirect, got.last)
		}
		e.wantWorks(t, e.exchange(t, "/oauth/token", a, authNone, got.params.Get("code"), scheme, p, url.Values{"resource": {e.base + "/mcp"}}).Access)
	})
	t.Run("Cursor_RegisterDesktopAndWeb_cursor-mcp-docs", func(t *testing.T) {
		both := map[string]any{"client_name": "Cursor", "redirect_uris": []string{"http://localhost:8787/callback", "https://www.cursor.com/agents/mcp/oauth/callback", scheme},
			"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}, "token_endpoint_auth_method": "none"}
		r, _ := e.register(t, "/oauth/register", both, nil)
		wantRegistered(t, r, both, "none")
	})
	t.Run("Cursor_UnsafeRedirectsRefused_RFC8252-8.1", func(t *testing.T) {
		// Leniency has an edge: schemes that run code or read files, and
		// plain http off loopback, are still refused.
		for _, uri := range []string{"javascript:alert(1)//", "data:text/html,hi", "file:///etc/passwd", "http://evil.example.com/callback"} {
			r, _ := e.register(t, "/oauth/register", map[string]any{"client_name": "x", "redirect_uris": []string{uri}, "token_endpoint_auth_method": "none"}, nil)
			if r.status != 400 || str(r.object()["error"]) != "invalid_redirect_uri" {
				t.Errorf("redirect %q: %v, want 400 invalid_redirect_uri", uri, r)
			}
		}
	})
}

// VS Code (GitHub Copilot agent mode): docs/clients.md's row, from its source
// (src/vs/base/common/oauth.ts, extHostMcp.ts).
func TestVSCode(t *testing.T) {
	e := setup(t)
	h := map[string]string{"MCP-Protocol-Version": "2025-11-25"}

	t.Run("VSCode_Discovery_oauth.ts", func(t *testing.T) {
		r, _ := e.post(t, mcpCall{method: "initialize", params: initParams("2025-11-25", "Visual Studio Code"), accept: "text/event-stream, application/json"})
		e.wantChallenge(t, r.status, r.header)
		e.discover(t, h, []string{"/.well-known/oauth-protected-resource/mcp"},
			[]string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"})
	})
	body := map[string]any{"client_name": "Visual Studio Code", "client_uri": "https://code.visualstudio.com",
		"grant_types":    []string{"authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"},
		"response_types": []string{"code"},
		"redirect_uris":  []string{"https://insiders.vscode.dev/redirect", "https://vscode.dev/redirect", "http://127.0.0.1/", "http://127.0.0.1:33418/"},
		"scope":          "drivemail", "token_endpoint_auth_method": "none", "application_type": "native"}
	var a app
	t.Run("VSCode_RegisterFourRedirectsAndDeviceCode_oauth.ts", func(t *testing.T) {
		var r reply
		r, a = e.register(t, "/oauth/register", body, h)
		wantRegistered(t, r, body, "none")
	})
	var tk tokens
	t.Run("VSCode_StateStandardBase64_vscode-sample", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		p := newPKCE()
		state := "gXVXo0/iMD8WMolDHKxSTg=="
		redirect := "http://127.0.0.1:33418/"
		got := e.authorize(t, "/oauth/authorize", authRequest(a, redirect, p, state, url.Values{"resource": {e.base + "/mcp"}, "scope": {"drivemail"}}))
		if got.redirect == nil || got.params.Get("state") != state {
			t.Fatalf("state came back as %q (%v), want byte-exact %q", got.params.Get("state"), got.last, state)
		}
		tk = e.exchange(t, "/oauth/token", a, authNone, got.params.Get("code"), redirect, p, url.Values{"resource": {e.base + "/mcp"}})
		e.wantWorks(t, tk.Access)
	})
	t.Run("VSCode_PortlessLoopbackRegistered_RFC8252-7.3", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		e.connect(t, a, authNone, "http://127.0.0.1:49152/", nil)
	})
	t.Run("VSCode_WebRedirect_vscode.dev", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		e.connect(t, a, authNone, "https://vscode.dev/redirect", nil)
	})
	t.Run("VSCode_Refresh_extHostAuthentication", func(t *testing.T) {
		needs(t, tk.Refresh != "", "the sign-in above")
		e.wantWorks(t, wantTokens(t, e.tokenRequest(t, "/oauth/token", a, authNone, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tk.Refresh}})).Access)
	})
	t.Run("VSCode_CIMD_vscode-client-metadata", func(t *testing.T) {
		docs := newCIMDServer(t)
		id := docs.add("/oauth/client-metadata.json", map[string]any{"client_name": "Visual Studio Code",
			"redirect_uris": []string{"http://127.0.0.1:33418/", "https://vscode.dev/redirect"},
			"grant_types":   []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}, "token_endpoint_auth_method": "none"})
		e.wantWorks(t, e.connect(t, app{id: id}, authNone, "http://127.0.0.1:33418/", nil).Access)
	})

	// Transport (§6.5).
	t.Run("VSCode_AcceptEventStreamFirst_extHostMcp.ts", func(t *testing.T) {
		// A non-auth 4xx on the first POST makes it fall back to the old
		// SSE transport and fail confusingly.
		r, rr := e.post(t, mcpCall{token: e.token, method: "initialize", params: initParams("2025-11-25", "Visual Studio Code"), accept: "text/event-stream, application/json"})
		if r.status != 200 || rr == nil || rr.Error != nil {
			t.Fatalf("initialize: %v", r)
		}
		e.listTools(t, mcpCall{token: e.token, session: r.header.Get("Mcp-Session-Id"), version: "2025-11-25", accept: "text/event-stream, application/json"})
	})
	t.Run("VSCode_GETBackchannel_extHostMcp.ts", func(t *testing.T) {
		session, _ := e.initialize(t, e.token, "2025-11-25", "Visual Studio Code", nil)
		e.wantGETStream(t, session)
	})
	t.Run("VSCode_DELETEOnShutdown_extHostMcp.ts", func(t *testing.T) {
		session, _ := e.initialize(t, e.token, "2025-11-25", "Visual Studio Code", nil)
		hd := map[string]string{"Authorization": "Bearer " + e.token, "MCP-Protocol-Version": "2025-11-25"}
		if session != "" {
			hd["Mcp-Session-Id"] = session
		}
		if r := e.do(t, req{method: "DELETE", url: "/mcp", header: hd}); r.status != 200 && r.status != 204 && r.status != 405 {
			t.Fatalf("DELETE /mcp: %v, want 200, 204 or 405", r)
		}
	})
}

// Windsurf: docs/clients.md's row for it (closed source; thin evidence).
func TestWindsurf(t *testing.T) {
	e := setup(t)
	const redirect = "windsurf://codeium.windsurf/oauth/callback"
	// Registered without grant_types (RFC 7591's default,
	// authorization_code): it must still get a refresh token.
	body := map[string]any{"client_name": "Windsurf", "redirect_uris": []string{redirect, "http://127.0.0.1:52741/callback"}, "token_endpoint_auth_method": "none"}
	var a app
	t.Run("Windsurf_RegisterWithoutGrantTypes_openclaw#25", func(t *testing.T) {
		var r reply
		r, a = e.register(t, "/oauth/register", body, nil)
		wantRegistered(t, r, body, "none")
	})
	for _, sc := range []struct{ name, scope string }{
		{"Windsurf_ScopesMcpReadWrite_fastmcp#2458", "mcp.read mcp.write"},
		{"Windsurf_ScopesOpenIDEmailProfile_supabase-mcp#183", "openid email profile"},
	} {
		t.Run(sc.name, func(t *testing.T) {
			needs(t, a.id != "", "the registration above")
			tk := e.connect(t, a, authNone, redirect, url.Values{"scope": {sc.scope}})
			e.wantWorks(t, tk.Access)
			e.wantWorks(t, wantTokens(t, e.tokenRequest(t, "/oauth/token", a, authNone, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tk.Refresh}})).Access)
		})
	}
}
