package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/store/postgres"
	"github.com/drivemail/drivemail/store/storetest"
)

// session is a store whose connections carry their own application_name,
// so a test can see in pg_stat_activity when they wait for a lock.
type session struct {
	store.Store
	app string
}

// openSession opens a store on u whose connections plan as they would on
// a production-sized tokens table: by index, not by reading the heap. On
// a table of a few dozen rows every statement reads the heap in physical
// order, so all of them lock rows in one order and a lock-order bug
// cannot show.
func openSession(t *testing.T, u string, opts store.Options) session {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	app := "drivemail_test_" + hex.EncodeToString(b)
	q := pu.Query()
	q.Set("enable_seqscan", "off")
	q.Set("enable_bitmapscan", "off")
	q.Set("application_name", app)
	pu.RawQuery = q.Encode()
	s, err := postgres.Open(context.Background(), pu.String(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return session{Store: s, app: app}
}

// waitForLockWaits waits until n connections of the named sessions are
// blocked on a lock, or fails the test after 10 seconds.
func waitForLockWaits(t *testing.T, conn *pgx.Conn, n int, apps ...string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var waiting int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = ANY($1) AND wait_event_type = 'Lock'`, apps).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d connections wait for a lock after 10 s: the test did not set up the race", waiting, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// seedExpiredGrant stores a live grant with n expired access tokens,
// written latest-expiry first: the grant's tokens in the order they were
// written are the reverse of their order by expiry. It returns the raw
// tokens in the order written.
func seedExpiredGrant(t *testing.T, s store.Store, now time.Time, id string, n int) []string {
	t.Helper()
	ctx := context.Background()
	user, err := s.UpsertUser(ctx, store.User{GoogleSubject: "sub-" + id, Email: id + "@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	g := store.Grant{ID: id, UserID: user.ID, ClientID: "client", Resource: "https://mail.example/mcp", Scope: "drivemail", CreatedAt: now}
	if err := s.CreateGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	raws := make([]string, n)
	for i := range raws {
		raws[i] = fmt.Sprintf("%s-at-%d", id, i)
		tok := store.Token{Kind: store.AccessToken, GrantID: id, ClientID: g.ClientID, UserID: user.ID,
			Resource: g.Resource, Scope: g.Scope, ExpiresAt: now.Add(-time.Duration(i+1) * time.Second)}
		if err := s.PutToken(ctx, raws[i], tok); err != nil {
			t.Fatal(err)
		}
	}
	return raws
}

// TestRevokeRacesSweep revokes a grant that holds several expired tokens
// while the sweeper deletes them, many times over. A revocation follows a
// detected code or refresh-token reuse: it must always land, and neither
// side may fail (PostgreSQL ends a deadlock by aborting one side).
//
// Left alone, the two statements overlap only by luck. So each round a
// third connection holds one of the grant's tokens until both sides wait
// for a lock, then lets go: each side has by then locked what it reached
// before that token, and goes on from there. Rounds vary the held token
// and which side starts first.
func TestRevokeRacesSweep(t *testing.T) {
	u := storetest.PostgresURL(t)
	clock := storetest.NewClock()
	opts := store.Options{Now: clock.Now}
	revoker, sweeper := openSession(t, u, opts), openSession(t, u, opts)
	ctx := context.Background()
	holder, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)

	const (
		rounds         = 16
		budget         = 60 * time.Second
		tokensPerGrant = 8
	)
	deadline := time.Now().Add(budget)
	round := 0
	for ; round < rounds && time.Now().Before(deadline); round++ {
		id := fmt.Sprintf("grant-%d", round)
		raws := seedExpiredGrant(t, revoker, clock.Now(), id, tokensPerGrant)
		held := raws[1+round%(tokensPerGrant-2)] // never the first or last: both sides reach it midway
		tx, err := holder.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `SELECT 1 FROM tokens WHERE hash = $1 FOR UPDATE`, store.Hash(held)); err != nil {
			t.Fatal(err)
		}
		var (
			wg                  sync.WaitGroup
			revokeErr, sweepErr error
		)
		revoke := func() { defer wg.Done(); revokeErr = revoker.RevokeGrant(ctx, id) }
		sweep := func() { defer wg.Done(); _, sweepErr = sweeper.Sweep(ctx) }
		first, second := revoke, sweep
		if round%2 == 1 {
			first, second = sweep, revoke
		}
		wg.Add(2)
		go first()
		waitForLockWaits(t, holder, 1, revoker.app, sweeper.app)
		go second()
		waitForLockWaits(t, holder, 2, revoker.app, sweeper.app)
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Wait()

		if revokeErr != nil {
			t.Fatalf("round %d: the revocation failed while the sweeper ran: %v", round+1, revokeErr)
		}
		if sweepErr != nil {
			t.Fatalf("round %d: the sweep failed while a revocation ran: %v", round+1, sweepErr)
		}
		g, err := revoker.GetGrant(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !g.Revoked {
			t.Fatalf("round %d: the grant is live after RevokeGrant returned", round+1)
		}
		for _, raw := range raws {
			if _, err := revoker.GetToken(ctx, raw); err != store.ErrNotFound {
				t.Fatalf("round %d: a token of the revoked grant: got %v, want store.ErrNotFound", round+1, err)
			}
		}
	}
	if round < rounds {
		t.Logf("ran %d of %d rounds within %v", round, rounds, budget)
	}
}

// TestRevokeRunsAgainAfterADeadlock has another writer lock in the
// opposite order, one of the grant's tokens and then the grant, while a
// revocation holds the grant and waits for that token. PostgreSQL breaks
// the deadlock by aborting the side whose wait started first, the
// revocation; RevokeGrant must run it again rather than leave the grant
// live.
func TestRevokeRunsAgainAfterADeadlock(t *testing.T) {
	u := storetest.PostgresURL(t)
	clock := storetest.NewClock()
	revoker := openSession(t, u, store.Options{Now: clock.Now})
	ctx := context.Background()
	raws := seedExpiredGrant(t, revoker, clock.Now(), "grant", 4)
	other, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM tokens WHERE hash = $1 FOR UPDATE`, store.Hash(raws[2])); err != nil {
		t.Fatal(err)
	}
	revoked := make(chan error, 1)
	go func() { revoked <- revoker.RevokeGrant(ctx, "grant") }()
	waitForLockWaits(t, other, 1, revoker.app)
	// Start the other wait well after the revocation's, so the
	// revocation's deadlock check runs first and it is the one aborted.
	// A sleep, because the gap itself is the setup: PostgreSQL checks for
	// a deadlock deadlock_timeout after each wait began, and nothing
	// signals when the revocation's check is due.
	time.Sleep(200 * time.Millisecond)
	if _, err := tx.Exec(ctx, `UPDATE grants SET scope = scope WHERE id = $1`, "grant"); err != nil {
		t.Fatalf("the other writer was aborted, not the revocation, so nothing ran again: %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-revoked; err != nil {
		t.Fatalf("RevokeGrant after the database aborted it once for a deadlock: %v", err)
	}
	g, err := revoker.GetGrant(ctx, "grant")
	if err != nil {
		t.Fatal(err)
	}
	if !g.Revoked {
		t.Fatal("the grant is live after RevokeGrant returned")
	}
	for _, raw := range raws {
		if _, err := revoker.GetToken(ctx, raw); err != store.ErrNotFound {
			t.Fatalf("a token of the revoked grant: got %v, want store.ErrNotFound", err)
		}
	}
}
