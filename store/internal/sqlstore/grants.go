package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/drivemail/drivemail/store"
)

// CreateGrant stores a new grant.
func (s *DB) CreateGrant(ctx context.Context, g store.Grant) error {
	n, err := s.exec(ctx, `INSERT INTO grants (id, user_id, client_id, resource, scope, created_at, revoked)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		g.ID, g.UserID, g.ClientID, g.Resource, g.Scope, ms(g.CreatedAt), flag(g.Revoked))
	if err == nil && n == 0 {
		err = store.ErrDuplicate
	}
	return s.wrap("create grant", err)
}

// GetGrant returns a grant, revoked or not.
func (s *DB) GetGrant(ctx context.Context, id string) (store.Grant, error) {
	var (
		g       store.Grant
		created int64
		revoked int
	)
	err := s.queryRow(ctx, `SELECT id, user_id, client_id, resource, scope, created_at, revoked FROM grants WHERE id = ?`, id).
		Scan(&g.ID, &g.UserID, &g.ClientID, &g.Resource, &g.Scope, &created, &revoked)
	if err != nil {
		return store.Grant{}, s.wrap("get grant", err)
	}
	g.CreatedAt, g.Revoked = fromMS(created), revoked != 0
	return g, nil
}

// RevokeGrant marks the grant revoked and deletes everything issued under
// it. It follows a replayed code or refresh token, so a deadlock or
// serialization failure does not end it: it runs again.
func (s *DB) RevokeGrant(ctx context.Context, id string) error {
	err := s.inTxRetrying(ctx, func(tx *sql.Tx) error {
		// The update takes the grant's row lock first, so a concurrent
		// PutToken (which reads the grant FOR SHARE) waits and then sees it revoked.
		for _, stmt := range []string{
			`UPDATE grants SET revoked = 1 WHERE id = ?`,
			s.deleteInHashOrder("tokens", "grant_id = ?"),
			s.deleteInHashOrder("codes", "grant_id = ?"),
		} {
			if _, err := tx.ExecContext(ctx, s.q(stmt), id); err != nil {
				return err
			}
		}
		return nil
	})
	return s.wrap("revoke grant", err)
}

// deleteInHashOrder is a DELETE of the rows of table (tokens or codes)
// that match where, which locks them in the order of their key first.
// Each statement that deletes several of these rows goes through it: two
// that locked the same rows in different orders (a revocation by grant,
// the sweeper by expiry) could each wait for the other, and PostgreSQL
// would abort one, possibly the revocation of a grant whose code or
// refresh token was just replayed.
func (s *DB) deleteInHashOrder(table, where string) string {
	return `DELETE FROM ` + table + ` WHERE hash IN (SELECT hash FROM ` + table + ` WHERE ` + where + ` ORDER BY hash` + s.d.ForUpdate + `)`
}

// insertUnderLiveGrant runs an insert in a transaction that first reads
// the grant (FOR SHARE where the database has row locks), so the row cannot
// be written for a missing or revoked grant, nor race a revoke.
func (s *DB) insertUnderLiveGrant(ctx context.Context, grantID, insert string, args ...any) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var revoked int
		err := tx.QueryRowContext(ctx, s.q(`SELECT revoked FROM grants WHERE id = ?`+s.d.ForShare), grantID).Scan(&revoked)
		if err != nil {
			return err
		}
		if revoked != 0 {
			return store.ErrNotFound
		}
		return s.insertNew(ctx, tx, insert, args...)
	})
}

// insertNew runs an INSERT … ON CONFLICT DO NOTHING in tx: ErrDuplicate
// when it inserted nothing.
func (s *DB) insertNew(ctx context.Context, tx *sql.Tx, insert string, args ...any) error {
	res, err := tx.ExecContext(ctx, s.q(insert), args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrDuplicate
	}
	return nil
}

// PutCode stores an authorization code under a live grant.
func (s *DB) PutCode(ctx context.Context, code string, c store.Code) error {
	err := s.insertUnderLiveGrant(ctx, c.GrantID, `INSERT INTO codes (hash, `+codeColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0) ON CONFLICT (hash) DO NOTHING`,
		store.Hash(code), c.GrantID, c.ClientID, c.UserID, c.RedirectURI, c.CodeChallenge, c.Resource, c.Scope, ms(c.ExpiresAt))
	return s.wrap("put code", err)
}

const codeColumns = `grant_id, client_id, user_id, redirect_uri, code_challenge, resource, scope, expires_at, used`

func scanCode(row interface{ Scan(...any) error }) (store.Code, error) {
	var (
		c       store.Code
		expires int64
		used    int
	)
	err := row.Scan(&c.GrantID, &c.ClientID, &c.UserID, &c.RedirectURI, &c.CodeChallenge, &c.Resource, &c.Scope, &expires, &used)
	c.ExpiresAt, c.Used = fromMS(expires), used != 0
	return c, err
}

// TakeCode marks a code used; a second take returns it with ErrUsed.
func (s *DB) TakeCode(ctx context.Context, code string) (store.Code, error) {
	hash := store.Hash(code)
	c, err := scanCode(s.queryRow(ctx, `UPDATE codes SET used = 1 WHERE hash = ? AND used = 0 RETURNING `+codeColumns, hash))
	if err == nil {
		c.Used = false // it was unused until this take
		return c, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return store.Code{}, s.wrap("take code", err)
	}
	c, err = scanCode(s.queryRow(ctx, `SELECT `+codeColumns+` FROM codes WHERE hash = ?`, hash))
	if err != nil {
		return store.Code{}, s.wrap("take code", err)
	}
	return c, store.ErrUsed
}

const tokenColumns = `kind, grant_id, client_id, user_id, resource, scope, expires_at, used, spent_at, reuses`

func scanToken(row interface{ Scan(...any) error }, extra ...any) (store.Token, error) {
	var (
		t              store.Token
		kind           string
		expires, spent int64
		used           int
	)
	err := row.Scan(append([]any{&kind, &t.GrantID, &t.ClientID, &t.UserID, &t.Resource, &t.Scope, &expires, &used, &spent, &t.Reuses}, extra...)...)
	t.Kind, t.ExpiresAt, t.Used = store.TokenKind(kind), fromMS(expires), used != 0
	if spent != 0 {
		t.SpentAt = fromMS(spent)
	}
	return t, err
}

// insertToken stores one new, unspent token.
const insertToken = `INSERT INTO tokens (hash, kind, grant_id, client_id, user_id, resource, scope, expires_at, used)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0) ON CONFLICT (hash) DO NOTHING`

// PutToken stores a token under a live grant.
func (s *DB) PutToken(ctx context.Context, token string, t store.Token) error {
	err := s.insertUnderLiveGrant(ctx, t.GrantID, insertToken,
		store.Hash(token), string(t.Kind), t.GrantID, t.ClientID, t.UserID, t.Resource, t.Scope, ms(t.ExpiresAt))
	return s.wrap("put token", err)
}

// GetToken returns a token of a live grant.
func (s *DB) GetToken(ctx context.Context, token string) (store.Token, error) {
	t, err := scanToken(s.queryRow(ctx, `SELECT `+tokenColumns+` FROM tokens
		WHERE hash = ? AND grant_id IN (SELECT id FROM grants WHERE revoked = 0)`, store.Hash(token)))
	return t, s.wrap("get token", err)
}

// RotateRefreshToken spends a refresh token and stores its successors in
// one transaction, or answers a reuse within the grace window.
func (s *DB) RotateRefreshToken(ctx context.Context, old string, r store.Rotation) (store.Token, error) {
	if r.Grace > store.MaxRefreshGrace {
		return store.Token{}, fmt.Errorf("%s store: rotate refresh token: grace %v is longer than %v", s.d.Name, r.Grace, store.MaxRefreshGrace)
	}
	hash := store.Hash(old)
	var t store.Token
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// The grant is locked (shared) before the token, in the order a
		// revocation locks them, so the two cannot deadlock; a revocation
		// waits for the new tokens and deletes them too.
		var grantID string
		err := tx.QueryRowContext(ctx, s.q(`SELECT grant_id FROM tokens WHERE hash = ? AND kind = 'refresh'`), hash).Scan(&grantID)
		if err != nil {
			return err
		}
		var revoked int
		if err := tx.QueryRowContext(ctx, s.q(`SELECT revoked FROM grants WHERE id = ?`+s.d.ForShare), grantID).Scan(&revoked); err != nil {
			return err
		}
		if revoked != 0 {
			return store.ErrNotFound
		}
		now := s.now()
		t, err = scanToken(tx.QueryRowContext(ctx, s.q(`UPDATE tokens SET used = 1, spent_at = ?, successor_key_id = ?, successor = ?
			WHERE hash = ? AND used = 0 RETURNING `+tokenColumns), ms(now), r.Successor.KeyID, r.Successor.Ciphertext, hash))
		if errors.Is(err, sql.ErrNoRows) {
			t, err = s.reuse(ctx, tx, hash, r, now)
			return err
		}
		if err != nil {
			return err
		}
		t.Used = false // it was unused until this rotation
		return s.insertSuccessors(ctx, tx, t, r.Tokens)
	})
	switch {
	case err == nil, errors.Is(err, store.ErrUsed):
		return t, s.wrap("rotate refresh token", err)
	default:
		return store.Token{}, s.wrap("rotate refresh token", err)
	}
}

// reuse counts a reuse of the spent refresh token hash within the grace
// window and returns it with its sealed successor; outside the window, or
// past r.MaxReuses, it returns the token and ErrUsed.
func (s *DB) reuse(ctx context.Context, tx *sql.Tx, hash string, r store.Rotation, now time.Time) (store.Token, error) {
	if r.Grace > 0 {
		var sealed store.Sealed
		t, err := scanToken(tx.QueryRowContext(ctx, s.q(`UPDATE tokens SET reuses = reuses + 1
			WHERE hash = ? AND used = 1 AND spent_at >= ? AND reuses < ? AND successor_key_id <> ''
			RETURNING `+tokenColumns+`, successor_key_id, successor`), hash, ms(now.Add(-r.Grace)), r.MaxReuses),
			&sealed.KeyID, &sealed.Ciphertext)
		if err == nil {
			t.Successor = sealed
			return t, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return store.Token{}, err
		}
	}
	t, err := scanToken(tx.QueryRowContext(ctx, s.q(`SELECT `+tokenColumns+` FROM tokens WHERE hash = ?`), hash))
	if err != nil {
		return store.Token{}, err // deleted meanwhile, by a revocation: not found
	}
	return t, store.ErrUsed
}

// insertSuccessors stores the tokens that replace the spent refresh token t.
func (s *DB) insertSuccessors(ctx context.Context, tx *sql.Tx, t store.Token, next []store.NewToken) error {
	for _, nt := range next {
		err := s.insertNew(ctx, tx, insertToken,
			store.Hash(nt.Raw), string(nt.Kind), t.GrantID, t.ClientID, t.UserID, t.Resource, t.Scope, ms(nt.ExpiresAt))
		if err != nil {
			return err
		}
	}
	return nil
}

// LiveGrants counts the user's grants that still hold something unexpired.
func (s *DB) LiveGrants(ctx context.Context, userID string) (int, error) {
	now := ms(s.now())
	var n int
	err := s.queryRow(ctx, `SELECT COUNT(*) FROM grants WHERE user_id = ? AND revoked = 0 AND (
		EXISTS (SELECT 1 FROM tokens WHERE tokens.grant_id = grants.id AND tokens.expires_at > ?) OR
		EXISTS (SELECT 1 FROM codes WHERE codes.grant_id = grants.id AND codes.expires_at > ? AND codes.used = 0))`,
		userID, now, now).Scan(&n)
	return n, s.wrap("live grants", err)
}

// DeleteToken forgets one token.
func (s *DB) DeleteToken(ctx context.Context, token string) error {
	_, err := s.exec(ctx, `DELETE FROM tokens WHERE hash = ?`, store.Hash(token))
	return s.wrap("delete token", err)
}
