package googleauth_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/internal/logtest"
	"github.com/drivemail/drivemail/oauth/googleauth"
	"github.com/drivemail/drivemail/oauth/keyring"
)

// withLogs replaces the fixture's service by one that logs to the returned
// buffer and runs on the fixture's clock.
func (f *fixture) withLogs(t *testing.T) *logtest.Buffer {
	t.Helper()
	logs := &logtest.Buffer{}
	f.clock.Advance(time.Since(f.clock.Now()) + time.Second) // near real time: oauth2 checks expiry on the real clock
	ring, err := keyring.New([][]byte{f.secret}, googleauth.KeyPurpose)
	if err != nil {
		t.Fatal(err)
	}
	f.svc, err = googleauth.New(googleauth.Config{
		Endpoints: google.Endpoints{Base: f.google.srv.URL}, ClientID: "cid", ClientSecret: "csecret",
		RedirectURL: "https://mail.example/oauth/callback", Store: f.store, Keys: ring,
		Logger: slog.New(slog.NewTextHandler(logs, nil)), Now: f.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return logs
}

func (f *fixture) failRefreshes(status int, code string) {
	f.google.mu.Lock()
	defer f.google.mu.Unlock()
	f.google.failRefresh, f.google.failCode = status, code
}

// invalid_grant is final: the first refusal marks the grant dead, and no
// later call, on this replica or another, asks Google again until the
// user signs in anew.
func TestInvalidGrantIsRecordedOnce(t *testing.T) {
	f := newFixture(t)
	user := f.signIn(t)
	f.expire(t, user.ID, "1//refresh-A")
	f.failRefreshes(http.StatusBadRequest, "invalid_grant")
	for i := range 3 {
		if _, err := f.call(t, user.ID); !errors.Is(err, googleauth.ErrReconnect) {
			t.Fatalf("call %d: %v, want ErrReconnect", i+1, err)
		}
	}
	if n := f.google.refreshCount(); n != 1 {
		t.Fatalf("Google was asked to refresh a dead grant %d times, want once", n)
	}
	if u, err := f.store.GetUser(context.Background(), user.ID); err != nil || !u.GoogleGrantDead {
		t.Fatalf("the user: %+v, %v; want the Google grant marked dead", u, err)
	}
	other := f.service(t, [][]byte{f.secret}, false) // another replica
	if _, err := other.Client(context.Background(), user.ID); !errors.Is(err, googleauth.ErrReconnect) {
		t.Fatalf("another replica: %v, want ErrReconnect without asking Google", err)
	}

	f.failRefreshes(0, "")
	f.signIn(t) // a new sign-in clears the mark
	if u, _ := f.store.GetUser(context.Background(), user.ID); u.GoogleGrantDead {
		t.Fatal("a new sign-in left the grant marked dead")
	}
	if got, err := f.call(t, user.ID); err != nil || got != "Bearer ya29.first" {
		t.Fatalf("after signing in again: %q, %v", got, err)
	}
}

// invalid_client is the operator's problem: one log line that says what
// to check (and no secret), no retry against Google for a minute, and not
// the user's "reconnect" (which would not help).
func TestInvalidClientIsAnOperatorError(t *testing.T) {
	f := newFixture(t)
	logs := f.withLogs(t)
	users := []string{f.signIn(t).ID}
	f.expire(t, users[0], "1//refresh-A")
	f.failRefreshes(http.StatusUnauthorized, "invalid_client")
	for i := range 3 {
		_, err := f.call(t, users[0])
		if !errors.Is(err, googleauth.ErrClientRefused) || errors.Is(err, googleauth.ErrReconnect) {
			t.Fatalf("call %d: %v, want ErrClientRefused and not ErrReconnect", i+1, err)
		}
	}
	if n := f.google.refreshCount(); n != 1 {
		t.Fatalf("Google was asked %d times with a refused client within a minute, want once", n)
	}
	text := logs.String()
	if n := strings.Count(text, "invalid_client"); n != 2 || strings.Count(text, "\n") != 1 { // the message and its google_error attribute, one line
		t.Fatalf("logs:\n%s\nwant exactly one line about invalid_client", text)
	}
	if !strings.Contains(text, "--google-client-secret") || !strings.Contains(text, "level=ERROR") {
		t.Fatalf("the log line does not say what to check: %s", text)
	}
	for _, secret := range []string{"csecret", secretBody, "1//refresh-A"} {
		if strings.Contains(text, secret) {
			t.Fatalf("the log reveals %q: %s", secret, text)
		}
	}
	if u, _ := f.store.GetUser(context.Background(), users[0]); u.GoogleGrantDead {
		t.Fatal("a refused client marked the user's grant dead")
	}

	f.clock.Advance(time.Minute)
	f.failRefreshes(0, "")
	if _, err := f.call(t, users[0]); err != nil {
		t.Fatalf("a minute later, with the client fixed: %v", err)
	}
}
