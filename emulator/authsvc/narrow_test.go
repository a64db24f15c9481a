package authsvc

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

const scopeFile = "https://www.googleapis.com/auth/drive.file"

// refreshWith posts a refresh grant naming scope and returns the status
// and the answer.
func (f *fixture) refreshWith(rt, scope string) (int, map[string]any) {
	f.t.Helper()
	resp := f.postForm("/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt},
		"client_id": {"client-1.apps.example"}, "client_secret": {"s3cret"}, "scope": {scope}})
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// TestRefreshNarrowsToTheScopesAsked: a refresh that names scopes gets an
// access token with those alone (RFC 6749 §6), a scope the grant lacks is
// invalid_scope, and the refresh token keeps every scope.
func TestRefreshNarrowsToTheScopesAsked(t *testing.T) {
	f := newFixture(t, Config{})
	rt := f.deps.Accounts.IssueRefresh("ann@example.com", "client-1.apps.example", []string{"openid", scopeEmail, scopeSend, scopeFile})

	status, m := f.refreshWith(rt, scopeFile)
	tok, _ := m["access_token"].(string)
	if status != http.StatusOK || m["scope"] != scopeFile {
		t.Fatalf("narrowed refresh: %d %v, want drive.file alone", status, m)
	}
	got, ok := f.deps.Accounts.Lookup(tok)
	if !ok || !slices.Equal(got.Scopes, []string{scopeFile}) {
		t.Fatalf("the narrowed token carries %v", got.Scopes)
	}
	// The short name of the email scope is Google's long one.
	if status, m := f.refreshWith(rt, "email "+scopeSend); status != http.StatusOK || m["scope"] != scopeEmail+" "+scopeSend {
		t.Errorf("refresh for email and gmail.send: %d %v", status, m)
	}

	status, m = f.refreshWith(rt, scopeFile+" "+scopeDrive)
	if status != http.StatusBadRequest || m["error"] != "invalid_scope" || m["access_token"] != nil {
		t.Errorf("refresh asking for a scope never granted: %d %v, want 400 invalid_scope", status, m)
	}

	full, err := f.config().TokenSource(context.Background(), &oauth2.Token{RefreshToken: rt}).Token()
	if err != nil || len(strings.Fields(full.Extra("scope").(string))) != 4 {
		t.Errorf("a refresh naming no scope after narrowed ones: %v %v, want every granted scope", err, full)
	}
}

// TestAuthorizationsRecordWhatWasAskedAndGranted: each approval is
// recorded, with the scopes the client asked for and those granted.
func TestAuthorizationsRecordWhatWasAskedAndGranted(t *testing.T) {
	f := newFixture(t, Config{AutoApprove: true, DefaultUser: "ann@example.com"})
	conf := f.config("openid", "email", scopeSend, scopeFile)
	redirectParams(t, f.get(conf.AuthCodeURL("st")))
	got := f.svc.Authorizations()
	if len(got) != 1 {
		t.Fatalf("%d authorizations recorded, want 1", len(got))
	}
	a := got[0]
	want := []string{"openid", scopeEmail, scopeSend, scopeFile}
	if a.Email != "ann@example.com" || a.ClientID != "client-1.apps.example" || !slices.Equal(a.Asked, want) || !slices.Equal(a.Granted, want) || a.At.IsZero() {
		t.Errorf("recorded %+v, want ann's request for %v", a, want)
	}
	for range maxAuthorizations {
		redirectParams(t, f.get(conf.AuthCodeURL("st")))
	}
	if n := len(f.svc.Authorizations()); n != maxAuthorizations {
		t.Errorf("%d authorizations kept, want the latest %d", n, maxAuthorizations)
	}
}
