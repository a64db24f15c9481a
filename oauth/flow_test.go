package oauth_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/oauth"
	"github.com/drivemail/drivemail/oauth/googleauth"
)

func TestBrowserFlowIssuesWorkingTokens(t *testing.T) {
	h := newHarness(t, options{})
	a := h.newAuthRequest(h.publicClient())
	back := newBrowser(t).signIn(h, a.url(h.base))

	q := back.Query()
	if back.Host != "127.0.0.1:49152" || back.Path != "/callback" {
		t.Fatalf("redirected to %s, want the client's redirect URI", back)
	}
	if q.Get("state") != a.state || q.Get("iss") != h.base || q.Get("code") == "" {
		t.Fatalf("redirect query %v: want code, state %q and iss %q", q, a.state, h.base)
	}
	status, tok := h.exchange(a, q.Get("code"))
	if status != http.StatusOK {
		t.Fatalf("exchange: %d %v", status, tok)
	}
	at, rt := str(tok, "access_token"), str(tok, "refresh_token")
	if !strings.HasPrefix(at, "dm_at_") || !strings.HasPrefix(rt, "dm_rt_") || str(tok, "token_type") != "Bearer" ||
		tok["expires_in"] != float64(3600) || str(tok, "scope") != oauth.Scope {
		t.Fatalf("token response %v", tok)
	}
	code, _, user := h.call(at)
	if code != http.StatusOK || user.Email != "demo@example.com" || user.ID == "" {
		t.Fatalf("whoami: %d %+v", code, user)
	}
	for _, want := range []string{googleauth.ScopeGmailSend, googleauth.ScopeDriveReadonly, googleauth.ScopeDriveFile} {
		if !user.HasScope(want) {
			t.Errorf("user scopes %v lack %s", user.GoogleScopes, want)
		}
	}
	if user.HasScope(googleauth.ScopeGmailCompose) {
		t.Error("gmail.compose granted though drafts are off")
	}

	status, tok2 := h.refresh(a.clientID, rt)
	if status != http.StatusOK || str(tok2, "refresh_token") == rt || str(tok2, "access_token") == at {
		t.Fatalf("refresh: %d %v; want a new pair", status, tok2)
	}
	if code, _, _ := h.call(str(tok2, "access_token")); code != http.StatusOK {
		t.Fatalf("refreshed access token: %d", code)
	}
}
