package compat

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// The checks several clients need in the same way, named after the
// checklist items (docs/clients.md, The checklist) they hold.

// wantChallenge checks an unauthenticated answer from /mcp: 401 with a
// Bearer challenge naming the protected-resource metadata by an absolute
// URL on the same origin (A1, A2).
func (e *env) wantChallenge(t *testing.T, status int, h map[string][]string) {
	t.Helper()
	if status != 401 {
		t.Fatalf("unauthenticated: HTTP %d, want 401 with a Bearer challenge", status)
	}
	challenge := ""
	if v := h["Www-Authenticate"]; len(v) > 0 {
		challenge = v[0]
	}
	scheme, p := wwwAuthParams(challenge)
	if !strings.EqualFold(scheme, "Bearer") {
		t.Fatalf("WWW-Authenticate %q: want a Bearer challenge", challenge)
	}
	if want := e.base + "/.well-known/oauth-protected-resource/mcp"; p["resource_metadata"] != want {
		t.Errorf("resource_metadata %q, want the absolute same-origin %q", p["resource_metadata"], want)
	}
}

// challengeScope returns the scope a 401 challenge names.
func challengeScope(h map[string][]string) string {
	if v := h["Www-Authenticate"]; len(v) > 0 {
		_, p := wwwAuthParams(v[0])
		return p["scope"]
	}
	return ""
}

// wantPRM checks protected-resource metadata (A3, A4, A5).
func (e *env) wantPRM(t *testing.T, r reply) map[string]any {
	t.Helper()
	m := r.object()
	if r.status != 200 || m == nil {
		t.Fatalf("protected-resource metadata: %v", r)
	}
	if m["resource"] != e.base+"/mcp" {
		t.Errorf("resource %v, want exactly %s/mcp", m["resource"], e.base)
	}
	if as, _ := m["authorization_servers"].([]any); len(as) != 1 || as[0] != e.base {
		t.Errorf("authorization_servers %v, want [%s]", m["authorization_servers"], e.base)
	}
	scopes := strs(m["scopes_supported"])
	if len(scopes) == 0 || slices.Contains(scopes, "offline_access") {
		t.Errorf("scopes_supported %v: want the minimal scopes the tools need, without offline_access", scopes)
	}
	if !slices.Contains(strs(m["bearer_methods_supported"]), "header") {
		t.Errorf("bearer_methods_supported %v, want header", m["bearer_methods_supported"])
	}
	return m
}

// wantASMetadata checks authorization-server metadata (A7).
func (e *env) wantASMetadata(t *testing.T, r reply) map[string]any {
	t.Helper()
	m := r.object()
	if r.status != 200 || m == nil {
		t.Fatalf("authorization-server metadata: %v", r)
	}
	if m["issuer"] != e.base {
		t.Errorf("issuer %v, want exactly %s", m["issuer"], e.base)
	}
	for _, k := range []string{"authorization_endpoint", "token_endpoint", "registration_endpoint"} {
		if u, err := url.Parse(str(m[k])); err != nil || u.Scheme+"://"+u.Host != e.base {
			t.Errorf("%s %v: want an absolute URL on %s", k, m[k], e.base)
		}
	}
	for k, want := range map[string][]string{
		"response_types_supported":              {"code"},
		"grant_types_supported":                 {"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      {"S256"},
		"token_endpoint_auth_methods_supported": {"none", "client_secret_post", "client_secret_basic"},
	} {
		for _, w := range want {
			if !slices.Contains(strs(m[k]), w) {
				t.Errorf("%s %v lacks %q", k, m[k], w)
			}
		}
	}
	for _, k := range []string{"client_id_metadata_document_supported", "authorization_response_iss_parameter_supported"} {
		if m[k] != true {
			t.Errorf("%s is %v, want true", k, m[k])
		}
	}
	if len(strs(m["scopes_supported"])) == 0 {
		t.Errorf("scopes_supported is empty")
	}
	return m
}

// discover fetches each metadata URL as a client probes it, with its
// headers, and checks each answers fast and in full (A3, A6, A9, A10).
func (e *env) discover(t *testing.T, header map[string]string, prm, as []string) {
	t.Helper()
	for _, path := range prm {
		start := time.Now()
		e.wantPRM(t, e.do(t, req{method: "GET", url: path, header: header}))
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("GET %s took %v; Claude gives discovery 10 s in all", path, d)
		}
	}
	for _, path := range as {
		e.wantASMetadata(t, e.do(t, req{method: "GET", url: path, header: header}))
	}
}

// wantRegistered checks a registration answer echoes what a client reads
// back (B2): the auth method it asked for, a secret exactly when that
// method needs one, and its metadata.
func wantRegistered(t *testing.T, r reply, body map[string]any, method string) {
	t.Helper()
	m := r.object()
	if r.status != 201 || m == nil || str(m["client_id"]) == "" {
		t.Fatalf("registration: %v", r)
	}
	if got := str(m["token_endpoint_auth_method"]); got != method {
		t.Errorf("token_endpoint_auth_method %q, want %q as requested", got, method)
	}
	secret := str(m["client_secret"])
	switch {
	case method == "none" && secret != "":
		t.Errorf("a public client (none) got a client_secret")
	case method != "none" && secret == "":
		t.Errorf("a %s client got no client_secret", method)
	case method != "none" && fmt.Sprint(m["client_secret_expires_at"]) != "0":
		t.Errorf("client_secret_expires_at %v, want 0 (never)", m["client_secret_expires_at"])
	}
	if _, ok := m["client_id_issued_at"].(float64); !ok {
		t.Errorf("no client_id_issued_at")
	}
	if want, _ := body["redirect_uris"].([]string); !slices.Equal(strs(m["redirect_uris"]), want) {
		t.Errorf("redirect_uris %v, want %v echoed", m["redirect_uris"], want)
	}
	if !slices.Contains(strs(m["grant_types"]), "refresh_token") {
		t.Errorf("grant_types %v: without refresh_token the client must sign in again every hour", m["grant_types"])
	}
	if !slices.Equal(strs(m["response_types"]), []string{"code"}) {
		t.Errorf("response_types %v, want [code]", m["response_types"])
	}
	if name, ok := body["client_name"].(string); ok && str(m["client_name"]) != name {
		t.Errorf("client_name %v, want %q", m["client_name"], name)
	}
}

// wantIss checks the authorization response names the issuer (C6, RFC 9207).
func (e *env) wantIss(t *testing.T, a authorization) {
	t.Helper()
	if a.redirect == nil {
		t.Fatalf("the authorization stopped at drivemail: %v", a.last)
	}
	if got := a.params.Get("iss"); got != e.base {
		t.Errorf("iss %q on the redirect, want %q", got, e.base)
	}
}

// wantRefused checks an authorization stopped on drivemail's own page: a
// redirect URI it would not send a code to.
func wantRefused(t *testing.T, a authorization) {
	t.Helper()
	if a.redirect != nil {
		t.Fatalf("redirected to %s; want drivemail to stop on its own page", a.redirect)
	}
	if a.last.status < 400 || a.last.status >= 500 {
		t.Fatalf("want a 4xx page, got %v", a.last)
	}
}

// wantSessionless checks a request works with the given session header
// (none, unknown or stale) after its own initialize, and never gets the
// 404 that clients take for "session expired" (E1).
func (e *env) wantSessionless(t *testing.T, client, version, session string) {
	t.Helper()
	r, rr := e.post(t, mcpCall{token: e.token, session: session, version: version, method: "tools/list"})
	if r.status == 404 {
		t.Fatalf("tools/list with session id %q: 404; this client does not initialize again and fails every call", session)
	}
	wantTools(t, r, rr)
	r, rr = e.post(t, mcpCall{token: e.token, session: session, version: version, method: "tools/call", params: searchArgs})
	wantToolResult(t, r, rr)
}

// wantServerDiscover checks the 2026-07-28 probe: answered, or refused
// in a way clients take as "use initialize" (HTTP 4xx other than 401 and
// 403 with a JSON-RPC error, or HTTP 200 with -32601, -32022 or -32000);
// never 401, 403 or 5xx, which they take as hard errors (E7). Then the
// fallback, initialize, must work.
func (e *env) wantServerDiscover(t *testing.T, client string, header map[string]string) {
	t.Helper()
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": client, "version": "1.0.0"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	r, rr := e.post(t, mcpCall{token: e.token, version: "2026-07-28", method: "server/discover",
		params: map[string]any{"_meta": meta}, id: "server-discover-probe-1", header: header})
	switch {
	case r.status == 401 || r.status == 403 || r.status >= 500:
		t.Fatalf("server/discover: %v; clients take this for a hard error instead of falling back", r)
	case rr == nil:
		t.Fatalf("server/discover: %v; no JSON-RPC answer for the client to classify", r)
	case rr.Error == nil:
		var res map[string]any
		if r.status != 200 || json.Unmarshal(rr.Result, &res) != nil || len(res) == 0 {
			t.Fatalf("server/discover result: %v", r)
		}
	case r.status >= 400:
		// a 4xx with a JSON-RPC error: the client falls back
	case rr.Error.Code != -32601 && rr.Error.Code != -32022 && rr.Error.Code != -32000:
		t.Fatalf("server/discover: HTTP 200 with error %d %q: want -32601 (method not found) or -32022 (unsupported version)", rr.Error.Code, rr.Error.Message)
	}
	e.initialize(t, e.token, "2025-11-25", client, nil)
}

// modernHeaders are the request headers a 2026-07-28 client adds (SEP-2243).
func modernHeaders(method string) map[string]string {
	return map[string]string{"Mcp-Method": method}
}

// wantGETStream checks an authenticated GET on /mcp: an event stream, or
// 405 naming POST; never 404, which Claude Code takes for an expired
// session (E3).
func (e *env) wantGETStream(t *testing.T, session string) {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + e.token, "Accept": "text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
	if session != "" {
		h["Mcp-Session-Id"] = session
	}
	status, hdr := e.headersOnly(t, req{method: "GET", url: "/mcp", header: h})
	switch {
	case status == 200 && strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream"):
	case status == 405 && strings.Contains(hdr.Get("Allow"), "POST"):
	default:
		t.Fatalf("GET /mcp: HTTP %d (Allow %q): want an event stream or 405 with Allow: POST", status, hdr.Get("Allow"))
	}
}

func strs(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
