package sqlstore

import (
	"context"

	"github.com/google/uuid"

	"github.com/drivemail/drivemail/store"
)

// UpsertUser creates or refreshes the user with u.GoogleSubject.
func (s *DB) UpsertUser(ctx context.Context, u store.User) (store.User, error) {
	now := s.now()
	var created, updated int64
	err := s.queryRow(ctx, `INSERT INTO users (id, google_sub, email, google_scopes, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (google_sub) DO UPDATE SET email = excluded.email,
			google_scopes = excluded.google_scopes, updated_at = excluded.updated_at
		RETURNING id, created_at, updated_at`,
		uuid.NewString(), u.GoogleSubject, u.Email, list(u.GoogleScopes), ms(now), ms(now)).
		Scan(&u.ID, &created, &updated)
	if err != nil {
		return store.User{}, s.wrap("upsert user", err)
	}
	u.CreatedAt, u.UpdatedAt = fromMS(created), fromMS(updated)
	return u, nil
}

// GetUser returns a user by drivemail id.
func (s *DB) GetUser(ctx context.Context, id string) (store.User, error) {
	var (
		u                store.User
		scopes           string
		created, updated int64
	)
	var dead int
	err := s.queryRow(ctx, `SELECT id, google_sub, email, google_scopes, created_at, updated_at,
			COALESCE((SELECT dead FROM google_tokens WHERE google_tokens.user_id = users.id), 0)
		FROM users WHERE id = ?`, id).Scan(&u.ID, &u.GoogleSubject, &u.Email, &scopes, &created, &updated, &dead)
	if err != nil {
		return store.User{}, s.wrap("get user", err)
	}
	if u.GoogleScopes, err = unlist(scopes); err != nil {
		return store.User{}, s.wrap("get user", err)
	}
	u.CreatedAt, u.UpdatedAt, u.GoogleGrantDead = fromMS(created), fromMS(updated), dead != 0
	return u, nil
}

// PutGoogleToken stores the user's sealed token unconditionally: a new
// sign-in, so the token is alive whatever the old one was.
func (s *DB) PutGoogleToken(ctx context.Context, t store.GoogleToken) (int64, error) {
	var version int64
	err := s.queryRow(ctx, `INSERT INTO google_tokens (user_id, key_id, ciphertext, version, updated_at, dead)
		VALUES (?, ?, ?, 1, ?, 0)
		ON CONFLICT (user_id) DO UPDATE SET key_id = excluded.key_id, ciphertext = excluded.ciphertext,
			version = google_tokens.version + 1, updated_at = excluded.updated_at, dead = 0
		RETURNING version`,
		t.UserID, t.KeyID, t.Ciphertext, ms(s.now())).Scan(&version)
	return version, s.wrap("put google token", err)
}

// GetGoogleToken returns the user's sealed token.
func (s *DB) GetGoogleToken(ctx context.Context, userID string) (store.GoogleToken, error) {
	t := store.GoogleToken{UserID: userID}
	var updated int64
	var dead int
	err := s.queryRow(ctx, `SELECT key_id, ciphertext, version, updated_at, dead FROM google_tokens WHERE user_id = ?`, userID).
		Scan(&t.KeyID, &t.Ciphertext, &t.Version, &updated, &dead)
	if err != nil {
		return store.GoogleToken{}, s.wrap("get google token", err)
	}
	t.UpdatedAt, t.Dead = fromMS(updated), dead != 0
	return t, nil
}

// SwapGoogleToken replaces the token if nobody else did since version.
func (s *DB) SwapGoogleToken(ctx context.Context, t store.GoogleToken, version int64) (int64, error) {
	var next int64
	err := s.queryRow(ctx, `UPDATE google_tokens SET key_id = ?, ciphertext = ?, version = version + 1, updated_at = ?, dead = 0
		WHERE user_id = ? AND version = ? RETURNING version`,
		t.KeyID, t.Ciphertext, ms(s.now()), t.UserID, version).Scan(&next)
	if err == nil {
		return next, nil
	}
	return 0, s.conflictOrMissing(ctx, t.UserID, "swap google token", err)
}

// MarkGoogleTokenDead marks the token dead if its version is still version.
func (s *DB) MarkGoogleTokenDead(ctx context.Context, userID string, version int64) error {
	var next int64
	err := s.queryRow(ctx, `UPDATE google_tokens SET dead = 1, version = version + 1, updated_at = ?
		WHERE user_id = ? AND version = ? RETURNING version`, ms(s.now()), userID, version).Scan(&next)
	if err == nil {
		return nil
	}
	return s.conflictOrMissing(ctx, userID, "mark google token dead", err)
}

// conflictOrMissing explains a compare-and-swap on google_tokens that
// matched no row: ErrNotFound without a token, ErrConflict with one.
func (s *DB) conflictOrMissing(ctx context.Context, userID, op string, err error) error {
	if _, getErr := s.GetGoogleToken(ctx, userID); getErr != nil {
		return getErr
	}
	if s.wrap("", err) == store.ErrNotFound {
		return store.ErrConflict
	}
	return s.wrap(op, err)
}
