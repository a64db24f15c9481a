package oauth_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/store/postgres"
	"github.com/drivemail/drivemail/store/storetest"
)

// TestReplicasShareOnePostgres runs two authorization servers, each with
// its own connection pool to one PostgreSQL database, behind a balancer
// that sends each request to the other replica: no sticky sessions.
func TestReplicasShareOnePostgres(t *testing.T) {
	clock := storetest.NewClock()
	open := postgresStores(t, clock)
	h := newHarness(t, options{store: open(), clock: clock})
	replica := http.NewServeMux()
	h.routes(replica, h.newAS(open()))
	var served [2]atomic.Int32
	var next atomic.Int32
	h.setFront(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := next.Add(1) % 2
		served[i].Add(1)
		if i == 0 {
			h.mux.ServeHTTP(w, r)
		} else {
			replica.ServeHTTP(w, r)
		}
	}))

	// Registration, authorize, consent, Google's callback and the token
	// exchange each land on whichever replica is next.
	a, tok := h.authorize()
	for range 4 {
		if c, _, u := h.call(str(tok, "access_token")); c != http.StatusOK || u.Email != "demo@example.com" {
			t.Fatalf("a replica refused the other's token: %d", c)
		}
	}
	status, tok2 := h.refresh(a.clientID, str(tok, "refresh_token"))
	if status != http.StatusOK {
		t.Fatalf("refresh on a replica: %d %v", status, tok2)
	}
	status, body := h.refresh(a.clientID, str(tok, "refresh_token"))
	wantTokenError(t, status, body, 400, "invalid_grant", "already used")
	for range 2 {
		if c, _, _ := h.call(str(tok2, "access_token")); c != http.StatusUnauthorized {
			t.Fatalf("after reuse was detected on one replica, the other still accepts the grant's token: %d", c)
		}
	}

	// One code, redeemed at the same moment on both replicas: at most one
	// redemption can win, and since the others are reuse, the grant is
	// revoked, so no token from it survives.
	a = h.newAuthRequest(h.publicClient())
	code := h.codeFor(a)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, body := h.exchange(a, code)
			switch {
			case s == http.StatusOK:
				mu.Lock()
				winners = append(winners, str(body, "access_token"))
				mu.Unlock()
			case str(body, "error") != "invalid_grant":
				t.Errorf("a losing redemption got %d %v, want invalid_grant", s, body)
			}
		}()
	}
	wg.Wait()
	if len(winners) > 1 {
		t.Fatalf("%d concurrent redemptions of one code succeeded", len(winners))
	}
	for _, at := range winners {
		if c, _, _ := h.call(at); c != http.StatusUnauthorized {
			t.Fatalf("the token of a code redeemed twice still works: %d", c)
		}
	}
	if served[0].Load() == 0 || served[1].Load() == 0 {
		t.Fatalf("the balancer did not use both replicas: %d and %d requests", served[0].Load(), served[1].Load())
	}
}

// postgresStores returns a function that opens a store, with its own
// connection pool, on one fresh PostgreSQL database: a replica each call.
// It skips the test, saying why, when no server answers.
func postgresStores(t *testing.T, clock *storetest.Clock) func() store.Store {
	pg := storetest.PostgresURL(t)
	return func() store.Store {
		s, err := postgres.Open(context.Background(), pg, store.Options{Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}
