package googleauth_test

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/oauth/googleauth"
	"github.com/drivemail/drivemail/oauth/keyring"
)

// TestDriveFileModeAsksForNoRestrictedScope: in file mode the consent
// asks for drive.file and gmail.send (and sign-in), never drive.readonly,
// and folds in no scope granted earlier.
func TestDriveFileModeAsksForNoRestrictedScope(t *testing.T) {
	f := newFixture(t)
	for _, fileMode := range []bool{false, true} {
		svc := f.configured(t, func(c *googleauth.Config) { c.DriveFile = fileMode })
		u, _ := url.Parse(svc.AuthCodeURL("s", oauth2.GenerateVerifier()))
		scope := strings.Fields(u.Query().Get("scope"))
		want := []string{"openid", "email", googleauth.ScopeGmailSend, googleauth.ScopeDriveReadonly, googleauth.ScopeDriveFile}
		folded := "true"
		if fileMode {
			want = []string{"openid", "email", googleauth.ScopeGmailSend, googleauth.ScopeDriveFile}
			folded = ""
		}
		if !slices.Equal(scope, want) || !slices.Equal(svc.Scopes(), want) || svc.DriveFile() != fileMode {
			t.Errorf("file mode %v: asked %v (Scopes %v), want %v", fileMode, scope, svc.Scopes(), want)
		}
		if got := u.Query().Get("include_granted_scopes"); got != folded {
			t.Errorf("file mode %v: include_granted_scopes = %q, want %q", fileMode, got, folded)
		}
	}
	// --read-mail and --drafts still add theirs.
	svc := f.configured(t, func(c *googleauth.Config) { c.DriveFile, c.ReadMail, c.Drafts = true, true, true })
	want := []string{"openid", "email", googleauth.ScopeGmailSend, googleauth.ScopeDriveFile, googleauth.ScopeGmailCompose, googleauth.ScopeGmailReadonly}
	if !slices.Equal(svc.Scopes(), want) {
		t.Errorf("file mode with drafts and mail asks for %v, want %v", svc.Scopes(), want)
	}
}

// configured is a service toward a Google that is never called, with
// the settings mutate makes.
func (f *fixture) configured(t *testing.T, mutate func(*googleauth.Config)) *googleauth.Service {
	t.Helper()
	ring, err := keyring.New([][]byte{f.secret}, googleauth.KeyPurpose)
	if err != nil {
		t.Fatal(err)
	}
	cfg := googleauth.Config{Endpoints: google.Endpoints{Base: "https://google.example"}, ClientID: "cid", ClientSecret: "cs",
		RedirectURL: "https://mail.example/oauth/callback", Store: f.store, Keys: ring}
	mutate(&cfg)
	svc, err := googleauth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestPickerTokenCarriesDriveFileAlone: the page's token comes from a
// refresh that names drive.file, and the stored token stays as it was.
func TestPickerTokenCarriesDriveFileAlone(t *testing.T) {
	f := newFixture(t)
	user := f.signIn(t)
	tok, expiry, err := f.svc.PickerToken(context.Background(), user.ID)
	if err != nil {
		t.Fatal(err)
	}
	f.google.mu.Lock()
	asked := f.google.refreshScope
	f.google.mu.Unlock()
	if asked != googleauth.ScopeDriveFile || tok != "ya29.refreshed-1" {
		t.Fatalf("refresh asked scope %q and gave %q; want drive.file alone", asked, tok)
	}
	if d := time.Until(expiry); d < 59*time.Minute || d > time.Hour+time.Minute {
		t.Errorf("expiry in %v, want Google's hour", d)
	}
	if got, err := f.call(t, user.ID); err != nil || got != "Bearer ya29.first" {
		t.Errorf("the user's own calls now use %q (%v); the Picker token must not replace the stored one", got, err)
	}
}

func TestPickerTokenRefusals(t *testing.T) {
	t.Run("Google answers a broader token", func(t *testing.T) {
		f := newFixture(t)
		user := f.signIn(t)
		f.google.mu.Lock()
		f.google.broadRefresh = true
		f.google.mu.Unlock()
		tok, _, err := f.svc.PickerToken(context.Background(), user.ID)
		if err == nil || tok != "" || errors.Is(err, googleauth.ErrReconnect) {
			t.Fatalf("got %q, %v; want no token, and not a reconnect", tok, err)
		}
	})
	t.Run("drive.file was not granted", func(t *testing.T) {
		f := newFixture(t)
		f.google.grantedScope = "openid https://www.googleapis.com/auth/userinfo.email " + googleauth.ScopeGmailSend
		user := f.signIn(t)
		_, _, err := f.svc.PickerToken(context.Background(), user.ID)
		if !errors.Is(err, googleauth.ErrPickerScope) {
			t.Fatalf("err = %v, want ErrPickerScope", err)
		}
	})
	t.Run("the grant was revoked", func(t *testing.T) {
		f := newFixture(t)
		user := f.signIn(t)
		f.google.mu.Lock()
		f.google.failRefresh, f.google.failCode = 400, "invalid_grant"
		f.google.mu.Unlock()
		_, _, err := f.svc.PickerToken(context.Background(), user.ID)
		if !errors.Is(err, googleauth.ErrReconnect) || strings.Contains(err.Error(), secretBody) {
			t.Fatalf("err = %v, want ErrReconnect without Google's body", err)
		}
		if _, err := f.svc.Client(context.Background(), user.ID); !errors.Is(err, googleauth.ErrReconnect) {
			t.Errorf("after invalid_grant the grant is still used: %v", err)
		}
	})
}
