// Package sqlite is the embedded store: one file, WAL journal, schema
// migrations on open. One process at a time; use store/postgres for replicas.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/store/internal/sqlstore"
)

// Open opens (creating if needed) the database file at path and migrates it.
func Open(ctx context.Context, path string, opts store.Options) (store.Store, error) {
	if path == "" {
		return nil, fmt.Errorf("sqlite store: empty path; give one as sqlite:PATH, for example sqlite:drivemail.db")
	}
	q := url.Values{}
	// WAL lets readers work while one writer writes; busy_timeout makes a
	// writer wait for the lock instead of failing; immediate transactions
	// take the write lock up front, so two never deadlock upgrading.
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close() // the ping's error is the one to report
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	s, err := sqlstore.New(ctx, db, sqlstore.Dialect{Name: "sqlite", BlobType: "BLOB"}, opts)
	if err != nil {
		_ = db.Close() // the error being returned is the one to report
		return nil, err
	}
	return s, nil
}
