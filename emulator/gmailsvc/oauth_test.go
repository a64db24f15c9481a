package gmailsvc

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
	gmail "google.golang.org/api/gmail/v1"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/emulator/authsvc"
	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/internal/google"
)

// TestSendWithTokensFromTheConsentFlow sends through tokens that the
// emulated OAuth server issued, as drivemail does: code flow with PKCE,
// then an hour later a transparent refresh before the next send.
func TestSendWithTokensFromTheConsentFlow(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	blobs, err := core.NewBlobs("")
	if err != nil {
		t.Fatal(err)
	}
	defer blobs.Close()
	deps := core.Deps{Accounts: core.NewAccounts(time.Hour, clock), Blobs: blobs, Stats: core.NewStats(), Now: clock}
	mux := http.NewServeMux()
	New(deps).Register(mux)
	authsvc.New(deps, authsvc.Config{AutoApprove: true, DefaultUser: ann}).Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ep, _ := google.Parse(srv.URL)
	conf := &oauth2.Config{ClientID: "drivemail", ClientSecret: "x", Endpoint: ep.OAuth2(),
		RedirectURL: "http://127.0.0.1:1/callback", Scopes: []string{scopeSend, scopeReadonly}}
	verifier := oauth2.GenerateVerifier()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(conf.AuthCodeURL("s", oauth2.AccessTypeOffline, oauth2.S256ChallengeOption(verifier)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	ctx := context.Background()
	tok, err := conf.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	client := func(ts oauth2.TokenSource) *gmail.Service {
		svc, err := gmail.NewService(ctx, option.WithEndpoint(srv.URL+"/"), option.WithTokenSource(ts))
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	if _, err := send(client(conf.TokenSource(ctx, tok)), bytes.NewReader(basic("first").build()), ""); err != nil {
		t.Fatalf("send with the exchanged token: %v", err)
	}

	mu.Lock()
	now = now.Add(time.Hour + time.Minute)
	mu.Unlock()
	_, err = send(client(oauth2.StaticTokenSource(tok)), bytes.NewReader(basic("stale").build()), "")
	apiError(t, err, http.StatusUnauthorized, "authError")

	stored := &oauth2.Token{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Minute)}
	svc := client(conf.TokenSource(ctx, stored))
	if _, err := send(svc, bytes.NewReader(basic("second").build()), ""); err != nil {
		t.Fatalf("send after expiry: %v, want a transparent refresh", err)
	}
	list, err := svc.Users.Messages.List("me").Do()
	if err != nil || len(list.Messages) != 2 {
		t.Errorf("%d messages (%v), want the two sent with live tokens", len(list.Messages), err)
	}
}
