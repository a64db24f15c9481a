// Package storetest is the conformance suite every store.Store passes, and
// helpers that give tests a fresh SQLite file or PostgreSQL schema.
package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/drivemail/drivemail/store"
)

// Backend is one empty database a test may open several stores on.
type Backend struct {
	// Open opens a store on the database; calling it again opens another
	// store on the same database (as a restarted process or a replica would).
	Open func(t *testing.T, opts store.Options) store.Store
	// Contains reports whether needle appears anywhere in the stored data.
	Contains func(t *testing.T, needle string) bool
	// FailInserts makes the database refuse every insert into table, as
	// a full disk or a broken constraint would, until the returned
	// function is called (or the test ends).
	FailInserts func(t *testing.T, table string) (restore func())
}

// Clock is a settable clock for store.Options.Now.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock stopped at a fixed instant.
func NewClock() *Clock {
	return &Clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Run runs the conformance suite; fresh returns a new empty database.
func Run(t *testing.T, fresh func(t *testing.T) Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b Backend)
	}{
		{"Migrations", testMigrations},
		{"Clients", testClients},
		{"AuthRequests", testAuthRequests},
		{"Users", testUsers},
		{"GoogleTokens", testGoogleTokens},
		{"Codes", testCodes},
		{"Tokens", testTokens},
		{"RotationIsAtomic", testRotationIsAtomic},
		{"RotationRacesRevocation", testRotationRacesRevocation},
		{"RevokeGrant", testRevokeGrant},
		{"UseOnce", testUseOnce},
		{"Hit", testHit},
		{"SingleUseUnderConcurrency", testSingleUseUnderConcurrency},
		{"SecretsStoredHashed", testSecretsStoredHashed},
		{"Sweep", testSweep},
		{"RefreshReuseWithinGrace", testRefreshReuseWithinGrace},
		{"RefreshReuseSweep", testRefreshReuseSweep},
		{"ConcurrentReuseWithinGrace", testConcurrentReuseWithinGrace},
		{"DeadGoogleTokens", testDeadGoogleTokens},
		{"LiveGrants", testLiveGrants},
		{"Transfers", testTransfers},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each on a fresh store: its own file or schema
			tc.fn(t, fresh(t))
		})
	}
}
