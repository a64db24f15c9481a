// Package postgres is the shared store for several replicas: a pgx pool,
// schema migrations serialized by an advisory lock, and single-use
// operations that are atomic statements (UPDATE … WHERE used = 0 RETURNING,
// DELETE … RETURNING), so two replicas never both accept one code.
package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/store/internal/sqlstore"
)

// migrationLockID is an arbitrary constant naming drivemail's advisory lock.
const migrationLockID = 0x64726d6c // "drml"

// Open connects to the database at url (postgres://…) and migrates it.
// Query parameters pgx understands (pool_max_conns, search_path, sslmode…)
// pass through.
func Open(ctx context.Context, url string, opts store.Options) (store.Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message may quote the URL, password included: say less.
		return nil, fmt.Errorf("postgres store: the URL is not a valid postgres:// connection string")
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store: cannot reach %s:%d/%s: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, err)
	}
	db := stdlib.OpenDBFromPool(pool)
	s, err := sqlstore.New(ctx, db, sqlstore.Dialect{
		Name:           "postgres",
		BlobType:       "BYTEA",
		NumberedParams: true,
		MigrationLock:  fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", migrationLockID),
		ForShare:       " FOR SHARE",
		ForUpdate:      " FOR UPDATE",
		Retryable:      retryable,
	}, opts)
	if err != nil {
		_ = db.Close() // the error being returned is the one to report
		pool.Close()
		return nil, err
	}
	return poolCloser{Store: s, pool: pool}, nil
}

// retryable reports a transaction PostgreSQL aborted for a deadlock
// (40P01) or a serialization failure (40001): run again, it may succeed.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// poolCloser closes the pool behind the database/sql adapter too.
type poolCloser struct {
	store.Store
	pool *pgxpool.Pool
}

func (p poolCloser) Close() error {
	err := p.Store.Close()
	p.pool.Close()
	return err
}
