package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/drivemail/drivemail/store"
)

func open(t *testing.T, b Backend, c *Clock) store.Store {
	t.Helper()
	s := b.Open(t, store.Options{Now: c.Now})
	t.Cleanup(func() { s.Close() })
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, what string, got, want error) {
	t.Helper()
	if !errors.Is(got, want) {
		t.Fatalf("%s: got error %v, want %v", what, got, want)
	}
}

// seedGrant stores a user and a live grant and returns the grant.
func seedGrant(t *testing.T, s store.Store, c *Clock, id string) store.Grant {
	t.Helper()
	ctx := context.Background()
	u, err := s.UpsertUser(ctx, store.User{GoogleSubject: "sub-" + id, Email: id + "@example.com", GoogleScopes: []string{"openid"}})
	must(t, err)
	g := store.Grant{ID: id, UserID: u.ID, ClientID: "client-" + id, Resource: "https://mail.example/mcp", Scope: "drivemail", CreatedAt: c.Now()}
	must(t, s.CreateGrant(ctx, g))
	return g
}

func testMigrations(t *testing.T, b Backend) {
	c := NewClock()
	ctx := context.Background()
	s1 := open(t, b, c)
	must(t, s1.CreateClient(ctx, store.Client{ID: "c1", Name: "first", RedirectURIs: []string{"https://a.example/cb"}, GrantTypes: []string{"authorization_code"}, AuthMethod: "none", CreatedAt: c.Now()}))
	// A second open of the same database (a restart, or a replica) finds
	// the schema current and the data intact.
	s2 := open(t, b, c)
	got, err := s2.GetClient(ctx, "c1")
	must(t, err)
	if got.Name != "first" {
		t.Fatalf("after reopening, client name = %q, want %q", got.Name, "first")
	}
	must(t, s2.Ping(ctx))
}

func testClients(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	want := store.Client{
		ID:           "client-1",
		SecretHash:   store.Hash("s3cret"),
		Name:         "Claude ✓ \"quoted\"",
		RedirectURIs: []string{"https://claude.ai/api/mcp/auth_callback", "http://localhost/callback"},
		GrantTypes:   []string{"authorization_code", "refresh_token"},
		AuthMethod:   "client_secret_post",
		CreatedAt:    c.Now(),
	}
	must(t, s.CreateClient(ctx, want))
	got, err := s.GetClient(ctx, want.ID)
	must(t, err)
	if got.Name != want.Name || got.SecretHash != want.SecretHash || got.AuthMethod != want.AuthMethod ||
		!slices.Equal(got.RedirectURIs, want.RedirectURIs) || !slices.Equal(got.GrantTypes, want.GrantTypes) ||
		!got.CreatedAt.Equal(want.CreatedAt) {
		t.Fatalf("GetClient = %+v, want %+v", got, want)
	}
	wantErr(t, "second create with the same id", s.CreateClient(ctx, want), store.ErrDuplicate)
	_, err = s.GetClient(ctx, "nobody")
	wantErr(t, "unknown client", err, store.ErrNotFound)
}

func testAuthRequests(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	req := store.AuthRequest{
		ClientID: "c", RedirectURI: "http://127.0.0.1:5555/cb", ClientState: "xyz", CodeChallenge: "chal",
		Resource: "https://mail.example/mcp", Scope: "drivemail", BrowserHash: store.Hash("browser"),
		CSRFHash: store.Hash("csrf"), ExpiresAt: c.Now().Add(10 * time.Minute),
	}
	must(t, s.CreateAuthRequest(ctx, "req-1", req))
	wantErr(t, "duplicate id", s.CreateAuthRequest(ctx, "req-1", req), store.ErrDuplicate)
	got, err := s.GetAuthRequest(ctx, "req-1")
	must(t, err)
	if got.ClientState != "xyz" || got.BrowserHash != req.BrowserHash || got.Approved || !got.ExpiresAt.Equal(req.ExpiresAt) {
		t.Fatalf("GetAuthRequest = %+v, want %+v", got, req)
	}

	// A state names nothing until consent attached it.
	_, err = s.TakeAuthRequestByState(ctx, "g-state")
	wantErr(t, "state before approval", err, store.ErrNotFound)
	must(t, s.ApproveAuthRequest(ctx, "req-1", "g-state", "g-verifier"))
	wantErr(t, "second approval", s.ApproveAuthRequest(ctx, "req-1", "g-state-2", "v2"), store.ErrUsed)
	wantErr(t, "approving an unknown request", s.ApproveAuthRequest(ctx, "req-x", "s", "v"), store.ErrNotFound)

	taken, err := s.TakeAuthRequestByState(ctx, "g-state")
	must(t, err)
	if !taken.Approved || taken.GoogleVerifier != "g-verifier" || taken.CodeChallenge != "chal" {
		t.Fatalf("TakeAuthRequestByState = %+v", taken)
	}
	_, err = s.TakeAuthRequestByState(ctx, "g-state")
	wantErr(t, "replayed state", err, store.ErrNotFound)
	_, err = s.GetAuthRequest(ctx, "req-1")
	wantErr(t, "request after its state was used", err, store.ErrNotFound)

	// Expiry, at the edge and just past it.
	req.ExpiresAt = c.Now().Add(time.Minute)
	must(t, s.CreateAuthRequest(ctx, "req-2", req))
	must(t, s.ApproveAuthRequest(ctx, "req-2", "state-2", "v"))
	c.Advance(time.Minute - time.Millisecond)
	if _, err := s.GetAuthRequest(ctx, "req-2"); err != nil {
		t.Fatalf("a request 1ms before expiry: %v", err)
	}
	c.Advance(time.Millisecond)
	_, err = s.GetAuthRequest(ctx, "req-2")
	wantErr(t, "a request at its expiry", err, store.ErrNotFound)
	_, err = s.TakeAuthRequestByState(ctx, "state-2")
	wantErr(t, "an expired request's state", err, store.ErrNotFound)

	req.ExpiresAt = c.Now().Add(time.Minute)
	must(t, s.CreateAuthRequest(ctx, "req-3", req))
	must(t, s.DeleteAuthRequest(ctx, "req-3"))
	_, err = s.GetAuthRequest(ctx, "req-3")
	wantErr(t, "deleted request", err, store.ErrNotFound)
	must(t, s.DeleteAuthRequest(ctx, "req-3"))
}

func testUsers(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	u1, err := s.UpsertUser(ctx, store.User{GoogleSubject: "1234", Email: "ana@example.com", GoogleScopes: []string{"openid", "email"}})
	must(t, err)
	if u1.ID == "" {
		t.Fatal("UpsertUser assigned no id")
	}
	c.Advance(time.Hour)
	u2, err := s.UpsertUser(ctx, store.User{GoogleSubject: "1234", Email: "ana@new.example", GoogleScopes: []string{"openid"}})
	must(t, err)
	if u2.ID != u1.ID {
		t.Fatalf("the same Google account got a new id: %q then %q", u1.ID, u2.ID)
	}
	other, err := s.UpsertUser(ctx, store.User{GoogleSubject: "5678", Email: "bo@example.com"})
	must(t, err)
	if other.ID == u1.ID {
		t.Fatal("two Google accounts share one id")
	}
	got, err := s.GetUser(ctx, u1.ID)
	must(t, err)
	if got.Email != "ana@new.example" || !slices.Equal(got.GoogleScopes, []string{"openid"}) || got.GoogleSubject != "1234" {
		t.Fatalf("GetUser = %+v", got)
	}
	if !got.CreatedAt.Before(got.UpdatedAt) {
		t.Fatalf("created %v, updated %v: an update should move only UpdatedAt", got.CreatedAt, got.UpdatedAt)
	}
	_, err = s.GetUser(ctx, "nobody")
	wantErr(t, "unknown user", err, store.ErrNotFound)
}

func testGoogleTokens(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	_, err := s.GetGoogleToken(ctx, "u1")
	wantErr(t, "no token yet", err, store.ErrNotFound)
	sealed := []byte{0, 1, 2, 0xff, 0, 'x'}
	v1, err := s.PutGoogleToken(ctx, store.GoogleToken{UserID: "u1", KeyID: "k1", Ciphertext: sealed})
	must(t, err)
	got, err := s.GetGoogleToken(ctx, "u1")
	must(t, err)
	if !bytes.Equal(got.Ciphertext, sealed) || got.KeyID != "k1" || got.Version != v1 {
		t.Fatalf("GetGoogleToken = %+v, want ciphertext %x key k1 version %d", got, sealed, v1)
	}
	v2, err := s.PutGoogleToken(ctx, store.GoogleToken{UserID: "u1", KeyID: "k2", Ciphertext: []byte("second")})
	must(t, err)
	if v2 <= v1 {
		t.Fatalf("versions %d then %d: want increasing", v1, v2)
	}
	v3, err := s.SwapGoogleToken(ctx, store.GoogleToken{UserID: "u1", KeyID: "k2", Ciphertext: []byte("third")}, v2)
	must(t, err)
	_, err = s.SwapGoogleToken(ctx, store.GoogleToken{UserID: "u1", KeyID: "k2", Ciphertext: []byte("stale")}, v2)
	wantErr(t, "swap at a stale version", err, store.ErrConflict)
	got, err = s.GetGoogleToken(ctx, "u1")
	must(t, err)
	if string(got.Ciphertext) != "third" || got.Version != v3 {
		t.Fatalf("after a lost swap: %q version %d, want %q version %d", got.Ciphertext, got.Version, "third", v3)
	}
	_, err = s.SwapGoogleToken(ctx, store.GoogleToken{UserID: "u2", KeyID: "k", Ciphertext: []byte("x")}, 1)
	wantErr(t, "swap for a user without a token", err, store.ErrNotFound)
}

func testCodes(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	g := seedGrant(t, s, c, "g1")
	code := store.Code{GrantID: g.ID, ClientID: g.ClientID, UserID: g.UserID, RedirectURI: "https://a.example/cb",
		CodeChallenge: "chal", Resource: g.Resource, Scope: g.Scope, ExpiresAt: c.Now().Add(time.Minute)}
	must(t, s.PutCode(ctx, "code-1", code))
	wantErr(t, "duplicate code", s.PutCode(ctx, "code-1", code), store.ErrDuplicate)
	got, err := s.TakeCode(ctx, "code-1")
	must(t, err)
	if got.GrantID != g.ID || got.CodeChallenge != "chal" || got.RedirectURI != code.RedirectURI || got.Used {
		t.Fatalf("TakeCode = %+v", got)
	}
	again, err := s.TakeCode(ctx, "code-1")
	wantErr(t, "a code taken twice", err, store.ErrUsed)
	if again.GrantID != g.ID {
		t.Fatalf("a reused code must name its grant; got %+v", again)
	}
	_, err = s.TakeCode(ctx, "code-unknown")
	wantErr(t, "unknown code", err, store.ErrNotFound)

	code.GrantID = "no-such-grant"
	wantErr(t, "code for a missing grant", s.PutCode(ctx, "code-2", code), store.ErrNotFound)
	must(t, s.RevokeGrant(ctx, g.ID))
	code.GrantID = g.ID
	wantErr(t, "code for a revoked grant", s.PutCode(ctx, "code-3", code), store.ErrNotFound)
}

func testTokens(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	g := seedGrant(t, s, c, "g1")
	access := store.Token{Kind: store.AccessToken, GrantID: g.ID, ClientID: g.ClientID, UserID: g.UserID,
		Resource: g.Resource, Scope: g.Scope, ExpiresAt: c.Now().Add(time.Hour)}
	refresh := access
	refresh.Kind, refresh.ExpiresAt = store.RefreshToken, c.Now().Add(30*24*time.Hour)
	must(t, s.PutToken(ctx, "at-1", access))
	must(t, s.PutToken(ctx, "rt-1", refresh))
	wantErr(t, "duplicate token", s.PutToken(ctx, "at-1", access), store.ErrDuplicate)

	got, err := s.GetToken(ctx, "at-1")
	must(t, err)
	if got.Kind != store.AccessToken || got.UserID != g.UserID || got.Resource != g.Resource || !got.ExpiresAt.Equal(access.ExpiresAt) {
		t.Fatalf("GetToken = %+v, want %+v", got, access)
	}
	next := func(raw string) []store.NewToken {
		return []store.NewToken{
			{Raw: raw + "-at", Kind: store.AccessToken, ExpiresAt: c.Now().Add(time.Hour)},
			{Raw: raw + "-rt", Kind: store.RefreshToken, ExpiresAt: c.Now().Add(30 * 24 * time.Hour)},
		}
	}
	_, err = s.RotateRefreshToken(ctx, "at-1", store.Rotation{Tokens: next("n0")})
	wantErr(t, "an access token rotated as a refresh token", err, store.ErrNotFound)
	rt, err := s.RotateRefreshToken(ctx, "rt-1", store.Rotation{Tokens: next("n1")})
	must(t, err)
	if rt.Kind != store.RefreshToken || rt.GrantID != g.ID || rt.Used {
		t.Fatalf("RotateRefreshToken = %+v", rt)
	}
	for _, nt := range next("n1") {
		got, err := s.GetToken(ctx, nt.Raw)
		must(t, err)
		want := refresh
		want.Kind, want.ExpiresAt = nt.Kind, nt.ExpiresAt
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the rotation's new %s token = %+v, want %+v (the old token's grant, client, user, resource and scope)", nt.Kind, got, want)
		}
	}
	if got, err := s.GetToken(ctx, "rt-1"); err != nil || !got.Used {
		t.Fatalf("the rotated refresh token: %+v, %v; want it kept, marked used", got, err)
	}
	rt, err = s.RotateRefreshToken(ctx, "rt-1", store.Rotation{Tokens: next("n2")})
	wantErr(t, "a rotated refresh token presented again", err, store.ErrUsed)
	if rt.GrantID != g.ID || !rt.Used {
		t.Fatalf("a reused refresh token must name its grant; got %+v", rt)
	}
	_, err = s.GetToken(ctx, "n2-at")
	wantErr(t, "a token issued for a reused refresh token", err, store.ErrNotFound)
	_, err = s.RotateRefreshToken(ctx, "rt-unknown", store.Rotation{Tokens: next("n3")})
	wantErr(t, "unknown refresh token", err, store.ErrNotFound)

	must(t, s.DeleteToken(ctx, "at-1"))
	_, err = s.GetToken(ctx, "at-1")
	wantErr(t, "deleted token", err, store.ErrNotFound)
	must(t, s.DeleteToken(ctx, "at-1"))
	access.GrantID = "no-such-grant"
	wantErr(t, "token for a missing grant", s.PutToken(ctx, "at-2", access), store.ErrNotFound)
}

func testRevokeGrant(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	g := seedGrant(t, s, c, "g1")
	other := seedGrant(t, s, c, "g2")
	tok := func(grant store.Grant, kind store.TokenKind) store.Token {
		return store.Token{Kind: kind, GrantID: grant.ID, ClientID: grant.ClientID, UserID: grant.UserID,
			Resource: grant.Resource, ExpiresAt: c.Now().Add(time.Hour)}
	}
	must(t, s.PutToken(ctx, "at-1", tok(g, store.AccessToken)))
	must(t, s.PutToken(ctx, "rt-1", tok(g, store.RefreshToken)))
	must(t, s.PutToken(ctx, "at-other", tok(other, store.AccessToken)))
	must(t, s.PutCode(ctx, "code-1", store.Code{GrantID: g.ID, ClientID: g.ClientID, UserID: g.UserID, ExpiresAt: c.Now().Add(time.Minute)}))

	must(t, s.RevokeGrant(ctx, g.ID))
	got, err := s.GetGrant(ctx, g.ID)
	must(t, err)
	if !got.Revoked {
		t.Fatal("grant not marked revoked")
	}
	for _, k := range []string{"at-1", "rt-1"} {
		_, err := s.GetToken(ctx, k)
		wantErr(t, "token "+k+" of a revoked grant", err, store.ErrNotFound)
	}
	_, err = s.RotateRefreshToken(ctx, "rt-1", store.Rotation{Tokens: []store.NewToken{{Raw: "at-2", Kind: store.AccessToken, ExpiresAt: c.Now().Add(time.Hour)}}})
	wantErr(t, "refresh token of a revoked grant", err, store.ErrNotFound)
	_, err = s.GetToken(ctx, "at-2")
	wantErr(t, "a token issued for a revoked grant's refresh token", err, store.ErrNotFound)
	_, err = s.TakeCode(ctx, "code-1")
	wantErr(t, "code of a revoked grant", err, store.ErrNotFound)
	wantErr(t, "new token for a revoked grant", s.PutToken(ctx, "at-3", tok(g, store.AccessToken)), store.ErrNotFound)
	if _, err := s.GetToken(ctx, "at-other"); err != nil {
		t.Fatalf("revoking one grant touched another: %v", err)
	}
}

func testUseOnce(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	must(t, s.UseOnce(ctx, "ticket-1", c.Now().Add(time.Minute)))
	wantErr(t, "second use", s.UseOnce(ctx, "ticket-1", c.Now().Add(time.Minute)), store.ErrUsed)
	c.Advance(time.Minute - time.Millisecond)
	wantErr(t, "second use just before expiry", s.UseOnce(ctx, "ticket-1", c.Now().Add(time.Minute)), store.ErrUsed)
	must(t, s.UseOnce(ctx, "ticket-2", c.Now().Add(time.Minute)))
	c.Advance(time.Millisecond)
	// The record of ticket-1 has lived out its time; a ticket that old is
	// refused by its own expiry check, so the key may be recorded anew.
	must(t, s.UseOnce(ctx, "ticket-1", c.Now().Add(time.Minute)))

	// A released key may be used once more, and only once; releasing
	// one never used is no error, and leaves other keys used.
	must(t, s.ReleaseOnce(ctx, "ticket-1"))
	must(t, s.UseOnce(ctx, "ticket-1", c.Now().Add(time.Minute)))
	wantErr(t, "use after release, again", s.UseOnce(ctx, "ticket-1", c.Now().Add(time.Minute)), store.ErrUsed)
	must(t, s.ReleaseOnce(ctx, "never-used"))
	wantErr(t, "another key after a release", s.UseOnce(ctx, "ticket-2", c.Now().Add(time.Minute)), store.ErrUsed)
}

func testHit(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	for want := int64(1); want <= 3; want++ {
		n, err := s.Hit(ctx, "register:192.0.2.1", time.Minute)
		must(t, err)
		if n != want {
			t.Fatalf("hit %d counted %d", want, n)
		}
	}
	n, err := s.Hit(ctx, "register:192.0.2.2", time.Minute)
	must(t, err)
	if n != 1 {
		t.Fatalf("another key's first hit counted %d", n)
	}
	c.Advance(time.Minute)
	n, err = s.Hit(ctx, "register:192.0.2.1", time.Minute)
	must(t, err)
	if n != 1 {
		t.Fatalf("first hit of a new window counted %d", n)
	}
	if _, err := s.Hit(ctx, "k", 0); err == nil {
		t.Fatal("a zero window was accepted")
	}
}

// testSingleUseUnderConcurrency races several stores (connections, as
// replicas would have) on each single-use value: exactly one must win.
func testSingleUseUnderConcurrency(t *testing.T, b Backend) {
	c := NewClock()
	ctx := context.Background()
	stores := []store.Store{open(t, b, c), open(t, b, c)}
	s := stores[0]
	g := seedGrant(t, s, c, "g1")
	must(t, s.PutCode(ctx, "code", store.Code{GrantID: g.ID, ClientID: g.ClientID, UserID: g.UserID, ExpiresAt: c.Now().Add(time.Minute)}))
	must(t, s.PutToken(ctx, "rt", store.Token{Kind: store.RefreshToken, GrantID: g.ID, ClientID: g.ClientID, UserID: g.UserID, ExpiresAt: c.Now().Add(time.Hour)}))
	must(t, s.CreateAuthRequest(ctx, "req", store.AuthRequest{ClientID: "c", ExpiresAt: c.Now().Add(time.Minute)}))
	must(t, s.ApproveAuthRequest(ctx, "req", "state", "v"))

	ops := map[string]func(store.Store) error{
		"TakeCode": func(s store.Store) error { _, err := s.TakeCode(ctx, "code"); return err },
		"RotateRefreshToken": func(s store.Store) error {
			_, err := s.RotateRefreshToken(ctx, "rt", store.Rotation{Tokens: []store.NewToken{{Raw: "rt-" + rand.Text(), Kind: store.RefreshToken, ExpiresAt: c.Now().Add(time.Hour)}}})
			return err
		},
		"TakeAuthRequestByState": func(s store.Store) error { _, err := s.TakeAuthRequestByState(ctx, "state"); return err },
		"UseOnce":                func(s store.Store) error { return s.UseOnce(ctx, "nonce", c.Now().Add(time.Minute)) },
	}
	const racers = 8
	for name, op := range ops {
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			wins int
			errs []error
		)
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := op(stores[i%len(stores)])
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					wins++
				} else if !errors.Is(err, store.ErrUsed) && !errors.Is(err, store.ErrNotFound) {
					errs = append(errs, err)
				}
			}()
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Errorf("%s: unexpected errors: %v", name, errs)
		}
		if wins != 1 {
			t.Errorf("%s: %d of %d concurrent callers succeeded, want exactly 1", name, wins, racers)
		}
	}

	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		counts []int64
	)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := stores[i%len(stores)].Hit(ctx, "k", time.Hour)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			counts = append(counts, n)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(counts)
	for i, n := range counts {
		if n != int64(i+1) {
			t.Fatalf("concurrent hits counted %v, want 1..%d each once", counts, racers)
		}
	}
}

func testSecretsStoredHashed(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	g := seedGrant(t, s, c, "g1")
	secrets := map[string]func(string) error{
		"code": func(v string) error {
			return s.PutCode(ctx, v, store.Code{GrantID: g.ID, ExpiresAt: c.Now().Add(time.Minute)})
		},
		"token": func(v string) error {
			return s.PutToken(ctx, v, store.Token{Kind: store.AccessToken, GrantID: g.ID, ExpiresAt: c.Now().Add(time.Hour)})
		},
		"auth request": func(v string) error {
			return s.CreateAuthRequest(ctx, v, store.AuthRequest{ExpiresAt: c.Now().Add(time.Minute)})
		},
		"nonce":       func(v string) error { return s.UseOnce(ctx, v, c.Now().Add(time.Minute)) },
		"counter key": func(v string) error { _, err := s.Hit(ctx, v, time.Minute); return err },
	}
	for what, put := range secrets {
		v := fmt.Sprintf("SECRET-%s-%d", what[:4], time.Now().UnixNano())
		must(t, put(v))
		if b.Contains(t, v) {
			t.Errorf("the %s %q is stored in the clear", what, v)
		}
	}
	must(t, s.CreateAuthRequest(ctx, "req", store.AuthRequest{ExpiresAt: c.Now().Add(time.Minute)}))
	must(t, s.ApproveAuthRequest(ctx, "req", "GOOGLE-STATE-VALUE", "verifier"))
	if b.Contains(t, "GOOGLE-STATE-VALUE") {
		t.Error("the Google state is stored in the clear")
	}
	// The probe itself must work, or the checks above prove nothing.
	if !b.Contains(t, g.Resource) {
		t.Fatalf("Contains cannot find a value that is stored (%q)", g.Resource)
	}
}

func testSweep(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	live := seedGrant(t, s, c, "live")
	idle := seedGrant(t, s, c, "idle")
	idleUser := idle.UserID
	_, err := s.PutGoogleToken(ctx, store.GoogleToken{UserID: idleUser, KeyID: "k", Ciphertext: []byte("x")})
	must(t, err)
	must(t, s.CreateClient(ctx, store.Client{ID: "unused-client", CreatedAt: c.Now()}))
	must(t, s.CreateClient(ctx, store.Client{ID: live.ClientID, CreatedAt: c.Now()}))
	must(t, s.PutToken(ctx, "short", store.Token{Kind: store.AccessToken, GrantID: idle.ID, ExpiresAt: c.Now().Add(time.Hour)}))
	must(t, s.PutToken(ctx, "long", store.Token{Kind: store.RefreshToken, GrantID: live.ID, ExpiresAt: c.Now().Add(90 * 24 * time.Hour)}))
	must(t, s.PutCode(ctx, "code", store.Code{GrantID: live.ID, ExpiresAt: c.Now().Add(time.Minute)}))
	must(t, s.CreateAuthRequest(ctx, "req", store.AuthRequest{ExpiresAt: c.Now().Add(time.Minute)}))
	must(t, s.UseOnce(ctx, "nonce", c.Now().Add(time.Minute)))
	_, err = s.Hit(ctx, "k", time.Minute)
	must(t, err)

	n, err := s.Sweep(ctx)
	must(t, err)
	if n != 0 {
		t.Fatalf("a sweep with nothing expired deleted %d rows", n)
	}
	if _, err := s.GetToken(ctx, "short"); err != nil {
		t.Fatalf("a live token was swept: %v", err)
	}

	c.Advance(31 * 24 * time.Hour)
	n, err = s.Sweep(ctx)
	must(t, err)
	// short token, code, auth request, nonce, counter, the idle grant,
	// its user and Google token, the unused client.
	if n != 9 {
		t.Errorf("sweep deleted %d rows, want 9", n)
	}
	_, err = s.GetToken(ctx, "short")
	wantErr(t, "expired token after sweep", err, store.ErrNotFound)
	_, err = s.GetGrant(ctx, idle.ID)
	wantErr(t, "grant with nothing live after sweep", err, store.ErrNotFound)
	_, err = s.GetUser(ctx, idleUser)
	wantErr(t, "user with no grant after sweep", err, store.ErrNotFound)
	_, err = s.GetGoogleToken(ctx, idleUser)
	wantErr(t, "Google token of a swept user", err, store.ErrNotFound)
	_, err = s.GetClient(ctx, "unused-client")
	wantErr(t, "unused client after 30 days", err, store.ErrNotFound)
	for what, err := range map[string]error{
		"live token":  func() error { _, err := s.GetToken(ctx, "long"); return err }(),
		"live grant":  func() error { _, err := s.GetGrant(ctx, live.ID); return err }(),
		"live user":   func() error { _, err := s.GetUser(ctx, live.UserID); return err }(),
		"used client": func() error { _, err := s.GetClient(ctx, live.ClientID); return err }(),
	} {
		if err != nil {
			t.Errorf("sweep removed the %s: %v", what, err)
		}
	}
}
