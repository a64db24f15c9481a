// Package sqlstore implements store.Store over database/sql for both
// SQLite and PostgreSQL: the SQL is written once in the subset both
// accept (ON CONFLICT, RETURNING, integers for times and flags), and a
// Dialect supplies the few differences.
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/drivemail/drivemail/store"
)

// Dialect is what differs between the databases.
type Dialect struct {
	// Name appears in error messages.
	Name string
	// BlobType is the DDL type of binary columns.
	BlobType string
	// NumberedParams rewrites ? placeholders as $1, $2, … (PostgreSQL).
	NumberedParams bool
	// MigrationLock, when set, runs first in the migration transaction so
	// replicas starting together migrate one at a time.
	MigrationLock string
	// ForShare locks the rows a subquery reads until the transaction ends
	// (PostgreSQL's " FOR SHARE"); empty where writers are serialized anyway.
	ForShare string
	// ForUpdate is ForShare's exclusive kind (" FOR UPDATE").
	ForUpdate string
	// Retryable reports whether the database aborted a transaction to
	// break a deadlock or a serialization conflict, so running it again
	// may succeed. Nil where that cannot happen.
	Retryable func(error) bool
}

// DB is a store.Store on a *sql.DB.
type DB struct {
	db  *sql.DB
	d   Dialect
	now func() time.Time
}

var _ store.Store = (*DB)(nil)

// New migrates db to the current schema and returns the store. It takes
// ownership of db: Close closes it.
func New(ctx context.Context, db *sql.DB, d Dialect, opts store.Options) (*DB, error) {
	s := &DB{db: db, d: d, now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	if err := s.migrate(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Ping checks the database answers.
func (s *DB) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("%s store: ping: %w", s.d.Name, err)
	}
	return nil
}

// Close releases the database.
func (s *DB) Close() error { return s.db.Close() }

// q adapts a query written with ? placeholders to the dialect.
func (s *DB) q(query string) string {
	if !s.d.NumberedParams {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (s *DB) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.q(query), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (s *DB) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return s.db.QueryRowContext(ctx, s.q(query), args...)
}

// inTx runs fn in a transaction, committing when it returns nil.
func (s *DB) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// txAttempts bounds how often inTxRetrying runs a transaction.
const txAttempts = 3

// inTxRetrying runs an idempotent fn in a transaction, and again, up to
// txAttempts times in all, while the database aborts it to break a
// deadlock or a serialization conflict: the other side has gone on, so a
// rerun usually succeeds.
func (s *DB) inTxRetrying(ctx context.Context, fn func(tx *sql.Tx) error) error {
	var err error
	for range txAttempts {
		err = s.inTx(ctx, fn)
		if err == nil || s.d.Retryable == nil || !s.d.Retryable(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

func (s *DB) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	for _, known := range []error{store.ErrNotFound, store.ErrUsed, store.ErrConflict, store.ErrDuplicate} {
		if errors.Is(err, known) {
			return err
		}
	}
	return fmt.Errorf("%s store: %s: %w", s.d.Name, op, err)
}

// Times are stored as Unix milliseconds and flags as 0/1 in both databases.
func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Lists are stored as JSON arrays of strings.
func list(v []string) string {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v) // a []string always marshals
	return string(b)
}

func unlist(s string) ([]string, error) {
	var v []string
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("decode list column: %w", err)
	}
	return v, nil
}
