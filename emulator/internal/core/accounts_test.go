package core

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestAccessTokenExpiresAndRefreshes(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := NewAccounts(time.Minute, func() time.Time { return now })
	acc := a.IssueAccess("A@Example.com", "client-1", []string{"s1"})
	ref := a.IssueRefresh("a@example.com", "client-1", []string{"s1"})
	if tok, ok := a.Lookup(acc); !ok || tok.Email != "a@example.com" {
		t.Fatalf("fresh token: %+v %v", tok, ok)
	}
	now = now.Add(time.Minute)
	if _, ok := a.Lookup(acc); ok {
		t.Fatal("token still valid at its expiry")
	}
	if _, _, err := a.Refresh(ref, "client-2"); err != ErrInvalidGrant {
		t.Fatalf("refresh by another client: %v, want invalid_grant", err)
	}
	acc2, tok, err := a.Refresh(ref, "client-1")
	if err != nil || tok.Email != "a@example.com" || !tok.HasAnyScope("s1") {
		t.Fatalf("refresh: %v %+v", err, tok)
	}
	if got := a.Revoke(ref); got != "a@example.com" {
		t.Fatalf("revoke of a live refresh token reported %q, want its account", got)
	}
	if _, ok := a.Lookup(acc2); ok {
		t.Error("access token survives the revocation of its refresh token")
	}
	if _, _, err := a.Refresh(ref, "client-1"); err != ErrInvalidGrant {
		t.Errorf("revoked refresh token: %v", err)
	}

	// Removing access ends every token of the account, and only its.
	ref2, other := a.IssueRefresh("a@example.com", "client-1", []string{"s1"}), a.IssueRefresh("b@example.com", "client-1", []string{"s1"})
	acc3 := a.IssueAccess("a@example.com", "client-1", []string{"s1"})
	if n := a.RevokeAll("A@example.com"); n != 2 {
		t.Errorf("RevokeAll removed %d tokens, want 2", n)
	}
	if _, _, err := a.Refresh(ref2, "client-1"); err != ErrInvalidGrant {
		t.Errorf("a refresh token after RevokeAll: %v", err)
	}
	if _, ok := a.Lookup(acc3); ok {
		t.Error("an access token survives RevokeAll")
	}
	if _, _, err := a.Refresh(other, "client-1"); err != nil {
		t.Errorf("another account's token after RevokeAll: %v", err)
	}
}

func TestAuthenticate(t *testing.T) {
	a := NewAccounts(time.Hour, nil)
	tok := a.IssueAccess("u@example.com", "c", []string{"x"})
	for _, tc := range []struct {
		name, header string
		ok           bool
		reason       string // the legacy reason of the 401
	}{
		{"valid", "Bearer " + tok, true, ""},
		{"case-insensitive scheme", "bearer " + tok, true, ""},
		{"missing", "", false, "required"},
		{"unknown", "Bearer ya29.nope", false, "authError"},
		{"basic", "Basic " + tok, false, "required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/drive/v3/files", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			w := httptest.NewRecorder()
			_, ok := a.Authenticate(w, r)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), `"reason": "`+tc.reason+`"`) {
					t.Errorf("401 not Google-shaped: %d %s", w.Code, w.Body)
				}
			}
		})
	}
}

func TestRequireScope(t *testing.T) {
	w := httptest.NewRecorder()
	if RequireScope(w, Token{Scopes: []string{"a"}}, "b", "c") {
		t.Fatal("accepted a token without the scope")
	}
	if w.Code != 403 || !strings.Contains(w.Body.String(), "insufficientPermissions") {
		t.Errorf("got %d %s", w.Code, w.Body)
	}
	if !RequireScope(httptest.NewRecorder(), Token{Scopes: []string{"a", "c"}}, "b", "c") {
		t.Error("refused a token with one of the scopes")
	}
}

func TestExpiredAccessTokensAreDropped(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := NewAccounts(time.Minute, func() time.Time { return now })
	live := a.IssueAccess("u@example.com", "c", nil)
	for range 10 * minSweep {
		a.IssueAccess("u@example.com", "c", nil)
		now = now.Add(time.Second)
	}
	// At most a minute's worth of tokens is live; a sweep may lag by as
	// many again as it found live.
	if n := len(a.access); n > 2*minSweep {
		t.Errorf("%d access tokens kept after %d issued, want at most %d", n, 10*minSweep+1, 2*minSweep)
	}
	if _, ok := a.Lookup(live); ok {
		t.Error("a token issued hours ago still works")
	}
	fresh := a.IssueAccess("u@example.com", "c", nil)
	if _, ok := a.Lookup(fresh); !ok {
		t.Error("a fresh token does not work after sweeps")
	}
}
