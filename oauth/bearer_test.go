package oauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/oauth"
	"github.com/drivemail/drivemail/oauth/googleauth"
	"github.com/drivemail/drivemail/store"
)

func TestBearerRefusals(t *testing.T) {
	h := newHarness(t, options{})
	_, tok := h.authorize()
	metadata := `Bearer resource_metadata="` + h.base + `/.well-known/oauth-protected-resource/mcp", scope="drivemail"`
	googleToken := h.google.emu.AccessToken("demo@example.com", googleauth.ScopeGmailSend)
	if !strings.HasPrefix(googleToken, "ya29.") {
		t.Fatalf("the emulator's Google token %q does not look like one", googleToken)
	}
	tests := []struct {
		name      string
		header    []string
		query     string
		status    int
		challenge string
	}{
		{"no token", nil, "", 401, metadata},
		{"token in the query", nil, "?access_token=" + str(tok, "access_token"), 400, metadata + `, error="invalid_request"`},
		{"other scheme", []string{"Basic " + str(tok, "access_token")}, "", 401, metadata + `, error="invalid_token"`},
		{"empty bearer", []string{"Bearer "}, "", 401, metadata + `, error="invalid_token"`},
		{"two headers", []string{"Bearer " + str(tok, "access_token"), "Bearer x"}, "", 401, metadata + `, error="invalid_token"`},
		{"bad characters", []string{"Bearer a\"b"}, "", 401, metadata + `, error="invalid_token"`},
		{"unknown token", []string{"Bearer dm_at_forged"}, "", 401, metadata + `, error="invalid_token"`},
		{"a Google access token", []string{"Bearer " + googleToken}, "", 401, metadata + `, error="invalid_token"`},
		{"a refresh token", []string{"Bearer " + str(tok, "refresh_token")}, "", 401, metadata + `, error="invalid_token"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/whoami"+tc.query, nil)
			for _, v := range tc.header {
				req.Header.Add("Authorization", v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), tc.challenge) {
				t.Fatalf("got %d %q, want %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tc.status, tc.challenge)
			}
			if tc.challenge == metadata && resp.Header.Get("WWW-Authenticate") != metadata {
				t.Fatalf("without a token the challenge must carry no error: %q", resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
	req, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/whoami", nil)
	req.Header.Set("Authorization", "bearer "+str(tok, "access_token"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a lower-case scheme: %d", resp.StatusCode)
	}
}

func TestAccessTokenExpiry(t *testing.T) {
	h := newHarness(t, options{})
	_, tok := h.authorize()
	h.clock.Advance(oauth.DefaultAccessTTL - time.Millisecond)
	if c, _, _ := h.call(str(tok, "access_token")); c != http.StatusOK {
		t.Fatalf("1 ms before expiry: %d", c)
	}
	h.clock.Advance(time.Millisecond)
	c, challenge, _ := h.call(str(tok, "access_token"))
	if c != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) || !strings.Contains(challenge, "expired") {
		t.Fatalf("at expiry: %d %q", c, challenge)
	}
}

func TestTokenForAnotherResource(t *testing.T) {
	// Two drivemail deployments share a database (a mistake, but possible):
	// a token issued for one is still refused by the other.
	shared := newHarness(t, options{})
	other := newHarness(t, options{store: shared.store, google: shared.google, clock: shared.clock})
	_, tok := shared.authorize()
	c, challenge, _ := other.call(str(tok, "access_token"))
	if c != http.StatusUnauthorized || !strings.Contains(challenge, "another resource") {
		t.Fatalf("a token for %s at %s: %d %q", shared.base, other.base, c, challenge)
	}
	if c, _, _ := shared.call(str(tok, "access_token")); c != http.StatusOK {
		t.Fatalf("at its own resource: %d", c)
	}
}

func TestMintAccessToken(t *testing.T) {
	h := newHarness(t, options{})
	ctx := context.Background()
	tok := h.google.emu.AccessToken("demo@example.com", "openid", googleauth.ScopeUserinfoEmail, googleauth.ScopeGmailSend)
	g, err := h.ga.GrantForToken(ctx, oauthToken(tok))
	if err != nil {
		t.Fatal(err)
	}
	u, err := h.ga.SaveGrant(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	demo, err := h.as.MintAccessToken(ctx, u.ID, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c, _, user := h.call(demo)
	if c != http.StatusOK || user.Email != "demo@example.com" || !user.HasScope(googleauth.ScopeGmailSend) {
		t.Fatalf("demo token: %d %+v", c, user)
	}
	h.clock.Advance(24 * time.Hour)
	if c, _, _ := h.call(demo); c != http.StatusUnauthorized {
		t.Fatalf("demo token after its lifetime: %d", c)
	}
	if _, err := h.as.MintAccessToken(ctx, "no-such-user", time.Hour); err == nil {
		t.Fatal("minted a token for a user without a Google grant")
	}
}

func TestInsufficientScope(t *testing.T) {
	h := newHarness(t, options{})
	rec := httptest.NewRecorder()
	h.as.InsufficientScope(rec, googleauth.ScopeGmailCompose)
	challenge := rec.Header().Get("WWW-Authenticate")
	if rec.Code != http.StatusForbidden || !strings.Contains(challenge, `error="insufficient_scope"`) ||
		!strings.Contains(challenge, `resource_metadata="`+h.base) || !strings.Contains(challenge, `scope="drivemail"`) {
		t.Fatalf("%d %q", rec.Code, challenge)
	}
	if !strings.Contains(rec.Body.String(), "--drafts") {
		t.Fatalf("body %q does not say how to get drafts", rec.Body.String())
	}
}

func TestStoreOutageIsNotUnauthorized(t *testing.T) {
	h := newHarness(t, options{})
	_, tok := h.authorize()
	h.store.Close() // the database is gone
	c, challenge, _ := h.call(str(tok, "access_token"))
	if c != http.StatusServiceUnavailable || challenge != "" {
		t.Fatalf("store down: %d %q; want 503 without a challenge (a 401 would make clients sign in again)", c, challenge)
	}
}

var _ store.Store
