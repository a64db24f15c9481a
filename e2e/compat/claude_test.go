package compat

import (
	"net/url"
	"strings"
	"testing"
)

// Claude.ai custom connectors (and Claude Desktop, through the same
// backend): docs/clients.md's row for them.
func TestClaudeAI(t *testing.T) {
	e := setup(t)
	// Anthropic's backend fetches metadata with python-httpx and the
	// protocol header (claude-ai-mcp#764).
	backend := map[string]string{"User-Agent": "python-httpx/0.28.1", "mcp-protocol-version": "2025-11-25", "Accept": "application/json"}
	const callback = "https://claude.ai/api/mcp/auth_callback"

	t.Run("ClaudeAI_Challenge_claude-ai-mcp#136", func(t *testing.T) {
		r, _ := e.post(t, mcpCall{method: "initialize", params: initParams("2025-11-25", "claude-ai"), header: map[string]string{"User-Agent": "Claude-User"}})
		e.wantChallenge(t, r.status, r.header)
	})
	t.Run("ClaudeAI_ChallengeNamesScope_tldraw#10612", func(t *testing.T) {
		// Without a scope in the challenge (or PRM), Claude asks for every
		// scope the AS lists (A1, A5).
		r, _ := e.post(t, mcpCall{method: "tools/list"})
		prm := e.wantPRM(t, e.do(t, req{method: "GET", url: "/.well-known/oauth-protected-resource/mcp"}))
		if sc, want := challengeScope(r.header), strings.Join(strs(prm["scopes_supported"]), " "); sc == "" || sc != want {
			t.Fatalf("the 401 challenge names scope %q, want the scopes the tools need, as the metadata lists them: %q", sc, want)
		}
	})
	t.Run("ClaudeAI_Discovery_lion-reader#978", func(t *testing.T) {
		e.discover(t, backend,
			[]string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"},
			[]string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"})
	})
	t.Run("ClaudeAI_RootAliases_claude-ai-mcp#82", func(t *testing.T) {
		// Claude has used /authorize, /token and /register on the MCP
		// host whatever the metadata said (#82, #283, #716).
		body := map[string]any{"redirect_uris": []string{callback}, "token_endpoint_auth_method": "none",
			"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}, "client_name": "Claude"}
		r, a := e.register(t, "/register", body, backend)
		wantRegistered(t, r, body, "none")
		p := newPKCE()
		q := authRequest(a, callback, p, "st-"+randomID(), url.Values{"resource": {e.base + "/mcp"}, "scope": {"drivemail"}})
		code := e.code(t, "/authorize", q)
		tk := wantTokens(t, e.tokenRequest(t, "/token", a, authNone, url.Values{"grant_type": {"authorization_code"}, "code": {code},
			"redirect_uri": {callback}, "code_verifier": {p.verifier}, "resource": {e.base + "/mcp"}}))
		e.wantWorks(t, tk.Access)
	})

	// Claude registers a confidential client per connection
	// (PostHog#48397; still so in claude-ai-mcp#1043).
	dcr := map[string]any{"redirect_uris": []string{callback}, "token_endpoint_auth_method": "client_secret_post",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}, "client_name": "Claude"}
	var a app
	t.Run("ClaudeAI_RegisterClientSecretPost_claude-ai-mcp#1043", func(t *testing.T) {
		var r reply
		r, a = e.register(t, "/oauth/register", dcr, backend)
		wantRegistered(t, r, dcr, "client_secret_post")
	})
	t.Run("ClaudeAI_RegisterClaudeCom_claude-ai-mcp#518", func(t *testing.T) {
		body := map[string]any{"redirect_uris": []string{"https://claude.com/api/mcp/auth_callback"}, "token_endpoint_auth_method": "none",
			"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}, "client_name": "Claude"}
		r, _ := e.register(t, "/oauth/register", body, backend)
		wantRegistered(t, r, body, "none")
	})

	var tk tokens
	t.Run("ClaudeAI_SignIn_PostHog#48397", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		p := newPKCE()
		q := authRequest(a, callback, p, "st-"+randomID(), url.Values{"resource": {e.base + "/mcp"}, "scope": {"drivemail offline_access"}, "prompt": {"consent"}})
		code := e.code(t, "/oauth/authorize", q)
		tk = e.exchange(t, "/oauth/token", a, authPost, code, callback, p, url.Values{"resource": {e.base + "/mcp"}})
		e.wantWorks(t, tk.Access)
	})
	for _, sc := range []struct{ name, scope string }{
		{"ClaudeAI_ScopeReadWrite_claude-ai-mcp#42", "read write"},
		{"ClaudeAI_ScopeLeadingSpace_claude-ai-mcp#453", " offline_access"},
		{"ClaudeAI_ScopePlusOfflineAccess_mcpb#188", "+offline_access"},
		{"ClaudeAI_ScopeClaudeai_claude-ai-mcp#42", "claudeai"},
		{"ClaudeAI_NoScope_claude-ai-mcp#453", omit},
	} {
		t.Run(sc.name, func(t *testing.T) {
			needs(t, a.id != "", "the registration above")
			p := newPKCE()
			q := authRequest(a, callback, p, "st-"+randomID(), url.Values{"resource": {e.base + "/mcp"}, "scope": {sc.scope}, "prompt": {"consent"}})
			code := e.code(t, "/oauth/authorize", q)
			got := e.exchange(t, "/oauth/token", a, authPost, code, callback, p, url.Values{"resource": {e.base + "/mcp"}})
			e.wantWorks(t, got.Access)
		})
	}
	t.Run("ClaudeAI_RefreshFromThreeNodes_claude-ai-mcp#975", func(t *testing.T) {
		needs(t, tk.Refresh != "", "the sign-in above")
		extra := url.Values{"resource": {e.base + "/mcp"}}
		e.wantConcurrentRefreshes(t, a, authPost, e.refreshAtOnce(t, a, authPost, tk.Refresh, 3, extra), extra)
	})
	t.Run("ClaudeAI_CIMD_lion-reader#1519", func(t *testing.T) {
		docs := newCIMDServer(t)
		id := docs.add("/oauth/mcp-oauth-client-metadata", map[string]any{"client_name": "Claude", "client_uri": "https://claude.ai",
			"redirect_uris": []string{callback}, "grant_types": []string{"authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
			"response_types": []string{"code"}, "token_endpoint_auth_method": "none"})
		a := app{id: id}
		tk := e.connect(t, a, authNone, callback, nil)
		e.wantWorks(t, tk.Access)
	})
	t.Run("ClaudeAI_CIMDOutage_claude-ai-mcp#96", func(t *testing.T) {
		docs := newCIMDServer(t)
		id := docs.add("/oauth/mcp-oauth-client-metadata", map[string]any{"client_name": "Claude",
			"redirect_uris": []string{callback}, "grant_types": []string{"authorization_code", "refresh_token"},
			"response_types": []string{"code"}, "token_endpoint_auth_method": "none"})
		a := app{id: id}
		e.connect(t, a, authNone, callback, nil) // fetched once, good
		for _, outage := range []string{"503", "html", "404"} {
			docs.setMode(outage)
			tk := e.connect(t, a, authNone, callback, nil)
			e.wantWorks(t, tk.Access)
		}
	})

	// Transport (§1.5): no session id ever echoed, calls from several
	// nodes, a fresh initialize per call, the 2026-07-28 rollout.
	t.Run("ClaudeAI_NoSessionID_claude-ai-mcp#99", func(t *testing.T) {
		_, v := e.initialize(t, e.token, "2025-11-25", "claude-ai", nil)
		e.wantSessionless(t, "claude-ai", v, "")
	})
	t.Run("ClaudeAI_UnknownSessionID_claude-ai-mcp#450", func(t *testing.T) {
		e.initialize(t, e.token, "2025-11-25", "claude-ai", nil)
		e.wantSessionless(t, "claude-ai", "2025-11-25", "mcp-session-"+randomID()+"-from-another-node")
	})
	t.Run("ClaudeAI_InitializePerCall_claude-ai-mcp#583", func(t *testing.T) {
		for range 3 {
			e.initialize(t, e.token, "2025-11-25", "claude-ai", nil)
		}
		e.callTool(t, mcpCall{token: e.token, version: "2025-11-25", method: "tools/call", params: searchArgs})
	})
	t.Run("ClaudeAI_NoProtocolHeader_claude-ai-mcp#70", func(t *testing.T) {
		session, _ := e.initialize(t, e.token, "2025-06-18", "claude-ai", nil)
		e.listTools(t, mcpCall{token: e.token, session: session, method: "tools/list"})
	})
	t.Run("ClaudeAI_HeaderAheadOfSession_SparkyFitness#2155", func(t *testing.T) {
		session, _ := e.initialize(t, e.token, "2025-11-25", "claude-ai", nil)
		e.listTools(t, mcpCall{token: e.token, session: session, version: "2026-07-28", method: "tools/list"})
		e.callTool(t, mcpCall{token: e.token, session: session, version: "2026-07-28", method: "tools/call", params: searchArgs})
	})
	t.Run("ClaudeAI_ServerDiscoverProbe_anubis-mcp#295", func(t *testing.T) {
		e.wantServerDiscover(t, "claude-ai", map[string]string{"User-Agent": "Claude-User"})
	})
}

// Claude Code: docs/clients.md's row for it (the MCP TypeScript SDK's
// client, plus its own habits).
func TestClaudeCode(t *testing.T) {
	e := setup(t)
	bun := map[string]string{"User-Agent": "Bun/1.3.0", "MCP-Protocol-Version": "2025-11-25"}

	t.Run("ClaudeCode_Challenge_rill#8410", func(t *testing.T) {
		r, _ := e.post(t, mcpCall{method: "initialize", params: initParams("2025-11-25", "claude-code"), header: map[string]string{"User-Agent": "claude-code/2.1.270 (cli)"}})
		e.wantChallenge(t, r.status, r.header)
		e.discover(t, bun, []string{"/.well-known/oauth-protected-resource/mcp"},
			[]string{"/.well-known/oauth-authorization-server"})
	})

	// The DCR fallback (its CIMD document lists portless loopback URIs;
	// see the CIMD case below).
	port := "45123"
	dcr := map[string]any{"client_name": "Claude Code (drivemail)", "redirect_uris": []string{"http://localhost:" + port + "/callback"},
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}, "token_endpoint_auth_method": "none"}
	var a app
	t.Run("ClaudeCode_Register_claude-code#37767", func(t *testing.T) {
		var r reply
		r, a = e.register(t, "/oauth/register", dcr, bun)
		wantRegistered(t, r, dcr, "none")
	})
	var tk tokens
	t.Run("ClaudeCode_EveryScopeAndConsent_claude-code#55954", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		// No scope in the challenge: it asks for every scope the AS lists,
		// offline_access added, and then prompt=consent (#94804).
		tk = e.connect(t, a, authNone, a.redirect, url.Values{"scope": {"drivemail offline_access"}, "prompt": {"consent"}})
		e.wantWorks(t, tk.Access)
	})
	t.Run("ClaudeCode_LoopbackAnotherPort_RFC8252", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		// A later run listens on another ephemeral port.
		e.connect(t, a, authNone, "http://localhost:51999/callback", nil)
	})
	// It appends a slash to the resource, or names the bare origin.
	for name, resource := range map[string]string{
		"ClaudeCode_ResourceTrailingSlash_claude-code#52871": e.base + "/mcp/",
		"ClaudeCode_ResourceOrigin_claude-code#52871":        e.base + "/",
	} {
		t.Run(name, func(t *testing.T) {
			needs(t, a.id != "", "the registration above")
			p := newPKCE()
			code := e.code(t, "/oauth/authorize", authRequest(a, a.redirect, p, "st-"+randomID(), url.Values{"resource": {resource}}))
			e.wantWorks(t, e.exchange(t, "/oauth/token", a, authNone, code, a.redirect, p, url.Values{"resource": {resource}}).Access)
		})
	}
	t.Run("ClaudeCode_ResourceOfAnotherServerRefused_RFC8707", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		// Leniency has an edge: a token for some other server is refused,
		// on a page (the user has not seen the consent page, so nothing
		// goes to the redirect URI: RFC 9700 §4.11.2).
		q := authRequest(a, a.redirect, newPKCE(), "st-x", url.Values{"resource": {"https://other.example.com/mcp"}})
		got := e.authorize(t, "/oauth/authorize", q)
		if got.redirect != nil || got.last.status != 400 || !strings.Contains(string(got.last.body), "issues tokens only for") {
			t.Fatalf("resource of another server: %v %v, want a 400 page saying which resource drivemail serves", got.redirect, got.last)
		}
	})
	t.Run("ClaudeCode_ThreeProcessesRefresh_claude-code#85236", func(t *testing.T) {
		needs(t, tk.Refresh != "", "the sign-in above")
		extra := url.Values{"resource": {e.base + "/mcp"}}
		e.wantConcurrentRefreshes(t, a, authNone, e.refreshAtOnce(t, a, authNone, tk.Refresh, 3, extra), extra)
	})
	t.Run("ClaudeCode_CIMDPortlessLoopback_claude-code#41011", func(t *testing.T) {
		docs := newCIMDServer(t)
		id := docs.add("/oauth/claude-code-client-metadata", map[string]any{"client_name": "Claude Code",
			"redirect_uris":  []string{"http://localhost/callback", "http://127.0.0.1/callback"},
			"grant_types":    []string{"authorization_code", "refresh_token"},
			"response_types": []string{"code"}, "token_endpoint_auth_method": "none"})
		tk := e.connect(t, app{id: id}, authNone, "http://localhost:53682/callback", nil)
		e.wantWorks(t, tk.Access)
	})

	// Transport (§2.5).
	t.Run("ClaudeCode_StaleSessionID_claude-code#8338", func(t *testing.T) {
		session, v := e.initialize(t, e.token, "2025-11-25", "claude-code", nil)
		if session == "" {
			session = "stale-" + randomID()
		}
		// The id from a server that restarted, or another replica's.
		e.wantSessionless(t, "claude-code", v, session+"x")
	})
	t.Run("ClaudeCode_GETStreamNot404_claude-code#62198", func(t *testing.T) {
		session, _ := e.initialize(t, e.token, "2025-11-25", "claude-code", nil)
		e.wantGETStream(t, session)
	})
	t.Run("ClaudeCode_MetaAheadOfHeader_claude-code#93290", func(t *testing.T) {
		session, _ := e.initialize(t, e.token, "2025-11-25", "claude-code", nil)
		// Its 2026-07-28 _meta (every request carries all three keys) and
		// Mcp-Method (SEP-2243), under the legacy header of the session it
		// negotiated.
		params := map[string]any{"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "claude-code", "version": "2.1.260"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}}
		e.listTools(t, mcpCall{token: e.token, session: session, version: "2025-11-25", params: params, header: modernHeaders("tools/list")})
	})
	t.Run("ClaudeCode_ServerDiscoverProbe_claude-code#93290", func(t *testing.T) {
		e.wantServerDiscover(t, "claude-code", modernHeaders("server/discover"))
	})
	t.Run("ClaudeCode_DELETEOnClose_TS-SDK", func(t *testing.T) {
		session, _ := e.initialize(t, e.token, "2025-11-25", "claude-code", nil)
		h := map[string]string{"Authorization": "Bearer " + e.token, "MCP-Protocol-Version": "2025-11-25"}
		if session != "" {
			h["Mcp-Session-Id"] = session
		}
		r := e.do(t, req{method: "DELETE", url: "/mcp", header: h})
		if r.status != 200 && r.status != 204 && r.status != 405 {
			t.Fatalf("DELETE /mcp: %v, want 200, 204 or 405", r)
		}
	})
}

// needs skips a step whose earlier step failed, saying which.
func needs(t *testing.T, ok bool, what string) {
	t.Helper()
	if !ok {
		t.Skipf("needs %s, which failed", what)
	}
}
