package authsvc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/internal/google"
)

const (
	scopeSend    = "https://www.googleapis.com/auth/gmail.send"
	scopeCompose = "https://www.googleapis.com/auth/gmail.compose"
	scopeDrive   = "https://www.googleapis.com/auth/drive.readonly"
	scopeEmail   = "https://www.googleapis.com/auth/userinfo.email"
	callback     = "http://127.0.0.1:8080/oauth/callback"
)

// fixture is an OAuth service on a test server with a settable clock.
type fixture struct {
	t    *testing.T
	srv  *httptest.Server
	deps core.Deps
	svc  *Service

	mu  sync.Mutex
	now time.Time
}

func newFixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	f := &fixture{t: t, now: time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)}
	f.deps = core.Deps{Accounts: core.NewAccounts(time.Hour, f.clock), Stats: core.NewStats(), Now: f.clock}
	f.deps.Accounts.AddUser("ann@example.com")
	f.deps.Accounts.AddUser("bob@example.com")
	f.svc = New(f.deps, cfg)
	mux := http.NewServeMux()
	f.svc.Register(mux)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func (f *fixture) config(scopes ...string) *oauth2.Config {
	ep, err := google.Parse(f.srv.URL)
	if err != nil {
		f.t.Fatal(err)
	}
	return &oauth2.Config{ClientID: "client-1.apps.example", ClientSecret: "s3cret", Endpoint: ep.OAuth2(), RedirectURL: callback, Scopes: scopes}
}

// get fetches u without following redirects.
func (f *fixture) get(u string) *http.Response {
	f.t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(u)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp
}

// postForm posts a form without following redirects.
func (f *fixture) postForm(path string, form url.Values) *http.Response {
	f.t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(f.srv.URL+path, form)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp
}

// redirectParams checks resp is a redirect to the callback and returns its query.
func redirectParams(t *testing.T, resp *http.Response) url.Values {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, want a redirect: %s", resp.StatusCode, b)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), callback+"?") {
		t.Fatalf("Location %q, want the callback", resp.Header.Get("Location"))
	}
	return loc.Query()
}

// userinfo calls the userinfo endpoint with hc and returns status and fields.
func (f *fixture) userinfo(hc *http.Client) (int, map[string]any) {
	f.t.Helper()
	resp, err := hc.Get(f.srv.URL + "/oauth2/v3/userinfo")
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func TestCodeFlowWithPKCEAutoApprove(t *testing.T) {
	f := newFixture(t, Config{AutoApprove: true, DefaultUser: "demo@example.com"})
	conf := f.config("openid", "email", scopeSend, scopeDrive)
	verifier := oauth2.GenerateVerifier()
	authURL := conf.AuthCodeURL("st-123", oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("prompt", "consent"), oauth2.SetAuthURLParam("login_hint", "Carol@Example.com"))
	q := redirectParams(t, f.get(authURL))
	if q.Get("state") != "st-123" || q.Get("code") == "" {
		t.Fatalf("redirect query %v: want code and state st-123", q)
	}
	wantScope := "openid " + scopeEmail + " " + scopeSend + " " + scopeDrive
	if q.Get("scope") != wantScope {
		t.Errorf("granted scope %q, want %q", q.Get("scope"), wantScope)
	}

	tok, err := conf.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if !strings.HasPrefix(tok.AccessToken, "ya29.") || !strings.HasPrefix(tok.RefreshToken, "1//") || tok.TokenType != "Bearer" {
		t.Errorf("token = %+v", tok)
	}
	if tok.Extra("scope") != wantScope || tok.ExpiresIn != 3600 {
		t.Errorf("scope %v expires_in %d", tok.Extra("scope"), tok.ExpiresIn)
	}
	code, info := f.userinfo(conf.Client(context.Background(), tok))
	if code != 200 || info["email"] != "carol@example.com" || info["email_verified"] != true || info["sub"] != Subject("carol@example.com") {
		t.Errorf("userinfo: %d %v, want the login_hint user", code, info)
	}
	if !f.deps.Accounts.HasUser("carol@example.com") {
		t.Error("the login_hint user was not registered")
	}

	// Without a login_hint the default user signs in.
	q = redirectParams(t, f.get(conf.AuthCodeURL("s2")))
	tok, err = conf.Exchange(context.Background(), q.Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	if _, info := f.userinfo(conf.Client(context.Background(), tok)); info["email"] != "demo@example.com" {
		t.Errorf("default user: %v", info)
	}
	if tok.RefreshToken != "" {
		t.Error("online access returned a refresh token")
	}
}

func TestExchangeRefusals(t *testing.T) {
	f := newFixture(t, Config{AutoApprove: true, DefaultUser: "demo@example.com"})
	conf := f.config(scopeSend)
	verifier := oauth2.GenerateVerifier()
	newCode := func() string {
		return redirectParams(t, f.get(conf.AuthCodeURL("s", oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(verifier)))).Get("code")
	}
	other := *conf
	other.RedirectURL = "http://127.0.0.1:8080/other"
	otherClient := *conf
	otherClient.ClientID = "client-2"
	noSecret := *conf
	noSecret.ClientSecret = ""
	for _, tc := range []struct {
		name string
		conf *oauth2.Config
		opts []oauth2.AuthCodeOption
		code string
		desc string
	}{
		{"wrong verifier", conf, []oauth2.AuthCodeOption{oauth2.VerifierOption(oauth2.GenerateVerifier())}, "invalid_grant", "Invalid code verifier."},
		{"verifier too short", conf, []oauth2.AuthCodeOption{oauth2.VerifierOption("short")}, "invalid_grant", "Invalid code verifier."},
		{"missing verifier", conf, nil, "invalid_grant", "Missing code verifier."},
		{"other redirect_uri", &other, []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier)}, "redirect_uri_mismatch", "Bad Request"},
		{"other client", &otherClient, []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier)}, "invalid_grant", "Bad Request"},
		{"no secret", &noSecret, []oauth2.AuthCodeOption{oauth2.VerifierOption(verifier)}, "invalid_request", "client_secret is missing."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := newCode()
			_, err := tc.conf.Exchange(context.Background(), code, tc.opts...)
			var re *oauth2.RetrieveError
			if !errors.As(err, &re) || re.ErrorCode != tc.code || re.ErrorDescription != tc.desc || re.Response.StatusCode != 400 {
				t.Fatalf("err = %v, want %s %q", err, tc.code, tc.desc)
			}
			// A refused exchange leaves the code usable by its rightful owner.
			if _, err := conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier)); err != nil {
				t.Errorf("the right exchange after a refused one: %v", err)
			}
		})
	}

	t.Run("reused code revokes its tokens", func(t *testing.T) {
		code := newCode()
		tok, err := conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		_, err = conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier))
		var re *oauth2.RetrieveError
		if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
			t.Fatalf("second exchange: %v, want invalid_grant", err)
		}
		if _, ok := f.deps.Accounts.Lookup(tok.AccessToken); ok {
			t.Error("the access token bought with a replayed code still works")
		}
		if _, _, err := f.deps.Accounts.Refresh(tok.RefreshToken, conf.ClientID); err == nil {
			t.Error("the refresh token bought with a replayed code still works")
		}
	})

	t.Run("expired code", func(t *testing.T) {
		code := newCode()
		f.advance(codeTTL + time.Second)
		_, err := conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier))
		var re *oauth2.RetrieveError
		if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
			t.Fatalf("expired code: %v, want invalid_grant", err)
		}
	})
}

func TestPlainPKCEAndNoPKCE(t *testing.T) {
	f := newFixture(t, Config{AutoApprove: true, DefaultUser: "demo@example.com"})
	conf := f.config(scopeSend)
	verifier := oauth2.GenerateVerifier()
	q := redirectParams(t, f.get(conf.AuthCodeURL("s", oauth2.SetAuthURLParam("code_challenge", verifier), oauth2.SetAuthURLParam("code_challenge_method", "plain"))))
	if _, err := conf.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier)); err != nil {
		t.Errorf("plain PKCE: %v", err)
	}
	q = redirectParams(t, f.get(conf.AuthCodeURL("s")))
	if _, err := conf.Exchange(context.Background(), q.Get("code")); err != nil {
		t.Errorf("no PKCE (a confidential client): %v", err)
	}
}

func TestRefreshTransparentlyAndRevoke(t *testing.T) {
	f := newFixture(t, Config{AutoApprove: true, DefaultUser: "ann@example.com"})
	conf := f.config("email", scopeSend)
	verifier := oauth2.GenerateVerifier()
	q := redirectParams(t, f.get(conf.AuthCodeURL("s", oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(verifier))))
	ctx := context.Background()
	tok, err := conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := f.userinfo(conf.Client(ctx, tok)); code != 200 {
		t.Fatalf("first call: %d", code)
	}
	// An hour later the access token is dead. The stored token, loaded as an
	// app would, is refreshed by the TokenSource without the caller noticing.
	f.advance(time.Hour + time.Minute)
	if code, _ := f.userinfo(&http.Client{Transport: &oauth2.Transport{Source: oauth2.StaticTokenSource(tok)}}); code != 401 {
		t.Fatalf("the access token after its lifetime: %d, want 401", code)
	}
	stored := &oauth2.Token{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Minute)}
	ts := conf.TokenSource(ctx, stored)
	code, info := f.userinfo(oauth2.NewClient(ctx, ts))
	if code != 200 || info["email"] != "ann@example.com" {
		t.Fatalf("after expiry: %d %v, want a transparent refresh", code, info)
	}
	fresh, err := ts.Token()
	if err != nil || fresh.AccessToken == tok.AccessToken || fresh.RefreshToken != tok.RefreshToken {
		t.Fatalf("refreshed token %v, err %v: want a new access token and the same refresh token", fresh, err)
	}

	// Revoking the refresh token ends the access tokens it minted, and refresh.
	resp := f.postForm("/revoke", url.Values{"token": {tok.RefreshToken}})
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	if code, _ := f.userinfo(&http.Client{Transport: &oauth2.Transport{Source: oauth2.StaticTokenSource(fresh)}}); code != 401 {
		t.Errorf("access token after revoking its refresh token: %d, want 401", code)
	}
	expired2 := *fresh
	expired2.Expiry = time.Now().Add(-time.Minute)
	_, err = conf.TokenSource(ctx, &expired2).Token()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" || re.ErrorDescription != "Token has been expired or revoked." {
		t.Errorf("refresh after revoke: %v", err)
	}
	resp = f.postForm("/revoke", url.Values{"token": {tok.RefreshToken}})
	var body map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != 400 || body["error"] != "invalid_token" {
		t.Errorf("revoking twice: %d %v", resp.StatusCode, body)
	}
	// A test of the server sees the revocation in the stats, once.
	if got := f.deps.Stats.Snapshot().TokensRevoked; got["ann@example.com"] != 1 || len(got) != 1 {
		t.Errorf("tokens_revoked = %v, want ann@example.com: 1", got)
	}
}

func TestTokenEndpointRefusals(t *testing.T) {
	f := newFixture(t, Config{})
	for _, tc := range []struct {
		name   string
		form   url.Values
		status int
		code   string
	}{
		{"no grant_type", url.Values{"client_id": {"c"}, "client_secret": {"s"}}, 400, "unsupported_grant_type"},
		{"password grant", url.Values{"grant_type": {"password"}, "client_id": {"c"}, "client_secret": {"s"}}, 400, "unsupported_grant_type"},
		{"no client", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_secret": {"s"}}, 400, "invalid_request"},
		{"no code", url.Values{"grant_type": {"authorization_code"}, "client_id": {"c"}, "client_secret": {"s"}}, 400, "invalid_request"},
		{"unknown code", url.Values{"grant_type": {"authorization_code"}, "code": {"4/nope"}, "client_id": {"c"}, "client_secret": {"s"}, "redirect_uri": {callback}}, 400, "invalid_grant"},
		{"no refresh token", url.Values{"grant_type": {"refresh_token"}, "client_id": {"c"}, "client_secret": {"s"}}, 400, "invalid_request"},
		{"unknown refresh token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"1//nope"}, "client_id": {"c"}, "client_secret": {"s"}}, 400, "invalid_grant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := f.postForm("/token", tc.form)
			defer resp.Body.Close()
			var body map[string]string
			_ = json.NewDecoder(resp.Body).Decode(&body)
			if resp.StatusCode != tc.status || body["error"] != tc.code || body["error_description"] == "" {
				t.Errorf("%d %v, want %d %s with a description", resp.StatusCode, body, tc.status, tc.code)
			}
			if resp.Header.Get("Cache-Control") != "no-store" {
				t.Error("token response may be cached")
			}
		})
	}
	resp, err := http.Post(f.srv.URL+"/token", "application/x-www-form-urlencoded", strings.NewReader("grant_type=refresh_token&x="+strings.Repeat("a", maxFormBody)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("oversized form: %d, want 400", resp.StatusCode)
	}
}

func TestRefreshTokenOfAnotherClient(t *testing.T) {
	f := newFixture(t, Config{})
	rt := f.deps.Accounts.IssueRefresh("ann@example.com", "client-1.apps.example", []string{scopeSend})
	conf := f.config(scopeSend)
	conf.ClientID = "client-2"
	_, err := conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: rt}).Token()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Errorf("refresh by another client: %v, want invalid_grant", err)
	}
	// Credentials in a Basic header work as well as in the form.
	conf = f.config(scopeSend)
	conf.Endpoint.AuthStyle = oauth2.AuthStyleInHeader
	tok, err := conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: rt}).Token()
	if err != nil || tok.Extra("scope") != scopeSend {
		t.Errorf("refresh with Basic credentials: %v %v", err, tok)
	}
}

func TestUserinfoFieldsFollowScopes(t *testing.T) {
	f := newFixture(t, Config{})
	for _, tc := range []struct {
		scopes        []string
		email, name   bool
		wantGivenName string
	}{
		{[]string{"openid"}, false, false, ""},
		{[]string{"openid", scopeEmail}, true, false, ""},
		{[]string{"https://www.googleapis.com/auth/userinfo.profile"}, false, true, "Ann"},
	} {
		tok := f.deps.Accounts.IssueAccess("ann.lee@example.com", "c", tc.scopes)
		req, _ := http.NewRequest("GET", f.srv.URL+"/oauth2/v3/userinfo", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		code, info := f.userinfo(&http.Client{Transport: headerTransport{req.Header}})
		_, hasEmail := info["email"]
		_, hasName := info["name"]
		if code != 200 || hasEmail != tc.email || hasName != tc.name || info["sub"] == nil {
			t.Errorf("scopes %v: %d %v", tc.scopes, code, info)
		}
		if tc.name && (info["name"] != "Ann Lee" || info["given_name"] != tc.wantGivenName) {
			t.Errorf("name fields %v", info)
		}
	}
	code, info := f.userinfo(http.DefaultClient)
	if code != 401 || info["error"] != "invalid_request" {
		t.Errorf("no token: %d %v", code, info)
	}
}

type headerTransport struct{ h http.Header }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}
