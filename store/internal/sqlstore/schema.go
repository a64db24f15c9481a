package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// migrations are the schema versions in order; version N is migrations[N-1].
// Append, never edit: a deployed database has run the old ones. {{blob}}
// is the dialect's binary type.
var migrations = [][]string{
	{ // 1: the initial schema
		`CREATE TABLE clients (
			id TEXT PRIMARY KEY,
			secret_hash TEXT NOT NULL,
			name TEXT NOT NULL,
			redirect_uris TEXT NOT NULL,
			grant_types TEXT NOT NULL,
			auth_method TEXT NOT NULL,
			created_at BIGINT NOT NULL)`,
		`CREATE TABLE auth_requests (
			id_hash TEXT PRIMARY KEY,
			client_id TEXT NOT NULL,
			redirect_uri TEXT NOT NULL,
			client_state TEXT NOT NULL,
			code_challenge TEXT NOT NULL,
			resource TEXT NOT NULL,
			scope TEXT NOT NULL,
			browser_hash TEXT NOT NULL,
			csrf_hash TEXT NOT NULL,
			google_state_hash TEXT UNIQUE,
			google_verifier TEXT NOT NULL,
			expires_at BIGINT NOT NULL)`,
		`CREATE TABLE users (
			id TEXT PRIMARY KEY,
			google_sub TEXT NOT NULL UNIQUE,
			email TEXT NOT NULL,
			google_scopes TEXT NOT NULL,
			created_at BIGINT NOT NULL,
			updated_at BIGINT NOT NULL)`,
		`CREATE TABLE google_tokens (
			user_id TEXT PRIMARY KEY,
			key_id TEXT NOT NULL,
			ciphertext {{blob}} NOT NULL,
			version BIGINT NOT NULL,
			updated_at BIGINT NOT NULL)`,
		`CREATE TABLE grants (
			id TEXT PRIMARY KEY,
			user_id TEXT NOT NULL,
			client_id TEXT NOT NULL,
			resource TEXT NOT NULL,
			scope TEXT NOT NULL,
			created_at BIGINT NOT NULL,
			revoked INTEGER NOT NULL)`,
		`CREATE INDEX grants_user ON grants (user_id)`,
		`CREATE INDEX grants_client ON grants (client_id)`,
		`CREATE TABLE codes (
			hash TEXT PRIMARY KEY,
			grant_id TEXT NOT NULL,
			client_id TEXT NOT NULL,
			user_id TEXT NOT NULL,
			redirect_uri TEXT NOT NULL,
			code_challenge TEXT NOT NULL,
			resource TEXT NOT NULL,
			scope TEXT NOT NULL,
			expires_at BIGINT NOT NULL,
			used INTEGER NOT NULL)`,
		`CREATE INDEX codes_grant ON codes (grant_id)`,
		`CREATE TABLE tokens (
			hash TEXT PRIMARY KEY,
			kind TEXT NOT NULL,
			grant_id TEXT NOT NULL,
			client_id TEXT NOT NULL,
			user_id TEXT NOT NULL,
			resource TEXT NOT NULL,
			scope TEXT NOT NULL,
			expires_at BIGINT NOT NULL,
			used INTEGER NOT NULL)`,
		`CREATE INDEX tokens_grant ON tokens (grant_id)`,
		`CREATE INDEX tokens_expiry ON tokens (expires_at)`,
		`CREATE TABLE nonces (
			hash TEXT PRIMARY KEY,
			expires_at BIGINT NOT NULL)`,
		`CREATE TABLE counters (
			key_hash TEXT NOT NULL,
			window_start BIGINT NOT NULL,
			count BIGINT NOT NULL,
			expires_at BIGINT NOT NULL,
			PRIMARY KEY (key_hash, window_start))`,
	},
	{ // 2: refresh-token reuse within a grace window; dead Google grants
		`ALTER TABLE tokens ADD COLUMN spent_at BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE tokens ADD COLUMN reuses INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE tokens ADD COLUMN successor_key_id TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE tokens ADD COLUMN successor {{blob}}`,
		`ALTER TABLE google_tokens ADD COLUMN dead INTEGER NOT NULL DEFAULT 0`,
	},
	{ // 3: file-transfer URIs (the MCP file-transfer draft), bound to a user
		`CREATE TABLE transfers (
			id_hash TEXT PRIMARY KEY,
			user_id TEXT NOT NULL,
			file_id TEXT NOT NULL,
			expires_at BIGINT NOT NULL)`,
	},
}

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int { return len(migrations) }

// migrate brings the schema to the current version in one transaction.
func (s *DB) migrate(ctx context.Context) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if s.d.MigrationLock != "" {
			if _, err := tx.ExecContext(ctx, s.d.MigrationLock); err != nil {
				return fmt.Errorf("lock: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY,
			applied_at BIGINT NOT NULL)`); err != nil {
			return err
		}
		var current int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
			return err
		}
		if current > len(migrations) {
			return fmt.Errorf("the database has schema version %d but this drivemail knows only up to %d; run a newer drivemail", current, len(migrations))
		}
		for v := current + 1; v <= len(migrations); v++ {
			for _, stmt := range migrations[v-1] {
				if _, err := tx.ExecContext(ctx, strings.ReplaceAll(stmt, "{{blob}}", s.d.BlobType)); err != nil {
					return fmt.Errorf("version %d: %w", v, err)
				}
			}
			if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`), v, ms(s.now())); err != nil {
				return fmt.Errorf("version %d: %w", v, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s store: migrate: %w", s.d.Name, err)
	}
	return nil
}
