package oauth_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/oauth/googleauth"
)

// googleCall makes one Google API call as the user, through the per-user
// client the tools use, and returns its error.
func (h *harness) googleCall(userID string) error {
	h.t.Helper()
	hc, err := h.ga.Client(context.Background(), userID)
	if err != nil {
		return err
	}
	resp, err := hc.Get(h.google.srv.URL + "/oauth2/v3/userinfo")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// A Google grant the user revoked is found once: the refresh that meets
// invalid_grant records it, no later call asks Google again, the user's
// drivemail tokens answer 401 invalid_token (so MCP clients sign in again)
// and cannot be refreshed, and a new sign-in brings everything back.
func TestRevokedGoogleGrantIsHandledOnce(t *testing.T) {
	// Google access tokens that are always due for a refresh, so every
	// call asks Google's token endpoint, as it would an hour on.
	h := newHarness(t, options{google: newGoogleWith(t, emulator.Config{AutoApprove: true, AccessTTL: 5 * time.Second})})
	a, tok := h.authorize()
	_, _, user := h.call(str(tok, "access_token"))
	if err := h.googleCall(user.ID); err != nil {
		t.Fatalf("a Google call before the revocation: %v", err)
	}

	h.google.emu.RemoveAccess(emulator.DemoUser) // the user removes drivemail at Google
	h.google.emu.ResetStats()
	for i := range 3 {
		err := h.googleCall(user.ID)
		if !errors.Is(err, googleauth.ErrReconnect) {
			t.Fatalf("Google call %d after the revocation: %v, want ErrReconnect", i+1, err)
		}
	}
	if n := h.google.emu.Stats().Paths["POST /token"]; n != 1 {
		t.Fatalf("Google's token endpoint was asked %d times for one dead grant, want once", n)
	}
	u, err := h.store.GetUser(t.Context(), user.ID)
	if err != nil || !u.GoogleGrantDead {
		t.Fatalf("the user after invalid_grant: %+v, %v; want the grant recorded dead", u, err)
	}

	status, challenge, _ := h.call(str(tok, "access_token"))
	if status != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) || !strings.Contains(challenge, "Google no longer accepts") {
		t.Fatalf("a drivemail token of that user: %d %q, want 401 invalid_token naming Google", status, challenge)
	}
	status, body := h.refresh(a.clientID, str(tok, "refresh_token"))
	wantTokenError(t, status, body, http.StatusBadRequest, "invalid_grant", "Google no longer accepts")

	// Signing in again (any client) clears the mark; the old grant's
	// refresh token was refused, not spent, so it works again too.
	_, tok2 := h.authorize()
	if c, _, _ := h.call(str(tok2, "access_token")); c != http.StatusOK {
		t.Fatalf("the new sign-in's token: %d", c)
	}
	if err := h.googleCall(user.ID); err != nil {
		t.Fatalf("a Google call after signing in again: %v", err)
	}
	if status, body := h.refresh(a.clientID, str(tok, "refresh_token")); status != http.StatusOK {
		t.Fatalf("the first grant's refresh after signing in again: %d %v", status, body)
	}
}

// Disconnecting (revoking at /oauth/revoke) the user's last grant ends the
// Google grant too, at Google; an earlier disconnect, with a grant left,
// does not.
func TestRevokingTheLastGrantRevokesTheGoogleGrant(t *testing.T) {
	h := newHarness(t, options{})
	a1, tok1 := h.authorize()
	a2, tok2 := h.authorize()
	revoke := func(a authRequest, tok map[string]any) {
		t.Helper()
		resp, err := http.PostForm(h.srv.URL+"/oauth/revoke", url.Values{"token": {str(tok, "refresh_token")}, "client_id": {a.clientID}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("revoke: %d", resp.StatusCode)
		}
	}
	h.google.emu.ResetStats()
	revoke(a1, tok1)
	if got := h.google.emu.Stats().TokensRevoked; len(got) != 0 {
		t.Fatalf("with a grant left, Google tokens were revoked: %v", got)
	}
	_, _, user := h.call(str(tok2, "access_token"))
	revoke(a2, tok2)
	if got := h.google.emu.Stats().TokensRevoked[emulator.DemoUser]; got != 1 {
		t.Fatalf("after the last grant went, Google revocations = %d, want 1", got)
	}
	if err := h.googleCall(user.ID); !errors.Is(err, googleauth.ErrReconnect) {
		t.Fatalf("a Google call after disconnecting: %v, want ErrReconnect", err)
	}
}
