package server

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/tools"
)

// A browser MCP client (the Inspector on a loopback page, web clients on
// their own origins) can call /mcp of a public server: its preflight is
// answered, and its scripts can read the session id and the 401's
// challenge (checklist E2, E9). Foreign origins still get 403, and the
// upload route keeps to the server's own origin.
func TestCORSForBrowserClients(t *testing.T) {
	base, _ := url.Parse("https://mail.example.com")
	h := NewServer(Deps{BaseURL: base, Auth: fakeAuth{base: base.String()}, Tools: tools.Deps{Drive: fakeDrive{}, Mail: &fakeMail{}}, Store: fakeStore{}})
	do := func(method, path, origin string, headers map[string]string, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, "https://mail.example.com"+path, strings.NewReader(body))
		req.Header.Set("Origin", origin)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	preflight := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type,mcp-protocol-version,mcp-session-id,x-custom"}
	for _, origin := range []string{"http://localhost:6274", "http://127.0.0.1:6274", "https://claude.ai", "https://vscode.dev", "https://mail.example.com"} {
		rec := do("OPTIONS", "/mcp", origin, preflight, "")
		if rec.Code != http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Origin") != origin ||
			!strings.Contains(rec.Header().Get("Access-Control-Allow-Methods"), "POST") ||
			rec.Header().Get("Access-Control-Allow-Headers") != preflight["Access-Control-Request-Headers"] ||
			rec.Header().Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("preflight from %s: %d %v", origin, rec.Code, rec.Header())
		}
	}
	if rec := do("OPTIONS", "/mcp", "https://claude.ai", map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "bad header\r"}, ""); rec.Header().Get("Access-Control-Allow-Headers") != corsAllowHeaders {
		t.Errorf("preflight asking for unreadable headers got Allow-Headers %q", rec.Header().Get("Access-Control-Allow-Headers"))
	}
	for _, origin := range []string{"https://evil.example", "null", "http://mail.example.com", "https://claude.ai.evil.example"} {
		rec := do("OPTIONS", "/mcp", origin, preflight, "")
		if rec.Code != http.StatusForbidden || rec.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight from %s: %d, Allow-Origin %q; want 403 without", origin, rec.Code, rec.Header().Get("Access-Control-Allow-Origin"))
		}
	}

	headers := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	rec := do("POST", "/mcp", "http://localhost:6274", headers, initBody)
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("Access-Control-Allow-Origin") != "http://localhost:6274" ||
		!strings.Contains(rec.Header().Get("Access-Control-Expose-Headers"), "WWW-Authenticate") {
		t.Errorf("a stranger's POST from the Inspector: %d %v; want a 401 its script can read", rec.Code, rec.Header())
	}
	headers["Authorization"] = "Bearer " + testToken
	rec = do("POST", "/mcp", "https://claude.ai", headers, initBody)
	if rec.Code != http.StatusOK || rec.Header().Get("Mcp-Session-Id") == "" || rec.Header().Get("Access-Control-Allow-Origin") != "https://claude.ai" ||
		!strings.Contains(rec.Header().Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Errorf("initialize from claude.ai: %d %v", rec.Code, rec.Header())
	}
	if rec := do("POST", "/upload", "https://claude.ai", map[string]string{"Authorization": "Bearer " + testToken}, "x"); rec.Code != http.StatusForbidden {
		t.Errorf("POST /upload from claude.ai: %d, want 403 (uploads keep to the server's origin)", rec.Code)
	}
}
