package oauth_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drivemail/drivemail/oauth"
	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/store/storetest"
)

// refreshAtOnce refreshes with one refresh token from n goroutines at
// once, as Claude's backend nodes or several Claude Code processes do.
func refreshAtOnce(t *testing.T, h *harness, clientID, rt string, n int) []map[string]any {
	t.Helper()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		outs []map[string]any
	)
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			status, body := h.refresh(clientID, rt)
			if status != http.StatusOK {
				t.Errorf("a concurrent refresh: %d %v", status, body)
			}
			mu.Lock()
			outs = append(outs, body)
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return outs
}

// Within the grace window every concurrent refresh with one token gets a
// working pair, and the same pair, so the clients' processes converge
// instead of one of them logging the user out.
func TestConcurrentRefreshesWithinTheGraceWindow(t *testing.T) {
	h := newHarness(t, options{grace: time.Minute})
	a, tok := h.authorize()
	outs := refreshAtOnce(t, h, a.clientID, str(tok, "refresh_token"), 3)
	for i, out := range outs {
		if str(out, "refresh_token") != str(outs[0], "refresh_token") || str(out, "access_token") != str(outs[0], "access_token") {
			t.Fatalf("refresh %d got another pair than refresh 1: %v vs %v", i+1, out, outs[0])
		}
		if str(out, "token_type") != "Bearer" || str(out, "scope") != oauth.Scope || out["expires_in"] == nil {
			t.Fatalf("refresh %d: %v, want token_type, scope and expires_in", i+1, out)
		}
		if c, _, _ := h.call(str(out, "access_token")); c != http.StatusOK {
			t.Fatalf("the access token of refresh %d: %d", i+1, c)
		}
	}
	// The shared successor works on: the next refresh rotates it.
	status, next := h.refresh(a.clientID, str(outs[0], "refresh_token"))
	if status != http.StatusOK {
		t.Fatalf("refreshing with the pair the three got: %d %v", status, next)
	}
	if c, _, _ := h.call(str(next, "access_token")); c != http.StatusOK {
		t.Fatalf("the next access token: %d", c)
	}
}

// The window's edges: a reuse exactly at its end still gets the pair (with
// expires_in counting down from the first answer); 1 ms later it is the
// replay it always was, and the grant is revoked.
func TestRefreshGraceWindowEdges(t *testing.T) {
	h := newHarness(t, options{grace: time.Minute})
	a, tok := h.authorize()
	rt := str(tok, "refresh_token")
	status, first := h.refresh(a.clientID, rt)
	if status != http.StatusOK {
		t.Fatal(status, first)
	}
	h.clock.Advance(time.Minute)
	status, again := h.refresh(a.clientID, rt)
	if status != http.StatusOK || str(again, "access_token") != str(first, "access_token") {
		t.Fatalf("a reuse at the end of the window: %d %v, want the first refresh's pair", status, again)
	}
	if got, want := again["expires_in"].(float64), first["expires_in"].(float64)-60; got != want {
		t.Fatalf("expires_in of the reuse = %v, want %v (the same token, a minute older)", got, want)
	}

	status, second := h.refresh(a.clientID, str(first, "refresh_token"))
	if status != http.StatusOK {
		t.Fatal(status, second)
	}
	h.clock.Advance(time.Minute + time.Millisecond)
	status, body := h.refresh(a.clientID, str(first, "refresh_token"))
	wantTokenError(t, status, body, 400, "invalid_grant", "already used")
	if c, _, _ := h.call(str(second, "access_token")); c != http.StatusUnauthorized {
		t.Fatalf("after a reuse past the window, the grant's token answers %d, want 401", c)
	}
}

// A spent token gets its pair again at most ten times: a flood of reuses
// is a leak being exploited, and ends the grant.
func TestRefreshGraceReuseLimit(t *testing.T) {
	h := newHarness(t, options{grace: time.Minute})
	a, tok := h.authorize()
	rt := str(tok, "refresh_token")
	status, first := h.refresh(a.clientID, rt)
	if status != http.StatusOK {
		t.Fatal(status, first)
	}
	for i := range 10 {
		if status, body := h.refresh(a.clientID, rt); status != http.StatusOK {
			t.Fatalf("reuse %d of 10: %d %v", i+1, status, body)
		}
	}
	status, body := h.refresh(a.clientID, rt)
	wantTokenError(t, status, body, 400, "invalid_grant", "already used")
	if c, _, _ := h.call(str(first, "access_token")); c != http.StatusUnauthorized {
		t.Fatalf("after the 11th reuse the grant's token answers %d, want 401", c)
	}
}

// The pair kept for the window is sealed: the database holds no refresh
// or access token in a form that works.
func TestRefreshGraceStoresNoUsableToken(t *testing.T) {
	backend, clock := storetest.SQLite(t), storetest.NewClock()
	st := backend.Open(t, store.Options{Now: clock.Now})
	t.Cleanup(func() { st.Close() })
	h := newHarness(t, options{store: st, clock: clock, grace: time.Minute})
	a, tok := h.authorize()
	status, next := h.refresh(a.clientID, str(tok, "refresh_token"))
	if status != http.StatusOK {
		t.Fatal(status, next)
	}
	for _, k := range []string{"access_token", "refresh_token"} {
		raw := str(next, k)
		if backend.Contains(t, raw) || backend.Contains(t, strings.TrimPrefix(raw, "dm_rt_")[:20]) {
			t.Errorf("the refreshed %s is stored in the clear", k)
		}
	}
}

// Three refreshes at once, spread over two replicas that share a
// PostgreSQL store, all succeed with the same pair.
func TestRefreshGraceAcrossReplicas(t *testing.T) {
	clock := storetest.NewClock()
	open := postgresStores(t, clock) // skips, saying why, without a server
	h := newHarness(t, options{store: open(), clock: clock, grace: time.Minute})
	replica := http.NewServeMux()
	h.routes(replica, h.newAS(open()))
	var mu sync.Mutex
	turn := 0
	h.setFront(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		turn++
		mine := turn % 2
		mu.Unlock()
		if mine == 0 {
			h.mux.ServeHTTP(w, r)
		} else {
			replica.ServeHTTP(w, r)
		}
	}))
	for round := range 3 {
		a, tok := h.authorize()
		outs := refreshAtOnce(t, h, a.clientID, str(tok, "refresh_token"), 3)
		for _, out := range outs {
			if str(out, "refresh_token") != str(outs[0], "refresh_token") {
				t.Fatalf("round %d: the replicas handed out different pairs", round)
			}
			if c, _, _ := h.call(str(out, "access_token")); c != http.StatusOK {
				t.Fatalf("round %d: an access token from a concurrent refresh: %d", round, c)
			}
		}
	}
}

func TestRefreshGraceSettings(t *testing.T) {
	h := newHarness(t, options{})
	for _, tc := range []struct {
		grace time.Duration
		keys  bool
		says  string
	}{
		{-time.Second, true, "use 0 (off)"},
		{store.MaxRefreshGrace + time.Second, true, "use 0 (off) up to 1h0m0s"},
		{time.Minute, false, "needs a keyring"},
	} {
		cfg := oauth.Config{BaseURL: h.base, Store: h.store, Google: h.ga, RefreshGrace: tc.grace}
		if tc.keys {
			cfg.Keys = refreshRing(t)
		}
		if _, err := oauth.New(cfg); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("grace %v: %v, want an error saying %q", tc.grace, err, tc.says)
		}
	}
	for _, grace := range []time.Duration{0, store.MaxRefreshGrace} {
		if _, err := oauth.New(oauth.Config{BaseURL: h.base, Store: h.store, Google: h.ga, RefreshGrace: grace, Keys: refreshRing(t)}); err != nil {
			t.Errorf("grace %v refused: %v", grace, err)
		}
	}
}

// TestRefreshReuseIsAWarning: every reuse inside the grace window is
// answered with the live pair (by design), and each is logged at WARN with
// the client and grant ids and the count, never a token.
func TestRefreshReuseIsAWarning(t *testing.T) {
	var logs logRecord
	h := newHarness(t, options{grace: time.Minute, logger: slog.New(slog.NewTextHandler(&logs, nil))})
	a, tok := h.authorize()
	rt := str(tok, "refresh_token")
	status, first := h.refresh(a.clientID, rt)
	if status != http.StatusOK {
		t.Fatalf("refresh: %d %v", status, first)
	}
	for range 2 {
		if status, again := h.refresh(a.clientID, rt); status != http.StatusOK || str(again, "access_token") != str(first, "access_token") {
			t.Fatalf("a reuse within the window: %d %v, want the live pair", status, again)
		}
	}
	spent, err := h.store.GetToken(t.Context(), rt)
	if err != nil || spent.GrantID == "" {
		t.Fatalf("the spent token's grant: %+v, %v", spent, err)
	}
	var lines []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "reused within the grace window") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("%d log lines for 2 reuses:\n%s", len(lines), logs.String())
	}
	for i, l := range lines {
		for _, want := range []string{"level=WARN", "client_id=" + a.clientID, "grant=" + spent.GrantID, fmt.Sprintf("reuses=%d", i+1)} {
			if !strings.Contains(l, want) {
				t.Errorf("reuse %d: the line lacks %s: %s", i+1, want, l)
			}
		}
	}
	for _, secret := range []string{rt, str(first, "access_token"), str(first, "refresh_token")} {
		if strings.Contains(logs.String(), secret) {
			t.Fatal("a token value is in the log")
		}
	}
}
