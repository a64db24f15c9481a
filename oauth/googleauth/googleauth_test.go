package googleauth_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/oauth/googleauth"
	"github.com/drivemail/drivemail/oauth/keyring"
	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/store/storetest"
)

// fakeGoogle is a minimal token + userinfo + API endpoint with knobs.
type fakeGoogle struct {
	mu            sync.Mutex
	refreshes     int
	failRefresh   int    // HTTP status to answer refreshes with (0: succeed)
	failCode      string // OAuth error code for failures
	refreshToken  string
	omitRefresh   bool // leave refresh_token out of code exchanges
	emailVerified bool
	grantedScope  string
	challenge     string // PKCE challenge of the last authorization
	refreshScope  string // the scope the last refresh asked for
	broadRefresh  bool   // answer a narrowed refresh with every granted scope
	srv           *httptest.Server
}

const secretBody = "BODY-WITH-SECRET-1//leak"

func newFakeGoogle(t *testing.T) *fakeGoogle {
	f := &fakeGoogle{refreshToken: "1//refresh-A", emailVerified: true,
		grantedScope: "openid https://www.googleapis.com/auth/userinfo.email " + googleauth.ScopeGmailSend + " " + googleauth.ScopeDriveFile}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", f.token)
	mux.HandleFunc("GET /oauth2/v3/userinfo", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ya29.") {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		f.mu.Lock()
		verified := f.emailVerified
		f.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"sub": "10001", "email": "ana@example.com", "email_verified": verified})
	})
	mux.HandleFunc("GET /api", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Header.Get("Authorization"))
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGoogle) token(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.PostFormValue("grant_type") {
	case "authorization_code":
		sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
		if r.PostFormValue("code") != "good-code" || base64.RawURLEncoding.EncodeToString(sum[:]) != f.challenge {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":"invalid_grant","error_description":%q}`, secretBody)
			return
		}
		resp := map[string]any{"access_token": "ya29.first", "expires_in": 3600, "token_type": "Bearer", "scope": f.grantedScope}
		if !f.omitRefresh {
			resp["refresh_token"] = f.refreshToken
		}
		json.NewEncoder(w).Encode(resp)
	case "refresh_token":
		f.refreshes++
		if f.failRefresh != 0 {
			w.WriteHeader(f.failRefresh)
			fmt.Fprintf(w, `{"error":%q,"error_description":%q}`, f.failCode, secretBody)
			return
		}
		if r.PostFormValue("refresh_token") != f.refreshToken {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_grant"}`)
			return
		}
		f.refreshScope = r.PostFormValue("scope")
		answer := map[string]any{"access_token": fmt.Sprintf("ya29.refreshed-%d", f.refreshes), "expires_in": 3600, "token_type": "Bearer"}
		if f.refreshScope != "" {
			// RFC 6749 §6: fewer scopes than granted, never more.
			for _, sc := range strings.Fields(f.refreshScope) {
				if !strings.Contains(" "+f.grantedScope+" ", " "+sc+" ") {
					w.WriteHeader(http.StatusBadRequest)
					fmt.Fprint(w, `{"error":"invalid_scope","error_description":"Bad Request"}`)
					return
				}
			}
			answer["scope"] = f.refreshScope
			if f.broadRefresh {
				answer["scope"] = f.grantedScope
			}
		}
		json.NewEncoder(w).Encode(answer)
	default:
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"unsupported_grant_type"}`)
	}
}

func (f *fakeGoogle) refreshCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refreshes
}

type fixture struct {
	google *fakeGoogle
	store  store.Store
	svc    *googleauth.Service
	secret []byte
	clock  *storetest.Clock
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{google: newFakeGoogle(t), secret: bytes.Repeat([]byte{7}, 32), clock: storetest.NewClock()}
	b := storetest.SQLite(t)
	f.store = b.Open(t, store.Options{})
	t.Cleanup(func() { f.store.Close() })
	f.svc = f.service(t, [][]byte{f.secret}, false)
	return f
}

func (f *fixture) service(t *testing.T, secrets [][]byte, drafts bool) *googleauth.Service {
	t.Helper()
	ring, err := keyring.New(secrets, googleauth.KeyPurpose)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := googleauth.New(googleauth.Config{
		Endpoints: google.Endpoints{Base: f.google.srv.URL}, ClientID: "cid", ClientSecret: "csecret",
		RedirectURL: "https://mail.example/oauth/callback", Drafts: drafts, Store: f.store, Keys: ring,
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// signIn runs consent's back half: the code exchange and SaveGrant.
func (f *fixture) signIn(t *testing.T) store.User {
	t.Helper()
	verifier := oauth2.GenerateVerifier()
	u, _ := url.Parse(f.svc.AuthCodeURL("st", verifier))
	f.google.mu.Lock()
	f.google.challenge = u.Query().Get("code_challenge")
	f.google.mu.Unlock()
	g, err := f.svc.Exchange(context.Background(), "good-code", verifier)
	if err != nil {
		t.Fatal(err)
	}
	user, err := f.svc.SaveGrant(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	return user
}

// call makes one API request as the user and returns the bearer Google saw.
func (f *fixture) call(t *testing.T, userID string) (string, error) {
	t.Helper()
	hc, err := f.svc.Client(context.Background(), userID)
	if err != nil {
		return "", err
	}
	resp, err := hc.Get(f.google.srv.URL + "/api")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	return readAll(resp), nil
}

func readAll(resp *http.Response) string {
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	return buf.String()
}

// expire rewrites the stored token as expired (as time passing would).
func (f *fixture) expire(t *testing.T, userID, refreshToken string) {
	t.Helper()
	g := googleauth.Grant{Token: &oauth2.Token{AccessToken: "ya29.old", RefreshToken: refreshToken, Expiry: time.Now().Add(-time.Minute)},
		Subject: "10001", Email: "ana@example.com"}
	if _, err := f.svc.SaveGrant(context.Background(), g); err != nil {
		t.Fatal(err)
	}
}

func TestAuthCodeURL(t *testing.T) {
	f := newFixture(t)
	for _, drafts := range []bool{false, true} {
		svc := f.service(t, [][]byte{f.secret}, drafts)
		u, err := url.Parse(svc.AuthCodeURL("state-1", oauth2.GenerateVerifier()))
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		for k, want := range map[string]string{
			"access_type": "offline", "prompt": "consent", "code_challenge_method": "S256",
			"state": "state-1", "client_id": "cid", "redirect_uri": "https://mail.example/oauth/callback",
			"response_type": "code",
		} {
			if q.Get(k) != want {
				t.Errorf("%s = %q, want %q", k, q.Get(k), want)
			}
		}
		if u.Path != "/o/oauth2/v2/auth" {
			t.Errorf("consent path %q", u.Path)
		}
		scope := q.Get("scope")
		for _, s := range []string{"openid", "email", googleauth.ScopeGmailSend, googleauth.ScopeDriveReadonly, googleauth.ScopeDriveFile} {
			if !strings.Contains(scope, s) {
				t.Errorf("scope %q lacks %s", scope, s)
			}
		}
		if got := strings.Contains(scope, googleauth.ScopeGmailCompose); got != drafts {
			t.Errorf("drafts=%v but gmail.compose asked: %v", drafts, got)
		}
	}
}

func TestSignInStoresSealedTokenAndRecordsGrantedScopes(t *testing.T) {
	f := newFixture(t)
	user := f.signIn(t)
	if user.Email != "ana@example.com" || user.GoogleSubject != "10001" {
		t.Fatalf("user = %+v", user)
	}
	want := []string{"email", googleauth.ScopeDriveFile, googleauth.ScopeGmailSend, "openid"}
	if fmt.Sprint(user.GoogleScopes) != fmt.Sprint(want) {
		t.Fatalf("granted scopes %v, want %v (drive.readonly was not granted)", user.GoogleScopes, want)
	}
	row, err := f.store.GetGoogleToken(context.Background(), user.ID)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(row.Ciphertext, []byte("ya29.first")) || bytes.Contains(row.Ciphertext, []byte("1//refresh-A")) {
		t.Fatal("the stored Google token is not encrypted")
	}
	got, err := f.call(t, user.ID)
	if err != nil || got != "Bearer ya29.first" {
		t.Fatalf("Google saw %q, %v; want the exchanged token", got, err)
	}
	if f.google.refreshCount() != 0 {
		t.Fatal("a fresh token was refreshed")
	}
}

func TestExchangeRefusals(t *testing.T) {
	f := newFixture(t)
	_, err := f.svc.Exchange(context.Background(), "bad-code", "v")
	if err == nil {
		t.Fatal("a bad code was accepted")
	}
	if strings.Contains(err.Error(), secretBody) {
		t.Fatalf("error %q carries Google's response body", err)
	}
	f.google.mu.Lock()
	f.google.emailVerified = false
	f.google.mu.Unlock()
	_, err = f.svc.GrantForToken(context.Background(), &oauth2.Token{AccessToken: "ya29.x"})
	if err == nil || !strings.Contains(err.Error(), "not verified") {
		t.Fatalf("unverified email: %v", err)
	}
}

func TestReconsentWithoutRefreshTokenKeepsTheOldOne(t *testing.T) {
	f := newFixture(t)
	user := f.signIn(t)
	f.google.mu.Lock()
	f.google.omitRefresh = true
	f.google.mu.Unlock()
	f.signIn(t)
	f.expire(t, user.ID, "") // SaveGrant again without a refresh token: the old one stays
	got, err := f.call(t, user.ID)
	if err != nil || got != "Bearer ya29.refreshed-1" {
		t.Fatalf("after re-consent without a refresh token: %q, %v", got, err)
	}
}

func TestExpiredTokenRefreshesOnceAndPersists(t *testing.T) {
	f := newFixture(t)
	user := f.signIn(t)
	f.expire(t, user.ID, "1//refresh-A")

	const callers = 10
	var wg sync.WaitGroup
	seen := make(chan string, callers)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := f.call(t, user.ID)
			if err != nil {
				t.Error(err)
				return
			}
			seen <- got
		}()
	}
	wg.Wait()
	close(seen)
	for got := range seen {
		if got != "Bearer ya29.refreshed-1" {
			t.Errorf("a caller used %q", got)
		}
	}
	if n := f.google.refreshCount(); n != 1 {
		t.Fatalf("%d concurrent callers caused %d refreshes, want 1", callers, n)
	}
	// A new service (a restart, or another replica) reads the refreshed
	// token from the store instead of refreshing again.
	other := f.service(t, [][]byte{f.secret}, false)
	hc, err := other.Client(context.Background(), user.ID)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(f.google.srv.URL + "/api")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(resp); got != "Bearer ya29.refreshed-1" {
		t.Fatalf("another replica used %q", got)
	}
	if n := f.google.refreshCount(); n != 1 {
		t.Fatalf("the refreshed token was not persisted: %d refreshes", n)
	}
}

func TestRevokedGoogleGrantAsksToReconnect(t *testing.T) {
	f := newFixture(t)
	user := f.signIn(t)
	f.expire(t, user.ID, "1//refresh-A")
	f.google.mu.Lock()
	f.google.failRefresh, f.google.failCode = http.StatusBadRequest, "invalid_grant"
	f.google.mu.Unlock()
	_, err := f.call(t, user.ID)
	if !errors.Is(err, googleauth.ErrReconnect) {
		t.Fatalf("err = %v, want ErrReconnect", err)
	}
	if !strings.Contains(err.Error(), "reconnect drivemail (sign in again)") {
		t.Fatalf("error text %q does not tell the user what to do", err)
	}
	for _, secret := range []string{secretBody, "1//refresh-A", "ya29.old"} {
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("error %q reveals %q", err, secret)
		}
	}
}

func TestOtherRefreshFailuresAreNotReconnect(t *testing.T) {
	f := newFixture(t)
	user := f.signIn(t)
	f.expire(t, user.ID, "1//refresh-A")
	f.google.mu.Lock()
	f.google.failRefresh, f.google.failCode = http.StatusInternalServerError, "internal_failure"
	f.google.mu.Unlock()
	_, err := f.call(t, user.ID)
	if err == nil || errors.Is(err, googleauth.ErrReconnect) {
		t.Fatalf("a Google outage: err = %v, want a plain error", err)
	}
	if strings.Contains(err.Error(), secretBody) {
		t.Fatalf("error %q carries Google's body", err)
	}
}

func TestNoStoredTokenAsksToReconnect(t *testing.T) {
	f := newFixture(t)
	_, err := f.svc.Client(context.Background(), "nobody")
	if !errors.Is(err, googleauth.ErrReconnect) {
		t.Fatalf("err = %v, want ErrReconnect", err)
	}
}

func TestKeyRotation(t *testing.T) {
	f := newFixture(t)
	user := f.signIn(t)
	before, _ := f.store.GetGoogleToken(context.Background(), user.ID)
	newSecret := bytes.Repeat([]byte{9}, 32)

	rotated := f.service(t, [][]byte{newSecret, f.secret}, false)
	if _, err := rotated.Client(context.Background(), user.ID); err != nil {
		t.Fatalf("a ring with the old key second cannot read old tokens: %v", err)
	}
	f.svc = rotated
	f.expire(t, user.ID, "1//refresh-A")
	if _, err := f.call(t, user.ID); err != nil {
		t.Fatal(err)
	}
	after, _ := f.store.GetGoogleToken(context.Background(), user.ID)
	if after.KeyID == before.KeyID {
		t.Fatal("a token written after rotation still uses the old key")
	}
	newOnly := f.service(t, [][]byte{newSecret}, false)
	if _, err := newOnly.Client(context.Background(), user.ID); err != nil {
		t.Fatalf("the re-sealed token does not open with the new key alone: %v", err)
	}
}

// A stored token that no key opens (its --secret was dropped, or the row
// was damaged) is a lost grant: the user is told to reconnect, and
// signing in again replaces it.
func TestUnreadableStoredTokenAsksToReconnect(t *testing.T) {
	f := newFixture(t)
	user := f.signIn(t)
	row, err := f.store.GetGoogleToken(context.Background(), user.ID)
	if err != nil {
		t.Fatal(err)
	}
	damaged := row
	damaged.Ciphertext = bytes.Clone(row.Ciphertext)
	damaged.Ciphertext[len(damaged.Ciphertext)-1] ^= 1
	tests := []struct {
		name    string
		secrets [][]byte
		row     store.GoogleToken
		cause   string // what the operator's log line says
	}{
		{"sealed with a dropped key", [][]byte{bytes.Repeat([]byte{9}, 32)}, row, "--secret NEW,OLD"},
		{"damaged ciphertext", [][]byte{f.secret}, damaged, "cannot open"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := f.store.PutGoogleToken(context.Background(), tc.row); err != nil {
				t.Fatal(err)
			}
			f.svc = f.service(t, tc.secrets, false)
			_, err := f.svc.Client(context.Background(), user.ID)
			if !errors.Is(err, googleauth.ErrReconnect) || !strings.Contains(err.Error(), tc.cause) {
				t.Fatalf("err = %v, want ErrReconnect naming the cause %q", err, tc.cause)
			}
			f.signIn(t)
			if got, err := f.call(t, user.ID); err != nil || got != "Bearer ya29.first" {
				t.Fatalf("after signing in again: %q %v", got, err)
			}
		})
	}
}

func TestNewRefusals(t *testing.T) {
	ring, _ := keyring.New([][]byte{bytes.Repeat([]byte{1}, 32)}, googleauth.KeyPurpose)
	if _, err := googleauth.New(googleauth.Config{RedirectURL: "x", Keys: ring}); err == nil || !strings.Contains(err.Error(), "--google-client-id") {
		t.Fatalf("missing client id: %v", err)
	}
}

// TestReadMailScopeOnlyWhenEnabled: gmail.readonly, a restricted scope,
// is asked for at sign-in only by a server started with --read-mail.
func TestReadMailScopeOnlyWhenEnabled(t *testing.T) {
	f := newFixture(t)
	for _, on := range []bool{false, true} {
		svc := f.configured(t, func(c *googleauth.Config) { c.ReadMail = on })
		u, _ := url.Parse(svc.AuthCodeURL("s", oauth2.GenerateVerifier()))
		if got := strings.Contains(u.Query().Get("scope"), googleauth.ScopeGmailReadonly); got != on || svc.ReadMail() != on {
			t.Errorf("read mail %v: gmail.readonly asked %v", on, got)
		}
	}
}
