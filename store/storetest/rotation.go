package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/drivemail/drivemail/store"
)

// testRotationIsAtomic checks a rotation that cannot store its new tokens
// leaves the old refresh token unspent and writes nothing.
func testRotationIsAtomic(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	g := seedGrant(t, s, c, "g1")
	must(t, s.PutToken(ctx, "rt-1", store.Token{Kind: store.RefreshToken, GrantID: g.ID, ClientID: g.ClientID, UserID: g.UserID,
		Resource: g.Resource, Scope: g.Scope, ExpiresAt: c.Now().Add(time.Hour)}))
	must(t, s.PutToken(ctx, "taken", store.Token{Kind: store.AccessToken, GrantID: g.ID, ExpiresAt: c.Now().Add(time.Hour)}))
	next := func(access, refresh string) []store.NewToken {
		return []store.NewToken{
			{Raw: access, Kind: store.AccessToken, ExpiresAt: c.Now().Add(time.Hour)},
			{Raw: refresh, Kind: store.RefreshToken, ExpiresAt: c.Now().Add(time.Hour)},
		}
	}
	unspent := func(what string) {
		t.Helper()
		got, err := s.GetToken(ctx, "rt-1")
		must(t, err)
		if got.Used {
			t.Fatalf("after %s, the old refresh token is spent", what)
		}
	}

	// The second new token collides with a stored one: the first, already
	// inserted, must go too.
	_, err := s.RotateRefreshToken(ctx, "rt-1", store.Rotation{Tokens: next("at-a", "taken")})
	wantErr(t, "a rotation whose new token exists", err, store.ErrDuplicate)
	unspent("a rotation that collided")
	_, err = s.GetToken(ctx, "at-a")
	wantErr(t, "the new access token of a failed rotation", err, store.ErrNotFound)

	restore := b.FailInserts(t, "tokens")
	_, err = s.RotateRefreshToken(ctx, "rt-1", store.Rotation{Tokens: next("at-b", "rt-b")})
	if err == nil || errors.Is(err, store.ErrUsed) || errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a rotation the database refused to store: got %v, want a database error", err)
	}
	restore()
	unspent("a rotation the database refused")

	_, err = s.RotateRefreshToken(ctx, "rt-1", store.Rotation{Tokens: next("at-c", "rt-c")})
	must(t, err)
	for _, raw := range []string{"at-c", "rt-c"} {
		_, err := s.GetToken(ctx, raw)
		must(t, err)
	}
}

// testRotationRacesRevocation rotates a refresh token while its grant is
// revoked from another connection: whichever goes first, no token of the
// grant may be live afterwards, and neither side may fail for the other.
func testRotationRacesRevocation(t *testing.T, b Backend) {
	c := NewClock()
	ctx := context.Background()
	rotator, revoker := open(t, b, c), open(t, b, c)
	for i := range 20 {
		g := seedGrant(t, rotator, c, fmt.Sprintf("g%d", i))
		must(t, rotator.PutToken(ctx, g.ID+"-rt", store.Token{Kind: store.RefreshToken, GrantID: g.ID, ClientID: g.ClientID,
			UserID: g.UserID, ExpiresAt: c.Now().Add(time.Hour)}))
		next := []store.NewToken{{Raw: g.ID + "-next", Kind: store.RefreshToken, ExpiresAt: c.Now().Add(time.Hour)}}
		var (
			wg                   sync.WaitGroup
			rotateErr, revokeErr error
		)
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, rotateErr = rotator.RotateRefreshToken(ctx, g.ID+"-rt", store.Rotation{Tokens: next})
		}()
		go func() { defer wg.Done(); revokeErr = revoker.RevokeGrant(ctx, g.ID) }()
		wg.Wait()
		must(t, revokeErr)
		if rotateErr != nil && !errors.Is(rotateErr, store.ErrNotFound) {
			t.Fatalf("round %d: a rotation racing a revocation: %v, want success or store.ErrNotFound", i, rotateErr)
		}
		for _, raw := range []string{g.ID + "-rt", g.ID + "-next"} {
			_, err := rotator.GetToken(ctx, raw)
			wantErr(t, fmt.Sprintf("round %d: token %s after its grant was revoked", i, raw), err, store.ErrNotFound)
		}
	}
}
