package compat

import (
	"strings"
	"testing"
)

// What every client relies on, beyond any one client's habits: checklist
// items with no client-specific evidence.
func TestAnyClient(t *testing.T) {
	e := setup(t)

	t.Run("AnyClient_MetadataEverywhereCachedBriefly_checklist-A3-A9", func(t *testing.T) {
		// rmcp's last candidate is the path-appended form.
		for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource", "/mcp/.well-known/oauth-protected-resource"} {
			r := e.do(t, req{method: "GET", url: path, header: map[string]string{"Origin": "https://example.org"}})
			e.wantPRM(t, r)
			if r.header.Get("Access-Control-Allow-Origin") != "*" {
				t.Errorf("GET %s: Access-Control-Allow-Origin %q, want *", path, r.header.Get("Access-Control-Allow-Origin"))
			}
			if cc := r.header.Get("Cache-Control"); !strings.Contains(cc, "max-age=") {
				t.Errorf("GET %s: Cache-Control %q, want a short max-age", path, cc)
			}
		}
	})
	t.Run("AnyClient_InitializeEveryVersion_checklist-E6", func(t *testing.T) {
		for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
			session, got := e.initialize(t, e.token, v, "compat", nil)
			if got != v {
				t.Errorf("initialize %s: negotiated %q, want the version asked for", v, got)
			}
			e.listTools(t, mcpCall{token: e.token, session: session, version: got})
		}
	})
	t.Run("AnyClient_AuthBeforeMethod_checklist-A1", func(t *testing.T) {
		// A probe with any method and no token learns where to sign in.
		for _, m := range []string{"GET", "HEAD", "DELETE", "PUT", "PATCH"} {
			status, h := e.headersOnly(t, req{method: m, url: "/mcp"})
			e.wantChallenge(t, status, h)
		}
	})
	t.Run("AnyClient_OtherMethods405WithAllow_checklist-E3", func(t *testing.T) {
		for _, m := range []string{"PUT", "PATCH"} {
			status, h := e.headersOnly(t, req{method: m, url: "/mcp", header: map[string]string{"Authorization": "Bearer " + e.token}})
			if status != 405 || !strings.Contains(h.Get("Allow"), "POST") {
				t.Errorf("%s /mcp: HTTP %d (Allow %q), want 405 with Allow naming POST", m, status, h.Get("Allow"))
			}
		}
	})
	t.Run("AnyClient_WebClientOrigins_checklist-E9", func(t *testing.T) {
		// Browser-based clients send their page's origin; a page of any
		// other site must not reach /mcp with a user's token (DNS rebinding).
		for origin, want := range map[string]int{
			"https://claude.ai": 200, "https://chatgpt.com": 200, "https://vscode.dev": 200,
			"http://localhost:6274": 200, "http://127.0.0.1:6274": 200, "https://evil.example": 403,
		} {
			r, _ := e.post(t, mcpCall{token: e.token, method: "initialize", params: initParams("2025-11-25", "compat"), header: map[string]string{"Origin": origin}})
			if r.status != want {
				t.Errorf("initialize with Origin %s: %v, want HTTP %d", origin, r, want)
			}
		}
	})
	t.Run("AnyClient_DeadAccessToken401_checklist-E8", func(t *testing.T) {
		r, _ := e.post(t, mcpCall{token: "dm_at_" + randomID() + randomID(), method: "tools/list", version: "2025-11-25"})
		e.wantChallenge(t, r.status, r.header)
	})
}
