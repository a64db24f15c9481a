package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/drivemail/drivemail/store"
)

// CreateClient stores a registered client.
func (s *DB) CreateClient(ctx context.Context, c store.Client) error {
	n, err := s.exec(ctx, `INSERT INTO clients (id, secret_hash, name, redirect_uris, grant_types, auth_method, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		c.ID, c.SecretHash, c.Name, list(c.RedirectURIs), list(c.GrantTypes), c.AuthMethod, ms(c.CreatedAt))
	if err == nil && n == 0 {
		err = store.ErrDuplicate
	}
	return s.wrap("create client", err)
}

// GetClient returns a registered client.
func (s *DB) GetClient(ctx context.Context, id string) (store.Client, error) {
	var (
		c                store.Client
		uris, grantTypes string
		created          int64
	)
	err := s.queryRow(ctx, `SELECT id, secret_hash, name, redirect_uris, grant_types, auth_method, created_at
		FROM clients WHERE id = ?`, id).
		Scan(&c.ID, &c.SecretHash, &c.Name, &uris, &grantTypes, &c.AuthMethod, &created)
	if err != nil {
		return store.Client{}, s.wrap("get client", err)
	}
	if c.RedirectURIs, err = unlist(uris); err != nil {
		return store.Client{}, s.wrap("get client", err)
	}
	if c.GrantTypes, err = unlist(grantTypes); err != nil {
		return store.Client{}, s.wrap("get client", err)
	}
	c.CreatedAt = fromMS(created)
	return c, nil
}

const authRequestColumns = `client_id, redirect_uri, client_state, code_challenge, resource, scope,
	browser_hash, csrf_hash, google_state_hash, google_verifier, expires_at`

func scanAuthRequest(row interface{ Scan(...any) error }) (store.AuthRequest, error) {
	var (
		r       store.AuthRequest
		state   sql.NullString
		expires int64
	)
	err := row.Scan(&r.ClientID, &r.RedirectURI, &r.ClientState, &r.CodeChallenge, &r.Resource, &r.Scope,
		&r.BrowserHash, &r.CSRFHash, &state, &r.GoogleVerifier, &expires)
	if err != nil {
		return store.AuthRequest{}, err
	}
	r.Approved = state.Valid
	r.ExpiresAt = fromMS(expires)
	return r, nil
}

// CreateAuthRequest stores a pending authorization request under hash(id).
func (s *DB) CreateAuthRequest(ctx context.Context, id string, r store.AuthRequest) error {
	n, err := s.exec(ctx, `INSERT INTO auth_requests (id_hash, `+authRequestColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, '', ?) ON CONFLICT (id_hash) DO NOTHING`,
		store.Hash(id), r.ClientID, r.RedirectURI, r.ClientState, r.CodeChallenge, r.Resource, r.Scope,
		r.BrowserHash, r.CSRFHash, ms(r.ExpiresAt))
	if err == nil && n == 0 {
		err = store.ErrDuplicate
	}
	return s.wrap("create auth request", err)
}

// GetAuthRequest returns a live authorization request.
func (s *DB) GetAuthRequest(ctx context.Context, id string) (store.AuthRequest, error) {
	r, err := scanAuthRequest(s.queryRow(ctx, `SELECT `+authRequestColumns+`
		FROM auth_requests WHERE id_hash = ? AND expires_at > ?`, store.Hash(id), ms(s.now())))
	return r, s.wrap("get auth request", err)
}

// ApproveAuthRequest attaches Google's state and verifier, once.
func (s *DB) ApproveAuthRequest(ctx context.Context, id, googleState, googleVerifier string) error {
	n, err := s.exec(ctx, `UPDATE auth_requests SET google_state_hash = ?, google_verifier = ?
		WHERE id_hash = ? AND google_state_hash IS NULL AND expires_at > ?`,
		store.Hash(googleState), googleVerifier, store.Hash(id), ms(s.now()))
	if err != nil {
		return s.wrap("approve auth request", err)
	}
	if n == 1 {
		return nil
	}
	r, err := s.GetAuthRequest(ctx, id)
	if err != nil {
		return err
	}
	if r.Approved {
		return store.ErrUsed
	}
	return store.ErrNotFound
}

// TakeAuthRequestByState deletes and returns the approved request for a state.
func (s *DB) TakeAuthRequestByState(ctx context.Context, googleState string) (store.AuthRequest, error) {
	r, err := scanAuthRequest(s.queryRow(ctx, `DELETE FROM auth_requests
		WHERE google_state_hash = ? AND expires_at > ? RETURNING `+authRequestColumns,
		store.Hash(googleState), ms(s.now())))
	return r, s.wrap("take auth request", err)
}

// DeleteAuthRequest forgets a request.
func (s *DB) DeleteAuthRequest(ctx context.Context, id string) error {
	_, err := s.exec(ctx, `DELETE FROM auth_requests WHERE id_hash = ?`, store.Hash(id))
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return s.wrap("delete auth request", err)
}
