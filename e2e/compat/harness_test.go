// Package compat replays what real MCP clients send (the request shapes their
// source code or public bug reports show, each case named after its
// evidence; docs/clients.md lists them) against a
// running `drivemail serve --demo`, and checks each gets the answer that
// client needs. e2e/compat/run starts the server and sets COMPAT_BASE_URL,
// DEMO_TOKEN and EMULATOR_URL; without them every test skips.
package compat

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// env is the drivemail under test.
type env struct {
	base     string // drivemail's origin, without a trailing slash
	token    string // DEMO_TOKEN: a ready access token for the demo user
	emulator string // the demo's Google emulator
	client   *http.Client
}

// setup returns the server under test, or skips when none is given.
func setup(t *testing.T) *env {
	t.Helper()
	e := &env{
		base:     strings.TrimSuffix(os.Getenv("COMPAT_BASE_URL"), "/"),
		token:    os.Getenv("DEMO_TOKEN"),
		emulator: strings.TrimSuffix(os.Getenv("EMULATOR_URL"), "/"),
	}
	if e.base == "" || e.token == "" || e.emulator == "" {
		t.Skip("no server under test: e2e/compat/run starts `drivemail serve --demo` and sets COMPAT_BASE_URL, DEMO_TOKEN and EMULATOR_URL")
	}
	e.client = &http.Client{
		Timeout:       20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return e
}

// reply is a whole HTTP answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) String() string {
	b := string(r.body)
	if len(b) > 400 {
		b = b[:400] + "…"
	}
	return fmt.Sprintf("HTTP %d %s", r.status, strings.TrimSpace(b))
}

// object decodes a JSON object body; nil if it is not one.
func (r reply) object() map[string]any {
	var m map[string]any
	if json.Unmarshal(r.body, &m) != nil {
		return nil
	}
	return m
}

// req is one HTTP request a client sends.
type req struct {
	method, url string
	body        string
	header      map[string]string
}

// do sends r and reads the whole answer (redirects are not followed).
func (e *env) do(t *testing.T, r req) reply {
	t.Helper()
	return e.doWith(t, e.client, r)
}

func (e *env) doWith(t *testing.T, c *http.Client, r req) reply {
	t.Helper()
	u := r.url
	if strings.HasPrefix(u, "/") {
		u = e.base + u
	}
	hr, err := http.NewRequest(r.method, u, strings.NewReader(r.body))
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, u, err)
	}
	for k, v := range r.header {
		if k == "Host" {
			hr.Host = v
			continue
		}
		hr.Header.Set(k, v)
	}
	resp, err := c.Do(hr)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", r.method, u, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: body}
}

// headersOnly sends r and returns the status and headers without waiting
// for the body: a GET on /mcp may open an event stream that never ends.
func (e *env) headersOnly(t *testing.T, r req) (int, http.Header) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, r.method, e.base+r.url, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	resp, err := e.client.Do(hr)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.url, err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// ---- MCP over streamable HTTP ----

// rpcReply is one JSON-RPC answer.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// mcpCall is one POST to /mcp as a client shapes it.
type mcpCall struct {
	token   string // bearer token; "" sends none
	session string // Mcp-Session-Id to echo; "" sends none
	version string // MCP-Protocol-Version header; "" sends none
	accept  string // default "application/json, text/event-stream"
	header  map[string]string
	method  string
	params  any
	id      any // default 1; nil params and id "" make a notification
}

// post sends the call and returns the HTTP answer and, when the body is
// JSON or an event stream with a JSON-RPC answer, that answer.
func (e *env) post(t *testing.T, c mcpCall) (reply, *rpcReply) {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": c.method}
	if c.id == "" {
		// a notification
	} else if c.id == nil {
		msg["id"] = 1
	} else {
		msg["id"] = c.id
	}
	if c.params != nil {
		msg["params"] = c.params
	}
	body, _ := json.Marshal(msg)
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	if c.accept != "" {
		h["Accept"] = c.accept
	}
	if c.token != "" {
		h["Authorization"] = "Bearer " + c.token
	}
	if c.session != "" {
		h["Mcp-Session-Id"] = c.session
	}
	if c.version != "" {
		h["MCP-Protocol-Version"] = c.version
	}
	for k, v := range c.header {
		h[k] = v
	}
	r := e.do(t, req{method: "POST", url: "/mcp", body: string(body), header: h})
	return r, parseRPC(r)
}

// parseRPC finds the JSON-RPC answer in a JSON body or an event stream.
func parseRPC(r reply) *rpcReply {
	ct := r.header.Get("Content-Type")
	var candidates [][]byte
	if strings.HasPrefix(ct, "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(r.body))
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				candidates = append(candidates, []byte(strings.TrimSpace(d)))
			}
		}
	} else {
		candidates = append(candidates, r.body)
	}
	for _, c := range candidates {
		var rr rpcReply
		if json.Unmarshal(c, &rr) == nil && (rr.Result != nil || rr.Error != nil) {
			return &rr
		}
	}
	return nil
}

// initParams is an initialize request's params for protocol version v.
func initParams(v, client string) map[string]any {
	return map[string]any{
		"protocolVersion": v,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": client, "version": "1.0.0"},
	}
}

// initialize runs the handshake as client and returns the session id the
// server gave (if any) and the negotiated version.
func (e *env) initialize(t *testing.T, token, version, client string, header map[string]string) (session, negotiated string) {
	t.Helper()
	r, rr := e.post(t, mcpCall{token: token, method: "initialize", params: initParams(version, client), header: header})
	if r.status != 200 || rr == nil || rr.Error != nil {
		t.Fatalf("initialize (%s, %s): %v", client, version, r)
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(rr.Result, &res)
	session = r.header.Get("Mcp-Session-Id")
	e.post(t, mcpCall{token: token, session: session, version: res.ProtocolVersion, method: "notifications/initialized", id: "", header: header})
	return session, res.ProtocolVersion
}

// wantTools checks an answer is a tools/list result with drivemail's tools.
func wantTools(t *testing.T, r reply, rr *rpcReply) {
	t.Helper()
	if r.status != 200 || rr == nil || rr.Error != nil {
		t.Fatalf("tools/list: %v", r)
	}
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(rr.Result, &res); err != nil || len(res.Tools) < 5 {
		t.Fatalf("tools/list result without drivemail's tools: %s", rr.Result)
	}
}

// wantToolResult checks an answer is a successful tools/call result.
func wantToolResult(t *testing.T, r reply, rr *rpcReply) map[string]any {
	t.Helper()
	if r.status != 200 || rr == nil || rr.Error != nil {
		t.Fatalf("tools/call: %v", r)
	}
	var res map[string]any
	if err := json.Unmarshal(rr.Result, &res); err != nil || res["isError"] == true {
		t.Fatalf("tools/call refused: %s", rr.Result)
	}
	return res
}

// listTools posts a tools/list call and checks the answer.
func (e *env) listTools(t *testing.T, c mcpCall) {
	t.Helper()
	c.method = "tools/list"
	r, rr := e.post(t, c)
	wantTools(t, r, rr)
}

// callTool posts a tools/call and checks it succeeded.
func (e *env) callTool(t *testing.T, c mcpCall) map[string]any {
	t.Helper()
	c.method = "tools/call"
	r, rr := e.post(t, c)
	return wantToolResult(t, r, rr)
}

// searchArgs is a drive_search call that finds the demo's PDF.
var searchArgs = map[string]any{"name": "drive_search", "arguments": map[string]any{"query": "", "mime_type": "pdf"}}

// ---- OAuth ----

// app is an OAuth client as a client registered it.
type app struct {
	id, secret string
	method     string // token_endpoint_auth_method the server answered
	redirect   string
}

// register sends a registration body to path and returns the answer and
// the client it made (zero when refused).
func (e *env) register(t *testing.T, path string, body map[string]any, header map[string]string) (reply, app) {
	t.Helper()
	b, _ := json.Marshal(body)
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json"}
	for k, v := range header {
		h[k] = v
	}
	r := e.do(t, req{method: "POST", url: path, body: string(b), header: h})
	m := r.object()
	if r.status != 201 || m == nil {
		return r, app{}
	}
	a := app{method: str(m["token_endpoint_auth_method"])}
	a.id, a.secret = str(m["client_id"]), str(m["client_secret"])
	if uris, ok := body["redirect_uris"].([]string); ok && len(uris) > 0 {
		a.redirect = uris[0]
	}
	return r, a
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// pkce is a code verifier and its S256 challenge.
type pkce struct{ verifier, challenge string }

func newPKCE() pkce {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(v))
	return pkce{v, base64.RawURLEncoding.EncodeToString(sum[:])}
}

// authRequest is the query of an authorization request.
func authRequest(a app, redirect string, p pkce, state string, extra url.Values) url.Values {
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {a.id},
		"redirect_uri":          {redirect},
		"state":                 {state},
		"code_challenge":        {p.challenge},
		"code_challenge_method": {"S256"},
	}
	for k, v := range extra {
		q[k] = v
	}
	for k, v := range q {
		if len(v) == 1 && v[0] == "\x00omit" {
			delete(q, k)
		}
	}
	return q
}

// omit in an extra value leaves that parameter out of the request.
const omit = "\x00omit"

// authorization is where a browser ended up after an authorization
// request: a redirect to the client, or a page drivemail stopped on.
type authorization struct {
	redirect *url.URL // the client's redirect URI with code or error; nil if the browser stopped
	params   url.Values
	last     reply // the last answer the browser got
}

// authorize opens path?q in a fresh browser (a cookie jar), approves
// drivemail's consent page and the emulated Google's (as demo@example.com,
// every permission), and stops at the first redirect that leaves
// drivemail and the emulator: the client's redirect URI.
func (e *env) authorize(t *testing.T, path string, q url.Values) authorization {
	t.Helper()
	return e.answerConsent(t, path, q, "approve")
}

// answerConsent is authorize, with decision (approve or deny) the answer
// on drivemail's consent page.
func (e *env) answerConsent(t *testing.T, path string, q url.Values, decision string) authorization {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next := req{method: "GET", url: e.base + path + "?" + q.Encode()}
	for range 12 {
		r := e.doWith(t, browser, next)
		switch {
		case r.status >= 300 && r.status < 400:
			loc, err := url.Parse(r.header.Get("Location"))
			if err != nil {
				t.Fatalf("redirect to an unparsable Location %q", r.header.Get("Location"))
			}
			from, _ := url.Parse(next.url)
			loc = from.ResolveReference(loc)
			if !e.ours(loc) {
				params, err := url.ParseQuery(loc.RawQuery)
				if err != nil {
					t.Fatalf("the redirect's query %q does not parse: %v", loc.RawQuery, err)
				}
				return authorization{redirect: loc, params: params, last: r}
			}
			next = req{method: "GET", url: loc.String()}
		case r.status == 200 && strings.HasPrefix(r.header.Get("Content-Type"), "text/html"):
			form, ok := consentForm(t, next.url, r.body)
			if !ok {
				return authorization{last: r}
			}
			if fields, _ := url.ParseQuery(form.body); fields.Has("csrf") {
				fields.Set("decision", decision)
				form.body = fields.Encode()
			}
			next = form
		default:
			return authorization{last: r}
		}
	}
	t.Fatal("the authorization did not end after 12 pages and redirects")
	return authorization{}
}

// ours reports whether u is on drivemail's or the emulator's origin.
func (e *env) ours(u *url.URL) bool {
	o := u.Scheme + "://" + u.Host
	return o == e.base || o == e.emulator
}

// consentForm answers a consent page as a user pressing Allow does:
// drivemail's (hidden request and csrf fields, decision=approve) or the
// emulated Google's (demo@example.com, every permission ticked).
func consentForm(t *testing.T, pageURL string, body []byte) (req, bool) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("page %s: %v", pageURL, err)
	}
	var action string
	fields := url.Values{}
	found := false
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.Data {
		case "form":
			if !found {
				action, found = attrOf(n, "action"), true
			}
		case "input":
			name, typ := attrOf(n, "name"), attrOf(n, "type")
			if name == "" || hasAttrOf(n, "disabled") {
				continue
			}
			switch typ {
			case "hidden", "text", "email", "":
				fields.Add(name, attrOf(n, "value"))
			case "checkbox":
				fields.Add(name, attrOf(n, "value")) // tick every permission
			}
		}
	}
	if !found {
		return req{}, false
	}
	switch {
	case fields.Has("csrf"): // drivemail's consent page
		fields.Set("decision", "approve")
	case fields.Has("request_id"): // the emulated Google's
		fields.Set("email", "demo@example.com")
		fields.Del("typed_email")
		fields.Set("action", "approve")
	default:
		return req{}, false
	}
	page, _ := url.Parse(pageURL)
	target, err := page.Parse(action)
	if err != nil {
		t.Fatalf("form action %q: %v", action, err)
	}
	return req{method: "POST", url: target.String(), body: fields.Encode(), header: map[string]string{
		"Content-Type": "application/x-www-form-urlencoded",
		"Origin":       page.Scheme + "://" + page.Host, // as a browser sends it
	}}, true
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttrOf(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// code runs an authorization and returns the code, failing the test
// unless the client got one with its state back.
func (e *env) code(t *testing.T, path string, q url.Values) string {
	t.Helper()
	a := e.authorize(t, path, q)
	if a.redirect == nil {
		t.Fatalf("the authorization stopped at drivemail: %v", a.last)
	}
	if a.params.Get("error") != "" {
		t.Fatalf("the authorization was refused: %s: %s", a.params.Get("error"), a.params.Get("error_description"))
	}
	if a.params.Get("code") == "" || a.params.Get("state") != q.Get("state") {
		t.Fatalf("redirect %s: want a code and state %q", a.redirect, q.Get("state"))
	}
	return a.params.Get("code")
}

// clientAuth is how a client authenticates at the token endpoint.
type clientAuth int

const (
	authNone  clientAuth = iota // client_id in the body
	authPost                    // client_id and client_secret in the body
	authBasic                   // HTTP Basic, form-encoded credentials
)

// tokenRequest posts form to the token endpoint at path as a authenticates.
func (e *env) tokenRequest(t *testing.T, path string, a app, how clientAuth, form url.Values) reply {
	t.Helper()
	body, h := tokenForm(a, how, form)
	return e.do(t, req{method: "POST", url: path, body: body, header: h})
}

// tokenForm is a token request's body and headers as a authenticates.
func tokenForm(a app, how clientAuth, form url.Values) (string, map[string]string) {
	form = cloneValues(form)
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
	switch how {
	case authNone:
		form.Set("client_id", a.id)
	case authPost:
		form.Set("client_id", a.id)
		form.Set("client_secret", a.secret)
	case authBasic:
		creds := url.QueryEscape(a.id) + ":" + url.QueryEscape(a.secret)
		h["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString([]byte(creds))
	}
	return form.Encode(), h
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// tokens is a token endpoint's answer.
type tokens struct {
	Access    string `json:"access_token"`
	Type      string `json:"token_type"`
	ExpiresIn int64  `json:"expires_in"`
	Refresh   string `json:"refresh_token"`
	Scope     string `json:"scope"`
}

// wantTokens checks a token answer has everything clients rely on (D5):
// a Bearer access token, expires_in, scope, and a refresh token.
func wantTokens(t *testing.T, r reply) tokens {
	t.Helper()
	var tk tokens
	if r.status != 200 || json.Unmarshal(r.body, &tk) != nil || tk.Access == "" {
		t.Fatalf("token request: %v", r)
	}
	if !strings.EqualFold(tk.Type, "Bearer") || tk.ExpiresIn <= 0 || tk.Scope == "" || tk.Refresh == "" {
		t.Fatalf("token answer lacks what clients rely on (token_type Bearer, expires_in, scope, refresh_token): %s", r.body)
	}
	return tk
}

// wantWorks checks an access token opens /mcp (its audience is BASE/mcp),
// as a client that keeps its session does: initialize, then tools/list.
func (e *env) wantWorks(t *testing.T, access string) {
	t.Helper()
	session, v := e.initialize(t, access, "2025-11-25", "compat", nil)
	e.listTools(t, mcpCall{token: access, session: session, version: v})
}

// wantOAuthError checks an RFC 6749 error answer.
func wantOAuthError(t *testing.T, r reply, status int, code string) {
	t.Helper()
	if r.status != status || str(r.object()["error"]) != code {
		t.Fatalf("want HTTP %d %s, got %v", status, code, r)
	}
}

// exchange redeems code as the client does and returns the tokens.
func (e *env) exchange(t *testing.T, path string, a app, how clientAuth, code, redirect string, p pkce, extra url.Values) tokens {
	t.Helper()
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "code_verifier": {p.verifier}}
	for k, v := range extra {
		form[k] = v
	}
	return wantTokens(t, e.tokenRequest(t, path, a, how, form))
}

// connect is a client's whole sign-in with defaults: authorize at
// /oauth/authorize with resource and the one scope, then the exchange.
func (e *env) connect(t *testing.T, a app, how clientAuth, redirect string, extra url.Values) tokens {
	t.Helper()
	p := newPKCE()
	q := authRequest(a, redirect, p, "st-"+randomID(), url.Values{"resource": {e.base + "/mcp"}})
	for k, v := range extra {
		q[k] = v
	}
	code := e.code(t, "/oauth/authorize", q)
	return e.exchange(t, "/oauth/token", a, how, code, redirect, p, url.Values{"resource": {e.base + "/mcp"}})
}

func randomID() string {
	b := make([]byte, 9)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// refreshAtOnce presents the same refresh token n times at once, as
// several processes or backend nodes of one client do, and returns the
// answers.
func (e *env) refreshAtOnce(t *testing.T, a app, how clientAuth, rt string, n int, extra url.Values) []reply {
	t.Helper()
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}
	for k, v := range extra {
		form[k] = v
	}
	start := make(chan struct{})
	out := make([]reply, n)
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			<-start
			out[i] = e.tokenRequestNoFatal(a, how, form)
		}()
	}
	close(start)
	for range n {
		<-done
	}
	return out
}

// tokenRequestNoFatal is tokenRequest for goroutines: a transport error
// becomes a reply with status 0.
func (e *env) tokenRequestNoFatal(a app, how clientAuth, form url.Values) reply {
	body, h := tokenForm(a, how, form)
	hr, _ := http.NewRequest("POST", e.base+"/oauth/token", strings.NewReader(body))
	for k, v := range h {
		hr.Header.Set(k, v)
	}
	resp, err := e.client.Do(hr)
	if err != nil {
		return reply{body: []byte(err.Error())}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// wantConcurrentRefreshes checks every one of a burst of refreshes with one
// token got a working pair, and that each refresh token handed out still
// refreshes afterwards: nobody was logged out (D4).
func (e *env) wantConcurrentRefreshes(t *testing.T, a app, how clientAuth, answers []reply, extra url.Values) {
	t.Helper()
	seen := map[string]bool{}
	var next []string
	for i, r := range answers {
		if r.status != 200 {
			t.Errorf("refresh %d of %d at once: %v", i+1, len(answers), r)
			continue
		}
		tk := wantTokens(t, r)
		e.wantWorks(t, tk.Access)
		if !seen[tk.Refresh] {
			seen[tk.Refresh] = true
			next = append(next, tk.Refresh)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	for _, rt := range next {
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}
		for k, v := range extra {
			form[k] = v
		}
		e.wantWorks(t, wantTokens(t, e.tokenRequest(t, "/oauth/token", a, how, form)).Access)
	}
}

// wwwAuthParams parses a Bearer challenge's parameters.
func wwwAuthParams(h string) (scheme string, params map[string]string) {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
	params = map[string]string{}
	for rest != "" {
		rest = strings.TrimLeft(rest, " ,")
		k, v, ok := strings.Cut(rest, "=")
		if !ok {
			break
		}
		k = strings.TrimSpace(k)
		if strings.HasPrefix(v, `"`) {
			end := strings.Index(v[1:], `"`)
			if end < 0 {
				break
			}
			params[k], rest = v[1:end+1], v[end+2:]
		} else {
			val, tail, _ := strings.Cut(v, ",")
			params[k], rest = strings.TrimSpace(val), tail
		}
	}
	return scheme, params
}

// cimdServer serves client ID metadata documents on loopback, as a
// client's web site would, and can be switched to an outage. The demo
// accepts http documents on loopback so this works without the network.
type cimdServer struct {
	base string
	mu   sync.Mutex
	docs map[string][]byte // path → document
	mode string            // "" serves documents; "503", "html", "404" break
}

func newCIMDServer(t *testing.T) *cimdServer {
	t.Helper()
	s := &cimdServer{docs: map[string][]byte{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.base = srv.URL
	return s
}

// add publishes doc at path with client_id set to its URL, which it
// returns.
func (s *cimdServer) add(path string, doc map[string]any) string {
	id := s.base + path
	doc["client_id"] = id
	b, _ := json.Marshal(doc)
	s.mu.Lock()
	s.docs[path] = b
	s.mu.Unlock()
	return id
}

func (s *cimdServer) setMode(m string) {
	s.mu.Lock()
	s.mode = m
	s.mu.Unlock()
}

func (s *cimdServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	doc, ok := s.docs[r.URL.Path]
	mode := s.mode
	s.mu.Unlock()
	// No Cache-Control, as many hosts serve it: drivemail then keeps a
	// copy for its default time, and a last good copy past that (its own
	// tests hold the stale path; an outage here is within the fresh time).
	switch {
	case mode == "503":
		http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
	case mode == "html":
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<!doctype html><title>Just a moment...</title><p>Checking your browser")
	case mode == "404" || !ok:
		http.NotFound(w, r)
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	}
}
