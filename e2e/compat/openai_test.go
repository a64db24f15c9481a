package compat

import (
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"testing"
)

// ChatGPT developer-mode connectors and Apps SDK apps: docs/clients.md's row.
func TestChatGPT(t *testing.T) {
	e := setup(t)
	aiohttp := map[string]string{"User-Agent": "Python/3.12 aiohttp/3.13.3", "Accept": "application/json"}
	const callback = "https://chatgpt.com/connector_platform_oauth_redirect"

	t.Run("ChatGPT_Discovery_apps-sdk-auth", func(t *testing.T) {
		e.discover(t, aiohttp,
			[]string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"},
			[]string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"})
	})

	// mid-2025 it asked for client_secret_post and required the echo
	// (gts360/django-oauth-toolkit-dcr#1); 2026 reports say none (gbrain#894).
	body := map[string]any{"client_name": "ChatGPT", "redirect_uris": []string{callback},
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"token_endpoint_auth_method": "client_secret_post"}
	var a app
	t.Run("ChatGPT_RegisterSecretPostEchoed_django-oauth-toolkit-dcr#1", func(t *testing.T) {
		var r reply
		r, a = e.register(t, "/oauth/register", body, aiohttp)
		wantRegistered(t, r, body, "client_secret_post")
	})
	t.Run("ChatGPT_RegisterNone_gbrain#894", func(t *testing.T) {
		none := map[string]any{"client_name": "ChatGPT", "redirect_uris": []string{"https://chatgpt.com/connector/oauth/c_8f2kq1x9zzab"},
			"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}, "token_endpoint_auth_method": "none"}
		r, b := e.register(t, "/oauth/register", none, aiohttp)
		wantRegistered(t, r, none, "none")
		needs(t, b.id != "", "this registration")
		e.connect(t, b, authNone, b.redirect, nil)
	})
	var tk tokens
	t.Run("ChatGPT_IssAndState_apps-sdk-auth", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		p := newPKCE()
		state := "oauth_s_691b55f5b11481919ddp59nge4998443f"
		got := e.authorize(t, "/oauth/authorize", authRequest(a, callback, p, state,
			url.Values{"resource": {e.base + "/mcp"}, "scope": {"drivemail"}}))
		e.wantIss(t, got)
		if got.params.Get("code") == "" || got.params.Get("state") != state {
			t.Fatalf("redirect %s: want a code and state %q", got.redirect, state)
		}
		tk = e.exchange(t, "/oauth/token", a, authPost, got.params.Get("code"), callback, p, url.Values{"resource": {e.base + "/mcp"}})
		e.wantWorks(t, tk.Access)
	})
	t.Run("ChatGPT_IssOnErrorRedirect_RFC9207", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		// The user presses Deny on drivemail's consent page: the error
		// answer at the redirect URI must carry iss too. (A malformed
		// request, PKCE plain say, is a page and never a redirect: the
		// user has not seen the consent page yet, RFC 9700 §4.11.2.)
		q := authRequest(a, callback, newPKCE(), "oauth_s_err", url.Values{"resource": {e.base + "/mcp"}})
		got := e.answerConsent(t, "/oauth/authorize", q, "deny")
		e.wantIss(t, got)
		if got.params.Get("error") != "access_denied" || got.params.Get("state") != "oauth_s_err" {
			t.Fatalf("redirect %s: want access_denied and the state", got.redirect)
		}
		q.Set("code_challenge_method", "plain")
		if plain := e.authorize(t, "/oauth/authorize", q); plain.redirect != nil || plain.last.status != 400 {
			t.Fatalf("PKCE plain: %v %v, want a 400 page and no redirect", plain.redirect, plain.last)
		}
	})
	t.Run("ChatGPT_ReconnectWithoutScope_openai-community#1366784", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		p := newPKCE()
		code := e.code(t, "/oauth/authorize", authRequest(a, callback, p, "oauth_s_"+randomID(), url.Values{"resource": {e.base + "/mcp"}}))
		e.wantWorks(t, e.exchange(t, "/oauth/token", a, authPost, code, callback, p, url.Values{"resource": {e.base + "/mcp"}}).Access)
	})
	t.Run("ChatGPT_RefreshWithResource_apps-sdk-auth", func(t *testing.T) {
		needs(t, tk.Refresh != "", "the sign-in above")
		extra := url.Values{"resource": {e.base + "/mcp"}}
		e.wantConcurrentRefreshes(t, a, authPost, e.refreshAtOnce(t, a, authPost, tk.Refresh, 3, extra), extra)
	})

	// Transport (§3.5).
	t.Run("ChatGPT_NoSessionID_ext-apps#647", func(t *testing.T) {
		_, v := e.initialize(t, e.token, "2025-06-18", "openai-mcp", map[string]string{"User-Agent": "openai-mcp/1.0.0 (ChatGPT)"})
		e.wantSessionless(t, "openai-mcp", v, "")
	})
	t.Run("ChatGPT_GETAfterIdleWithDeadToken_openai-community#1367543", func(t *testing.T) {
		// After a long idle it has opened a stream with an expired token:
		// it needs the 401 challenge to refresh, not a 404 or a 200.
		status, h := e.headersOnly(t, req{method: "GET", url: "/mcp", header: map[string]string{
			"Authorization": "Bearer dm_at_expired" + randomID(), "Accept": "text/event-stream"}})
		e.wantChallenge(t, status, h)
	})
}

// Codex CLI (and the Codex IDE extension): docs/clients.md's row, on rmcp.
func TestCodex(t *testing.T) {
	e := setup(t)
	ua := map[string]string{"User-Agent": "codex-mcp-client/0.98.0"}
	// callback_id: base64url(SHA-256(server URL)[:9]) (perform_oauth_login.rs).
	sum := sha256.Sum256([]byte(e.base + "/mcp"))
	callbackID := base64.RawURLEncoding.EncodeToString(sum[:9])
	redirect := "http://127.0.0.1:41377/callback/" + callbackID

	t.Run("Codex_GETProbe_rmcp-auth.rs", func(t *testing.T) {
		// rmcp probes the MCP URL with GET and no token first.
		status, h := e.headersOnly(t, req{method: "GET", url: "/mcp", header: ua})
		e.wantChallenge(t, status, h)
		e.discover(t, ua, []string{"/.well-known/oauth-protected-resource/mcp"},
			[]string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"})
	})
	body := map[string]any{"client_name": "Codex", "redirect_uris": []string{redirect},
		"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none",
		"response_types": []string{"code"}, "scope": "drivemail offline_access", "application_type": "native"}
	var a app
	t.Run("Codex_RegisterNative_rmcp-register_client", func(t *testing.T) {
		var r reply
		r, a = e.register(t, "/oauth/register", body, ua)
		wantRegistered(t, r, body, "none")
	})
	var tk tokens
	t.Run("Codex_SignInValidatesIss_codex-mcp-docs", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		p := newPKCE()
		got := e.authorize(t, "/oauth/authorize", authRequest(a, redirect, p, "st-"+randomID(),
			url.Values{"resource": {e.base + "/mcp"}, "scope": {"drivemail offline_access"}}))
		e.wantIss(t, got)
		if got.params.Get("code") == "" {
			t.Fatalf("no code: %s", got.redirect)
		}
		tk = e.exchange(t, "/oauth/token", a, authNone, got.params.Get("code"), redirect, p, url.Values{"resource": {e.base + "/mcp"}})
		e.wantWorks(t, tk.Access)
	})
	t.Run("Codex_LoopbackAnotherPortSameCallbackID_RFC8252", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		e.connect(t, a, authNone, "http://127.0.0.1:50001/callback/"+callbackID, nil)
	})
	t.Run("Codex_OtherCallbackIDRefused_RFC8252", func(t *testing.T) {
		needs(t, a.id != "", "the registration above")
		// Only the port may differ: the path, with its callback id, is exact.
		wantRefused(t, e.authorize(t, "/oauth/authorize", authRequest(a, "http://127.0.0.1:41377/callback/another0000",
			newPKCE(), "st", url.Values{"resource": {e.base + "/mcp"}})))
	})
	t.Run("Codex_RefreshWithoutResource_codex#33403", func(t *testing.T) {
		needs(t, tk.Refresh != "", "the sign-in above")
		next := wantTokens(t, e.tokenRequest(t, "/oauth/token", a, authNone, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tk.Refresh}}))
		e.wantWorks(t, next.Access)
		tk = next
	})
	t.Run("Codex_RefreshAddsOfflineAccess_SEP-2207", func(t *testing.T) {
		needs(t, tk.Refresh != "", "the refresh above")
		next := wantTokens(t, e.tokenRequest(t, "/oauth/token", a, authNone, url.Values{"grant_type": {"refresh_token"},
			"refresh_token": {tk.Refresh}, "scope": {"drivemail offline_access"}, "resource": {e.base + "/mcp"}}))
		e.wantWorks(t, next.Access)
		tk = next
	})
	t.Run("Codex_SameRefreshFiveTimesInASecond_codex#46028", func(t *testing.T) {
		needs(t, tk.Refresh != "", "the refresh above")
		e.wantConcurrentRefreshes(t, a, authNone, e.refreshAtOnce(t, a, authNone, tk.Refresh, 5, nil), nil)
	})
	t.Run("Codex_StaleSessionID_rmcp", func(t *testing.T) {
		_, v := e.initialize(t, e.token, "2025-06-18", "codex-mcp-client", ua)
		e.wantSessionless(t, "codex-mcp-client", v, "0f6d3c8e-5bd5-4c2e-9a57-3f0e6f0c1d2a")
	})
}
