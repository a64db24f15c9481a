package authsvc

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/oauth2"
)

// page is a parsed HTML page with lookups by id.
type page struct {
	root *html.Node
	ids  map[string]*html.Node
}

func parsePage(t *testing.T, resp *http.Response) page {
	t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("Content-Type %q, want HTML", ct)
	}
	root, err := html.Parse(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	p := page{root: root, ids: map[string]*html.Node{}}
	for n := range root.Descendants() {
		if id := attr(n, "id"); id != "" {
			p.ids[id] = n
		}
	}
	return p
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return strings.TrimSpace(b.String())
}

// inputs lists the form's inputs named name.
func (p page) inputs(name string) []*html.Node {
	var out []*html.Node
	for n := range p.root.Descendants() {
		if n.Type == html.ElementNode && n.Data == "input" && attr(n, "name") == name {
			out = append(out, n)
		}
	}
	return out
}

func TestConsentPageApproveWithPartialGrant(t *testing.T) {
	f := newFixture(t, Config{})
	conf := f.config("openid", "email", scopeSend, scopeCompose)
	verifier := oauth2.GenerateVerifier()
	resp := f.get(conf.AuthCodeURL("st-9", oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("login_hint", "bob@example.com")))
	if resp.StatusCode != 200 {
		t.Fatalf("consent page: %d", resp.StatusCode)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP %q", csp)
	}
	p := parsePage(t, resp)
	if text(p.ids["client-id"]) != conf.ClientID {
		t.Errorf("client id shown %q", text(p.ids["client-id"]))
	}
	form := p.ids["consent"]
	if form == nil || attr(form, "method") != "post" || attr(form, "action") != "/o/oauth2/consent" {
		t.Fatal("no consent form")
	}
	for _, id := range []string{"approve", "deny", "typed-email", "account-0", "account-1", "scope-0", "scope-3"} {
		if p.ids[id] == nil {
			t.Errorf("no element #%s", id)
		}
	}
	// Enter in the email field presses the form's first submit button: it must be Allow.
	for n := range form.Descendants() {
		if n.Type == html.ElementNode && n.Data == "button" {
			if attr(n, "id") != "approve" {
				t.Errorf("the first button is #%s, want #approve", attr(n, "id"))
			}
			break
		}
	}
	if attr(p.ids["account-1"], "value") != "bob@example.com" || !hasAttr(p.ids["account-1"], "checked") || hasAttr(p.ids["account-0"], "checked") {
		t.Error("the login_hint account is not the one preselected")
	}
	scopes := map[string]*html.Node{}
	for _, in := range p.inputs("scope") {
		scopes[attr(in, "value")] = in
	}
	if len(scopes) != 4 || !hasAttr(scopes["openid"], "disabled") || hasAttr(scopes[scopeSend], "disabled") || !hasAttr(scopes[scopeCompose], "checked") {
		t.Errorf("scope boxes: %d, sign-in scopes fixed and the rest tickable expected", len(scopes))
	}

	// Approve as bob with gmail.compose unticked.
	reqID := attr(p.inputs("request_id")[0], "value")
	q := redirectParams(t, f.postForm("/o/oauth2/consent", url.Values{
		"request_id": {reqID}, "email": {"bob@example.com"}, "scope": {scopeSend}, "action": {"approve"},
	}))
	want := "openid " + scopeEmail + " " + scopeSend
	if q.Get("state") != "st-9" || q.Get("scope") != want {
		t.Fatalf("redirect %v, want state st-9 and scope %q", q, want)
	}
	tok, err := conf.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Extra("scope") != want {
		t.Errorf("token scope %v, want the partial grant %q", tok.Extra("scope"), want)
	}
	if _, info := f.userinfo(conf.Client(context.Background(), tok)); info["email"] != "bob@example.com" {
		t.Errorf("signed in as %v", info["email"])
	}

	// The page cannot be answered twice.
	resp = f.postForm("/o/oauth2/consent", url.Values{"request_id": {reqID}, "email": {"bob@example.com"}, "action": {"approve"}})
	if p := parsePage(t, resp); resp.StatusCode != 400 || !strings.Contains(text(p.ids["error-description"]), "start the sign-in again") {
		t.Errorf("second answer: %d", resp.StatusCode)
	}
}

// TestConsentPagePreselectsTheDefaultUser: without a login_hint, the page
// preselects DefaultUser (the demo's user) when that account exists; a
// login_hint still wins, and an unknown default preselects nothing.
func TestConsentPagePreselectsTheDefaultUser(t *testing.T) {
	for _, tc := range []struct {
		name, defaultUser, hint, want string
	}{
		{"default", "bob@example.com", "", "bob@example.com"},
		{"hint wins", "bob@example.com", "ann@example.com", "ann@example.com"},
		{"unknown default", "demo@example.com", "", ""},
	} {
		f := newFixture(t, Config{DefaultUser: tc.defaultUser})
		opts := []oauth2.AuthCodeOption{}
		if tc.hint != "" {
			opts = append(opts, oauth2.SetAuthURLParam("login_hint", tc.hint))
		}
		p := parsePage(t, f.get(f.config(scopeSend).AuthCodeURL("st", opts...)))
		var checked []string
		for _, in := range p.inputs("email") {
			if hasAttr(in, "checked") {
				checked = append(checked, attr(in, "value"))
			}
		}
		if got := strings.Join(checked, ","); got != tc.want {
			t.Errorf("%s: preselected %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestConsentPageDenyTypeAndRetry(t *testing.T) {
	f := newFixture(t, Config{})
	conf := f.config(scopeSend)
	open := func() string {
		p := parsePage(t, f.get(conf.AuthCodeURL("st")))
		return attr(p.inputs("request_id")[0], "value")
	}
	q := redirectParams(t, f.postForm("/o/oauth2/consent", url.Values{"request_id": {open()}, "action": {"deny"}}))
	if q.Get("error") != "access_denied" || q.Get("state") != "st" || q.Get("code") != "" {
		t.Errorf("deny: %v", q)
	}

	// A bad typed address shows the page again with the problem; it can then be fixed.
	id := open()
	for _, tc := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"typed_email": {"not an address"}, "scope": {scopeSend}}, "type an email address"},
		{url.Values{}, "Choose an account"},
		{url.Values{"typed_email": {"new@example.com"}}, "Tick at least one permission"},
	} {
		tc.form.Set("request_id", id)
		tc.form.Set("action", "approve")
		resp := f.postForm("/o/oauth2/consent", tc.form)
		p := parsePage(t, resp)
		if resp.StatusCode != 400 || !strings.Contains(text(p.ids["error"]), tc.want) || attr(p.inputs("request_id")[0], "value") != id {
			t.Errorf("form %v: %d %q, want the page again saying %q", tc.form, resp.StatusCode, text(p.ids["error"]), tc.want)
		}
	}
	q = redirectParams(t, f.postForm("/o/oauth2/consent", url.Values{"request_id": {id}, "typed_email": {"New@Example.com"}, "scope": {scopeSend}, "action": {"approve"}}))
	if q.Get("code") == "" || !f.deps.Accounts.HasUser("new@example.com") {
		t.Errorf("typed account: %v, registered %v", q, f.deps.Accounts.HasUser("new@example.com"))
	}

	// An unanswered page expires.
	id = open()
	f.advance(consentTTL + time.Second)
	resp := f.postForm("/o/oauth2/consent", url.Values{"request_id": {id}, "email": {"ann@example.com"}, "action": {"approve"}})
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("expired page: %d, want 400", resp.StatusCode)
	}
}

func TestAuthorizationRequestRefusals(t *testing.T) {
	f := newFixture(t, Config{AutoApprove: true, DefaultUser: "demo@example.com"})
	good := url.Values{"client_id": {"c"}, "redirect_uri": {callback}, "response_type": {"code"}, "scope": {scopeSend}}
	challenge := oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())
	for _, tc := range []struct {
		name string
		edit func(url.Values)
		code string
	}{
		{"no client_id", func(v url.Values) { v.Del("client_id") }, "invalid_request"},
		{"no redirect_uri", func(v url.Values) { v.Del("redirect_uri") }, "invalid_request"},
		{"relative redirect_uri", func(v url.Values) { v.Set("redirect_uri", "/callback") }, "redirect_uri_mismatch"},
		{"redirect_uri with fragment", func(v url.Values) { v.Set("redirect_uri", callback+"#x") }, "redirect_uri_mismatch"},
		{"http redirect_uri without host", func(v url.Values) { v.Set("redirect_uri", "http:///cb") }, "redirect_uri_mismatch"},
		{"no response_type", func(v url.Values) { v.Del("response_type") }, "invalid_request"},
		{"token response_type", func(v url.Values) { v.Set("response_type", "token") }, "unsupported_response_type"},
		{"no scope", func(v url.Values) { v.Del("scope") }, "invalid_request"},
		{"blank scope", func(v url.Values) { v.Set("scope", "  ") }, "invalid_request"},
		{"too many scopes", func(v url.Values) { v.Set("scope", strings.Repeat("s ", maxScopes+1)) }, "invalid_request"},
		{"bad challenge method", func(v url.Values) { v.Set("code_challenge", challenge); v.Set("code_challenge_method", "S512") }, "invalid_request"},
		{"method without challenge", func(v url.Values) { v.Set("code_challenge_method", "S256") }, "invalid_request"},
		{"short challenge", func(v url.Values) { v.Set("code_challenge", challenge[:42]); v.Set("code_challenge_method", "S256") }, "invalid_request"},
		{"challenge with bad characters", func(v url.Values) {
			v.Set("code_challenge", challenge[:42]+"=")
			v.Set("code_challenge_method", "S256")
		}, "invalid_request"},
		{"bad access_type", func(v url.Values) { v.Set("access_type", "forever") }, "invalid_request"},
		{"bad prompt", func(v url.Values) { v.Set("prompt", "login") }, "invalid_request"},
		{"prompt none with consent", func(v url.Values) { v.Set("prompt", "none consent") }, "invalid_request"},
		{"repeated parameter", func(v url.Values) { v.Add("client_id", "d") }, "invalid_request"},
		{"overlong state", func(v url.Values) { v.Set("state", strings.Repeat("s", maxParamLen+1)) }, "invalid_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := url.Values{}
			for k, vv := range good {
				v[k] = append([]string(nil), vv...)
			}
			tc.edit(v)
			resp := f.get(f.srv.URL + "/o/oauth2/v2/auth?" + v.Encode())
			p := parsePage(t, resp)
			if resp.StatusCode != 400 || text(p.ids["error-code"]) != tc.code || text(p.ids["error-description"]) == "" {
				t.Errorf("%d %q, want a 400 page with %s", resp.StatusCode, text(p.ids["error-code"]), tc.code)
			}
		})
	}
	// The edges that pass: a 43-character challenge, the v1 path, one state at the limit.
	v := url.Values{}
	for k, vv := range good {
		v[k] = vv
	}
	v.Set("code_challenge", challenge)
	v.Set("code_challenge_method", "S256")
	v.Set("state", strings.Repeat("s", maxStateLen))
	if resp := f.get(f.srv.URL + "/o/oauth2/auth?" + v.Encode()); resp.StatusCode != http.StatusFound {
		b, _ := io.ReadAll(resp.Body)
		t.Errorf("a valid request at the edges: %d %s", resp.StatusCode, b)
	}
}

func TestPromptNoneWithoutAutoApprove(t *testing.T) {
	f := newFixture(t, Config{})
	q := redirectParams(t, f.get(f.config(scopeSend).AuthCodeURL("s", oauth2.SetAuthURLParam("prompt", "none"))))
	if q.Get("error") != "interaction_required" || q.Get("state") != "s" {
		t.Errorf("prompt=none: %v", q)
	}
}

func TestConsentPageEscapes(t *testing.T) {
	f := newFixture(t, Config{})
	conf := f.config(scopeSend)
	conf.ClientID = `<script>alert(1)</script>`
	resp := f.get(conf.AuthCodeURL("s"))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(b), "<script>") || !strings.Contains(string(b), "&lt;script&gt;") {
		t.Error("client id is not escaped in the page")
	}
}
