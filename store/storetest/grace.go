package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/drivemail/drivemail/store"
)

// graceRotation rotates with a 60 s grace window, two reuses, and a
// successor sealed as the bytes of name (the store never opens it).
func graceRotation(c *Clock, name string) store.Rotation {
	return store.Rotation{
		Tokens: []store.NewToken{
			{Raw: name + "-at", Kind: store.AccessToken, ExpiresAt: c.Now().Add(time.Hour)},
			{Raw: name + "-rt", Kind: store.RefreshToken, ExpiresAt: c.Now().Add(30 * 24 * time.Hour)},
		},
		Successor: store.Sealed{KeyID: "k1", Ciphertext: []byte("sealed " + name)},
		Grace:     time.Minute,
		MaxReuses: 2,
	}
}

func putRefresh(t *testing.T, s store.Store, c *Clock, g store.Grant, raw string) {
	t.Helper()
	must(t, s.PutToken(context.Background(), raw, store.Token{Kind: store.RefreshToken, GrantID: g.ID, ClientID: g.ClientID,
		UserID: g.UserID, Resource: g.Resource, Scope: g.Scope, ExpiresAt: c.Now().Add(30 * 24 * time.Hour)}))
}

// testRefreshReuseWithinGrace checks a spent refresh token presented again
// within the grace window gets its sealed successor back (and nothing new
// is stored), up to MaxReuses times, and is a replay (ErrUsed) after the
// window, past the count, or without a window.
func testRefreshReuseWithinGrace(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	g := seedGrant(t, s, c, "g1")
	putRefresh(t, s, c, g, "rt-1")

	first, err := s.RotateRefreshToken(ctx, "rt-1", graceRotation(c, "n1"))
	must(t, err)
	if first.Used || first.Successor.Ciphertext != nil {
		t.Fatalf("the spending rotation returned %+v, want the token as it was (unused, no successor)", first)
	}
	c.Advance(time.Minute) // the edge of the window: still inside
	for i := range 2 {
		again, err := s.RotateRefreshToken(ctx, "rt-1", graceRotation(c, fmt.Sprintf("reuse%d", i)))
		must(t, err)
		if !again.Used || again.GrantID != g.ID || again.Successor.KeyID != "k1" || !bytes.Equal(again.Successor.Ciphertext, []byte("sealed n1")) {
			t.Fatalf("reuse %d within the window: %+v, want it marked used with the first rotation's successor", i+1, again)
		}
		_, err = s.GetToken(ctx, fmt.Sprintf("reuse%d-rt", i))
		wantErr(t, "a token offered by a reuse within the window", err, store.ErrNotFound)
	}
	third, err := s.RotateRefreshToken(ctx, "rt-1", graceRotation(c, "reuse3"))
	wantErr(t, "a third reuse when two are allowed", err, store.ErrUsed)
	if third.GrantID != g.ID || third.Reuses != 2 {
		t.Fatalf("a reuse past the count must name its grant and count; got %+v", third)
	}

	putRefresh(t, s, c, g, "rt-2")
	_, err = s.RotateRefreshToken(ctx, "rt-2", graceRotation(c, "n2"))
	must(t, err)
	c.Advance(time.Minute + time.Millisecond)
	late, err := s.RotateRefreshToken(ctx, "rt-2", graceRotation(c, "late"))
	wantErr(t, "a reuse 1 ms after the window", err, store.ErrUsed)
	if late.GrantID != g.ID {
		t.Fatalf("a late reuse must name its grant; got %+v", late)
	}

	putRefresh(t, s, c, g, "rt-3")
	off := graceRotation(c, "n3")
	_, err = s.RotateRefreshToken(ctx, "rt-3", off)
	must(t, err)
	off.Grace = 0
	_, err = s.RotateRefreshToken(ctx, "rt-3", off)
	wantErr(t, "a reuse with the window off", err, store.ErrUsed)

	putRefresh(t, s, c, g, "rt-4")
	bare := graceRotation(c, "n4")
	bare.Successor = store.Sealed{}
	_, err = s.RotateRefreshToken(ctx, "rt-4", bare)
	must(t, err)
	_, err = s.RotateRefreshToken(ctx, "rt-4", graceRotation(c, "n4b"))
	wantErr(t, "a reuse of a token spent without a kept successor", err, store.ErrUsed)

	tooLong := graceRotation(c, "n5")
	tooLong.Grace = store.MaxRefreshGrace + time.Millisecond
	if _, err := s.RotateRefreshToken(ctx, "rt-unknown", tooLong); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a grace longer than MaxRefreshGrace: %v, want it refused", err)
	}
}

// testRefreshReuseSweep checks the sweeper forgets a spent token's sealed
// successor once no grace window can reach it.
func testRefreshReuseSweep(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	g := seedGrant(t, s, c, "g1")
	putRefresh(t, s, c, g, "rt-1")
	r := graceRotation(c, "n1")
	r.Grace = store.MaxRefreshGrace
	_, err := s.RotateRefreshToken(ctx, "rt-1", r)
	must(t, err)
	c.Advance(store.MaxRefreshGrace - time.Millisecond)
	_, err = s.Sweep(ctx)
	must(t, err)
	if _, err := s.RotateRefreshToken(ctx, "rt-1", r); err != nil {
		t.Fatalf("a reuse within the longest window after a sweep: %v", err)
	}
	c.Advance(time.Millisecond)
	_, err = s.Sweep(ctx)
	must(t, err)
	_, err = s.RotateRefreshToken(ctx, "rt-1", r)
	wantErr(t, "a reuse after the sweeper forgot the successor", err, store.ErrUsed)
}

// testConcurrentReuseWithinGrace races three rotations of one refresh
// token on two connections: one spends it, the others get its successor.
func testConcurrentReuseWithinGrace(t *testing.T, b Backend) {
	c := NewClock()
	ctx := context.Background()
	stores := []store.Store{open(t, b, c), open(t, b, c)}
	g := seedGrant(t, stores[0], c, "g1")
	for round := range 5 {
		raw := fmt.Sprintf("rt-%d", round)
		putRefresh(t, stores[0], c, g, raw)
		var (
			wg             sync.WaitGroup
			mu             sync.Mutex
			spent, reused  int
			errs           []error
			successorBytes [][]byte
		)
		for i := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tok, err := stores[i%2].RotateRefreshToken(ctx, raw, graceRotation(c, fmt.Sprintf("%s-n%d", raw, i)))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					errs = append(errs, err)
				case tok.Used:
					reused++
					successorBytes = append(successorBytes, tok.Successor.Ciphertext)
				default:
					spent++
				}
			}()
		}
		wg.Wait()
		if len(errs) > 0 || spent != 1 || reused != 2 {
			t.Fatalf("round %d: %d spent, %d reused, errors %v; want 1, 2 and none", round, spent, reused, errs)
		}
		if !bytes.Equal(successorBytes[0], successorBytes[1]) {
			t.Fatalf("round %d: the reuses got different successors %q and %q", round, successorBytes[0], successorBytes[1])
		}
	}
}

// testDeadGoogleTokens checks a Google token can be marked dead only at
// the version it was read at, that the user shows it, and that a new
// sign-in (PutGoogleToken) brings it back.
func testDeadGoogleTokens(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	u, err := s.UpsertUser(ctx, store.User{GoogleSubject: "1234", Email: "ana@example.com"})
	must(t, err)
	wantErr(t, "marking a missing token dead", s.MarkGoogleTokenDead(ctx, u.ID, 1), store.ErrNotFound)
	v1, err := s.PutGoogleToken(ctx, store.GoogleToken{UserID: u.ID, KeyID: "k", Ciphertext: []byte("one")})
	must(t, err)
	v2, err := s.SwapGoogleToken(ctx, store.GoogleToken{UserID: u.ID, KeyID: "k", Ciphertext: []byte("two")}, v1)
	must(t, err)
	wantErr(t, "marking dead at a stale version", s.MarkGoogleTokenDead(ctx, u.ID, v1), store.ErrConflict)
	if got, err := s.GetUser(ctx, u.ID); err != nil || got.GoogleGrantDead {
		t.Fatalf("before marking: %+v, %v; want alive", got, err)
	}
	must(t, s.MarkGoogleTokenDead(ctx, u.ID, v2))
	tok, err := s.GetGoogleToken(ctx, u.ID)
	must(t, err)
	if !tok.Dead || tok.Version == v2 {
		t.Fatalf("after marking: %+v; want dead at a new version", tok)
	}
	if got, err := s.GetUser(ctx, u.ID); err != nil || !got.GoogleGrantDead {
		t.Fatalf("the user of a dead token: %+v, %v; want GoogleGrantDead", got, err)
	}
	_, err = s.SwapGoogleToken(ctx, store.GoogleToken{UserID: u.ID, KeyID: "k", Ciphertext: []byte("late")}, v2)
	wantErr(t, "a refresh that read the token before it died", err, store.ErrConflict)
	_, err = s.PutGoogleToken(ctx, store.GoogleToken{UserID: u.ID, KeyID: "k", Ciphertext: []byte("signed in again")})
	must(t, err)
	if got, err := s.GetUser(ctx, u.ID); err != nil || got.GoogleGrantDead {
		t.Fatalf("after a new sign-in: %+v, %v; want alive", got, err)
	}
}

// testLiveGrants counts a user's grants that still hold something usable.
func testLiveGrants(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	g1 := seedGrant(t, s, c, "g1")
	user := g1.UserID
	count := func(want int, when string) {
		t.Helper()
		n, err := s.LiveGrants(ctx, user)
		must(t, err)
		if n != want {
			t.Fatalf("%s: %d live grants, want %d", when, n, want)
		}
	}
	count(0, "a grant with nothing issued")
	must(t, s.PutToken(ctx, "at-1", store.Token{Kind: store.AccessToken, GrantID: g1.ID, UserID: user, ExpiresAt: c.Now().Add(time.Hour)}))
	g2 := store.Grant{ID: "g2", UserID: user, ClientID: "client-g2", Resource: g1.Resource, Scope: g1.Scope, CreatedAt: c.Now()}
	must(t, s.CreateGrant(ctx, g2))
	must(t, s.PutCode(ctx, "code-2", store.Code{GrantID: g2.ID, UserID: user, ExpiresAt: c.Now().Add(time.Minute)}))
	other := seedGrant(t, s, c, "g3") // another user's
	must(t, s.PutToken(ctx, "at-3", store.Token{Kind: store.AccessToken, GrantID: other.ID, UserID: other.UserID, ExpiresAt: c.Now().Add(time.Hour)}))
	count(2, "a token and a code")
	_, err := s.TakeCode(ctx, "code-2")
	must(t, err)
	count(1, "the code redeemed")
	c.Advance(time.Hour)
	count(0, "the token expired")
	c.Advance(-time.Hour)
	must(t, s.RevokeGrant(ctx, g1.ID))
	count(0, "the grant revoked")
}
