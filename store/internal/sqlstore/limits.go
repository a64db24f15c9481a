package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/drivemail/drivemail/store"
)

// UseOnce records the first use of key until expires.
func (s *DB) UseOnce(ctx context.Context, key string, expires time.Time) error {
	// An expired record may be overwritten: the key's lifetime is over.
	n, err := s.exec(ctx, `INSERT INTO nonces (hash, expires_at) VALUES (?, ?)
		ON CONFLICT (hash) DO UPDATE SET expires_at = excluded.expires_at WHERE nonces.expires_at <= ?`,
		store.Hash(key), ms(expires), ms(s.now()))
	if err == nil && n == 0 {
		err = store.ErrUsed
	}
	return s.wrap("use once", err)
}

// ReleaseOnce forgets key's use.
func (s *DB) ReleaseOnce(ctx context.Context, key string) error {
	_, err := s.exec(ctx, `DELETE FROM nonces WHERE hash = ?`, store.Hash(key))
	return s.wrap("release once", err)
}

// Hit counts an event in key's current fixed window.
func (s *DB) Hit(ctx context.Context, key string, window time.Duration) (int64, error) {
	if window < time.Millisecond {
		return 0, fmt.Errorf("%s store: hit: window %v is shorter than a millisecond", s.d.Name, window)
	}
	start := s.now().Truncate(window)
	var count int64
	err := s.queryRow(ctx, `INSERT INTO counters (key_hash, window_start, count, expires_at) VALUES (?, ?, 1, ?)
		ON CONFLICT (key_hash, window_start) DO UPDATE SET count = counters.count + 1
		RETURNING count`,
		store.Hash(key), ms(start), ms(start.Add(window))).Scan(&count)
	return count, s.wrap("hit", err)
}

// Grace periods before orphaned rows are swept.
const (
	orphanGrace     = 24 * time.Hour      // a grant or user with nothing live
	clientIdleGrace = 30 * 24 * time.Hour // a registration nobody used
)

// Sweep deletes expired rows, then grants, users (with their Google
// tokens) and clients that nothing live refers to any more.
func (s *DB) Sweep(ctx context.Context) (int64, error) {
	now := s.now()
	nowMS, orphan, idle := ms(now), ms(now.Add(-orphanGrace)), ms(now.Add(-clientIdleGrace))
	steps := []struct {
		query string
		args  []any
	}{
		{`DELETE FROM auth_requests WHERE expires_at <= ?`, []any{nowMS}},
		{s.deleteInHashOrder("codes", "expires_at <= ?"), []any{nowMS}},
		{s.deleteInHashOrder("tokens", "expires_at <= ?"), []any{nowMS}},
		{`DELETE FROM nonces WHERE expires_at <= ?`, []any{nowMS}},
		// A spent refresh token's sealed successor serves only reuses
		// within the grace window, which is never longer than this.
		{`UPDATE tokens SET successor_key_id = '', successor = NULL
			WHERE used = 1 AND successor_key_id <> '' AND spent_at <= ?`, []any{ms(now.Add(-store.MaxRefreshGrace))}},
		{`DELETE FROM counters WHERE expires_at <= ?`, []any{nowMS}},
		{`DELETE FROM transfers WHERE expires_at <= ?`, []any{nowMS}},
		{`DELETE FROM grants WHERE created_at <= ? AND (revoked = 1 OR (
			NOT EXISTS (SELECT 1 FROM tokens WHERE tokens.grant_id = grants.id) AND
			NOT EXISTS (SELECT 1 FROM codes WHERE codes.grant_id = grants.id)))`, []any{orphan}},
		{`DELETE FROM google_tokens WHERE user_id IN (SELECT id FROM users WHERE updated_at <= ? AND
			NOT EXISTS (SELECT 1 FROM grants WHERE grants.user_id = users.id))`, []any{orphan}},
		{`DELETE FROM users WHERE updated_at <= ? AND
			NOT EXISTS (SELECT 1 FROM grants WHERE grants.user_id = users.id)`, []any{orphan}},
		{`DELETE FROM clients WHERE created_at <= ? AND
			NOT EXISTS (SELECT 1 FROM grants WHERE grants.client_id = clients.id)`, []any{idle}},
	}
	var total int64
	for _, st := range steps {
		n, err := s.exec(ctx, st.query, st.args...)
		if err != nil {
			return total, s.wrap("sweep", err)
		}
		total += n
	}
	return total, nil
}
