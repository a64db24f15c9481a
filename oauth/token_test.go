package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/drivemail/drivemail/oauth"
	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/store/storetest"
)

// codeFor runs the browser part for a and returns our authorization code.
func (h *harness) codeFor(a authRequest) string {
	h.t.Helper()
	back := newBrowser(h.t).signIn(h, a.url(h.base))
	code := back.Query().Get("code")
	if code == "" {
		h.t.Fatalf("no code: %s", back)
	}
	return code
}

func wantTokenError(t *testing.T, status int, body map[string]any, wantStatus int, wantError, says string) {
	t.Helper()
	if status != wantStatus || str(body, "error") != wantError || !strings.Contains(str(body, "error_description"), says) {
		t.Fatalf("got %d %v, want %d %s saying %q", status, body, wantStatus, wantError, says)
	}
}

func TestCodeExchangeRefusals(t *testing.T) {
	h := newHarness(t, options{})
	clientID := h.publicClient()
	otherClient := h.publicClient()
	tests := []struct {
		name   string
		change func(a *authRequest, form url.Values)
		status int
		error  string
		says   string
	}{
		{"wrong verifier", func(a *authRequest, f url.Values) { f.Set("code_verifier", oauth2.GenerateVerifier()) }, 400, "invalid_grant", "does not match"},
		{"missing verifier", func(a *authRequest, f url.Values) { f.Del("code_verifier") }, 400, "invalid_request", "code_verifier is required"},
		{"verifier of 42 characters", func(a *authRequest, f url.Values) { f.Set("code_verifier", strings.Repeat("a", 42)) }, 400, "invalid_request", "43 to 128"},
		{"verifier of 129 characters", func(a *authRequest, f url.Values) { f.Set("code_verifier", strings.Repeat("a", 129)) }, 400, "invalid_request", "43 to 128"},
		{"other redirect_uri", func(a *authRequest, f url.Values) { f.Set("redirect_uri", "http://127.0.0.1:49153/callback") }, 400, "invalid_grant", "redirect_uri differs"},
		{"missing redirect_uri", func(a *authRequest, f url.Values) { f.Del("redirect_uri") }, 400, "invalid_request", "redirect_uri is required"},
		{"other resource", func(a *authRequest, f url.Values) { f.Set("resource", "https://other.example/mcp") }, 400, "invalid_target", "resource differs"},
		{"another client's code", func(a *authRequest, f url.Values) { f.Set("client_id", otherClient) }, 400, "invalid_grant", "another client"},
		{"unknown client", func(a *authRequest, f url.Values) { f.Set("client_id", "dmc_gone") }, 401, "invalid_client", "register again"},
		{"unknown code", func(a *authRequest, f url.Values) { f.Set("code", "dm_ac_forged") }, 400, "invalid_grant", "unknown or expired"},
		{"unsupported grant", func(a *authRequest, f url.Values) { f.Set("grant_type", "password") }, 400, "unsupported_grant_type", "authorization_code or refresh_token"},
		{"no grant type", func(a *authRequest, f url.Values) { f.Del("grant_type") }, 400, "invalid_request", "grant_type is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := h.newAuthRequest(clientID)
			code := h.codeFor(a)
			form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {a.clientID},
				"redirect_uri": {a.redirectURI}, "code_verifier": {a.verifier}, "resource": {a.resource}}
			tc.change(&a, form)
			status, body := h.tokenRequest(form)
			wantTokenError(t, status, body, tc.status, tc.error, tc.says)
		})
	}
	t.Run("verifier of 128 characters and no resource", func(t *testing.T) {
		a := h.newAuthRequest(clientID)
		a.verifier = strings.Repeat("v", 128)
		code := h.codeFor(a)
		a.resource = "" // the code already carries it
		if status, body := h.exchange(a, code); status != http.StatusOK {
			t.Fatalf("exchange: %d %v", status, body)
		}
	})
}

func TestCodeExpiry(t *testing.T) {
	h := newHarness(t, options{})
	clientID := h.publicClient()
	a := h.newAuthRequest(clientID)
	code := h.codeFor(a)
	h.clock.Advance(oauth.DefaultCodeTTL - time.Millisecond)
	if status, body := h.exchange(a, code); status != http.StatusOK {
		t.Fatalf("a code 1 ms before expiry: %d %v", status, body)
	}
	a = h.newAuthRequest(clientID)
	code = h.codeFor(a)
	h.clock.Advance(oauth.DefaultCodeTTL)
	status, body := h.exchange(a, code)
	wantTokenError(t, status, body, 400, "invalid_grant", "expired")
}

func TestReusedCodeRevokesItsGrant(t *testing.T) {
	h := newHarness(t, options{})
	a := h.newAuthRequest(h.publicClient())
	code := h.codeFor(a)
	status, tok := h.exchange(a, code)
	if status != http.StatusOK {
		t.Fatal(status, tok)
	}
	if c, _, _ := h.call(str(tok, "access_token")); c != http.StatusOK {
		t.Fatalf("fresh token: %d", c)
	}
	status, body := h.exchange(a, code)
	wantTokenError(t, status, body, 400, "invalid_grant", "already used")
	if c, _, _ := h.call(str(tok, "access_token")); c != http.StatusUnauthorized {
		t.Fatalf("access token of a replayed code's grant: %d, want 401", c)
	}
	status, body = h.refresh(a.clientID, str(tok, "refresh_token"))
	wantTokenError(t, status, body, 400, "invalid_grant", "unknown, expired or revoked")
}

func TestRefreshRotation(t *testing.T) {
	h := newHarness(t, options{})
	a, tok := h.authorize()
	rt1 := str(tok, "refresh_token")
	status, tok2 := h.refresh(a.clientID, rt1)
	if status != http.StatusOK {
		t.Fatal(status, tok2)
	}
	rt2, at2 := str(tok2, "refresh_token"), str(tok2, "access_token")
	if rt2 == rt1 || rt2 == "" {
		t.Fatal("the refresh token was not rotated")
	}
	if c, _, _ := h.call(at2); c != http.StatusOK {
		t.Fatalf("refreshed token: %d", c)
	}

	// rt1 again: a leak. The grant dies, rt2 and at2 with it.
	status, body := h.refresh(a.clientID, rt1)
	wantTokenError(t, status, body, 400, "invalid_grant", "already used")
	if c, _, _ := h.call(at2); c != http.StatusUnauthorized {
		t.Fatalf("access token after refresh-token reuse: %d, want 401", c)
	}
	status, body = h.refresh(a.clientID, rt2)
	wantTokenError(t, status, body, 400, "invalid_grant", "unknown, expired or revoked")
}

// A refresh whose new tokens cannot be stored must leave the presented
// refresh token unspent: the client still holds it, and its retry is not
// a replay that revokes the user's authorization.
func TestRefreshWhoseTokensCannotBeStoredKeepsTheOldOne(t *testing.T) {
	backend, clock := storetest.SQLite(t), storetest.NewClock()
	st := backend.Open(t, store.Options{Now: clock.Now})
	t.Cleanup(func() { st.Close() })
	h := newHarness(t, options{store: st, clock: clock})
	a, tok := h.authorize()
	rt := str(tok, "refresh_token")

	restore := backend.FailInserts(t, "tokens")
	status, body := h.refresh(a.clientID, rt)
	wantTokenError(t, status, body, http.StatusInternalServerError, "server_error", "Try again")
	restore()

	status, tok2 := h.refresh(a.clientID, rt)
	if status != http.StatusOK {
		t.Fatalf("the retry of a refresh that failed to store its tokens: %d %v", status, tok2)
	}
	if c, _, _ := h.call(str(tok2, "access_token")); c != http.StatusOK {
		t.Fatalf("the retry's access token: %d, want 200", c)
	}
	status, tok3 := h.refresh(a.clientID, str(tok2, "refresh_token"))
	if status != http.StatusOK {
		t.Fatalf("the retry's refresh token: %d %v", status, tok3)
	}
}

func TestRefreshRefusals(t *testing.T) {
	h := newHarness(t, options{})
	t.Run("another client's token", func(t *testing.T) {
		a, tok := h.authorize()
		status, body := h.refresh(h.publicClient(), str(tok, "refresh_token"))
		wantTokenError(t, status, body, 400, "invalid_grant", "another client")
		// Refused, not spent: its own client's next refresh is no replay.
		if status, tok2 := h.refresh(a.clientID, str(tok, "refresh_token")); status != http.StatusOK {
			t.Fatalf("the owner's refresh after another client presented its token: %d %v", status, tok2)
		}
	})
	t.Run("access token as refresh token", func(t *testing.T) {
		a, tok := h.authorize()
		status, body := h.refresh(a.clientID, str(tok, "access_token"))
		wantTokenError(t, status, body, 400, "invalid_grant", "unknown")
	})
	t.Run("other resource", func(t *testing.T) {
		a, tok := h.authorize()
		status, body := h.tokenRequest(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {str(tok, "refresh_token")},
			"client_id": {a.clientID}, "resource": {"https://other.example/mcp"}})
		wantTokenError(t, status, body, 400, "invalid_target", "resource differs")
	})
	// A refused request must not spend the refresh token: the client still
	// holds it, and its corrected retry would otherwise look like a reuse
	// and revoke the user's whole authorization.
	t.Run("a refused parameter leaves the token usable", func(t *testing.T) {
		a, tok := h.authorize()
		rt := str(tok, "refresh_token")
		for _, tc := range []struct{ param, value, error string }{
			{"resource", "https://other.example/mcp", "invalid_target"},
			{"resource", "not a URL", "invalid_target"},
		} {
			status, body := h.tokenRequest(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt},
				"client_id": {a.clientID}, tc.param: {tc.value}})
			wantTokenError(t, status, body, 400, tc.error, "")
		}
		status, tok2 := h.refresh(a.clientID, rt)
		if status != http.StatusOK {
			t.Fatalf("the refresh token after two refused requests: %d %v", status, tok2)
		}
		if c, _, _ := h.call(str(tok, "access_token")); c != http.StatusOK {
			t.Fatalf("the grant's access token after refused refreshes: %d, want 200", c)
		}
	})
	t.Run("expiry, at the edge and past it", func(t *testing.T) {
		a, tok := h.authorize()
		h.clock.Advance(oauth.DefaultRefreshTTL - time.Millisecond)
		status, tok2 := h.refresh(a.clientID, str(tok, "refresh_token"))
		if status != http.StatusOK {
			t.Fatalf("a refresh token 1 ms before expiry: %d %v", status, tok2)
		}
		h.clock.Advance(oauth.DefaultRefreshTTL) // the new one slid forward; now it too is spent
		status, body := h.refresh(a.clientID, str(tok2, "refresh_token"))
		wantTokenError(t, status, body, 400, "invalid_grant", "expired")
	})
	t.Run("client without the refresh grant", func(t *testing.T) {
		_, reg := h.register(map[string]any{"redirect_uris": []string{testRedirect}, "token_endpoint_auth_method": "none",
			"grant_types": []string{"authorization_code"}})
		a := h.newAuthRequest(str(reg, "client_id"))
		status, tok := h.exchange(a, h.codeFor(a))
		if status != http.StatusOK || str(tok, "refresh_token") != "" {
			t.Fatalf("exchange: %d %v; want an access token only", status, tok)
		}
	})
}

func TestConfidentialClient(t *testing.T) {
	h := newHarness(t, options{})
	status, reg := h.register(map[string]any{"redirect_uris": []string{testRedirect}, "client_name": "Server app",
		"grant_types": []string{"authorization_code", "refresh_token"}})
	if status != http.StatusCreated || str(reg, "token_endpoint_auth_method") != "client_secret_basic" || !strings.HasPrefix(str(reg, "client_secret"), "dm_cs_") {
		t.Fatalf("register: %d %v", status, reg)
	}
	id, secret := str(reg, "client_id"), str(reg, "client_secret")
	stored, err := h.store.GetClient(t.Context(), id)
	if err != nil || stored.SecretHash == "" || strings.Contains(stored.SecretHash, secret) {
		t.Fatalf("stored client %+v: want the secret's hash only", stored)
	}
	post := func(user, pass string, form url.Values) (int, map[string]any, string) {
		req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/oauth/token", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if user != "" {
			req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		decodeJSON(resp, &out)
		return resp.StatusCode, out, resp.Header.Get("WWW-Authenticate")
	}
	exchangeForm := func(a authRequest) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "code": {h.codeFor(a)}, "redirect_uri": {a.redirectURI}, "code_verifier": {a.verifier}}
	}

	a := h.newAuthRequest(id)
	status, body, challenge := post(id, "wrong", exchangeForm(a))
	if status != 401 || str(body, "error") != "invalid_client" || !strings.HasPrefix(challenge, "Basic") {
		t.Fatalf("wrong secret: %d %v %q", status, body, challenge)
	}
	a = h.newAuthRequest(id)
	form := exchangeForm(a)
	form.Set("client_id", id)
	status, body, _ = post("", "", form)
	wantTokenError(t, status, body, 401, "invalid_client", "secret is missing or wrong")

	a = h.newAuthRequest(id)
	status, body, _ = post(id, secret, exchangeForm(a))
	if status != http.StatusOK {
		t.Fatalf("Basic: %d %v", status, body)
	}
	form = url.Values{"grant_type": {"refresh_token"}, "refresh_token": {str(body, "refresh_token")}, "client_id": {id}, "client_secret": {secret}}
	if status, body, _ = post("", "", form); status != http.StatusOK {
		t.Fatalf("client_secret_post: %d %v", status, body)
	}
}

func TestTokenEndpointRequestShape(t *testing.T) {
	h := newHarness(t, options{})
	clientID := h.publicClient()
	status, body := h.tokenRequest(url.Values{"grant_type": {"refresh_token", "refresh_token"}, "client_id": {clientID}})
	wantTokenError(t, status, body, 400, "invalid_request", "repeated")

	resp, err := http.Post(h.srv.URL+"/oauth/token?client_id="+clientID, "application/x-www-form-urlencoded", strings.NewReader("grant_type=refresh_token"))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	decodeJSON(resp, &out)
	wantTokenError(t, resp.StatusCode, out, 400, "invalid_request", "not the URL")

	resp, err = http.Post(h.srv.URL+"/oauth/token", "application/x-www-form-urlencoded", strings.NewReader("client_id="+strings.Repeat("x", 16<<10)))
	if err != nil {
		t.Fatal(err)
	}
	decodeJSON(resp, &out)
	wantTokenError(t, resp.StatusCode, out, 400, "invalid_request", "at most 16 KiB")

	resp, err = http.Get(h.srv.URL + "/oauth/token")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET /oauth/token: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodOptions, h.srv.URL+"/oauth/token", nil)
	req.Header.Set("Origin", "http://localhost:6274")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestRevocation(t *testing.T) {
	h := newHarness(t, options{})
	revoke := func(clientID, token string) int {
		resp, err := http.PostForm(h.srv.URL+"/oauth/revoke", url.Values{"client_id": {clientID}, "token": {token}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	a, tok := h.authorize()
	if s := revoke(h.publicClient(), str(tok, "access_token")); s != http.StatusOK {
		t.Fatalf("revocation by another client: %d", s)
	}
	if c, _, _ := h.call(str(tok, "access_token")); c != http.StatusOK {
		t.Fatal("another client revoked a token that is not its own")
	}
	if s := revoke(a.clientID, str(tok, "access_token")); s != http.StatusOK {
		t.Fatalf("revoke access token: %d", s)
	}
	if c, _, _ := h.call(str(tok, "access_token")); c != http.StatusUnauthorized {
		t.Fatalf("revoked access token: %d", c)
	}
	status, tok2 := h.refresh(a.clientID, str(tok, "refresh_token"))
	if status != http.StatusOK {
		t.Fatalf("revoking an access token ended the grant: %d %v", status, tok2)
	}
	if s := revoke(a.clientID, str(tok2, "refresh_token")); s != http.StatusOK {
		t.Fatalf("revoke refresh token: %d", s)
	}
	if c, _, _ := h.call(str(tok2, "access_token")); c != http.StatusUnauthorized {
		t.Fatalf("access token of a revoked refresh token's grant: %d", c)
	}
	if s := revoke(a.clientID, "dm_rt_unknown"); s != http.StatusOK {
		t.Fatalf("revoke an unknown token: %d, want 200", s)
	}
	if s := revoke("dmc_gone", "x"); s != http.StatusUnauthorized {
		t.Fatalf("revoke by an unknown client: %d, want 401", s)
	}
}
