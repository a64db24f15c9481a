package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/store/postgres"
	"github.com/drivemail/drivemail/store/sqlite"
)

// PostgresEnv names the variable that points the tests at a PostgreSQL
// server; when it is unset they probe the local default.
const PostgresEnv = "DRIVEMAIL_TEST_POSTGRES"

// SQLite returns a Backend on a new database file in the test's temp dir.
func SQLite(t *testing.T) Backend {
	path := filepath.Join(t.TempDir(), "drivemail.db")
	return Backend{
		Open: func(t *testing.T, opts store.Options) store.Store {
			t.Helper()
			s, err := sqlite.Open(context.Background(), path, opts)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Contains: func(t *testing.T, needle string) bool {
			t.Helper()
			for _, f := range []string{path, path + "-wal"} {
				b, err := os.ReadFile(f)
				if err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				if bytes.Contains(b, []byte(needle)) {
					return true
				}
			}
			return false
		},
		FailInserts: func(t *testing.T, table string) func() {
			t.Helper()
			db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_pragma=busy_timeout(10000)")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			trigger := "drivemail_test_fail_" + table
			exec := func(stmt string) {
				if _, err := db.Exec(stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			exec(`CREATE TRIGGER ` + trigger + ` BEFORE INSERT ON ` + table + ` BEGIN SELECT RAISE(ABORT, 'injected failure'); END`)
			return once(func() { exec(`DROP TRIGGER IF EXISTS ` + trigger) })
		},
	}
}

// once returns f wrapped to run at most once.
func once(f func()) func() {
	var o sync.Once
	return func() { o.Do(f) }
}

// Postgres returns a Backend on a new schema of the test PostgreSQL
// server, dropped when the test ends. It skips the test, saying why, when
// no server answers.
func Postgres(t *testing.T) Backend {
	u := PostgresURL(t)
	return Backend{
		Open: func(t *testing.T, opts store.Options) store.Store {
			t.Helper()
			s, err := postgres.Open(context.Background(), u, opts)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Contains: func(t *testing.T, needle string) bool {
			t.Helper()
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`)
			if err != nil {
				t.Fatal(err)
			}
			tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			for _, table := range tables {
				var n int
				q := fmt.Sprintf(`SELECT count(*) FROM %s t WHERE t::text LIKE '%%' || $1 || '%%'`, pgx.Identifier{table}.Sanitize())
				if err := conn.QueryRow(ctx, q, needle).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n > 0 {
					return true
				}
			}
			return false
		},
		FailInserts: func(t *testing.T, table string) func() {
			t.Helper()
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close(context.Background()) })
			exec := func(stmt string) {
				if _, err := conn.Exec(ctx, stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			exec(`CREATE OR REPLACE FUNCTION drivemail_test_fail() RETURNS trigger LANGUAGE plpgsql AS
				$$ BEGIN RAISE EXCEPTION 'injected failure'; END $$`)
			tbl := pgx.Identifier{table}.Sanitize()
			exec(`CREATE TRIGGER drivemail_test_fail BEFORE INSERT ON ` + tbl + ` FOR EACH ROW EXECUTE FUNCTION drivemail_test_fail()`)
			return once(func() { exec(`DROP TRIGGER IF EXISTS drivemail_test_fail ON ` + tbl) })
		},
	}
}

// PostgresURL returns the URL of a fresh schema on the test PostgreSQL
// server (the search_path parameter selects it), or skips the test.
func PostgresURL(t *testing.T) string {
	t.Helper()
	base, err := reachablePostgres()
	if err != nil {
		if os.Getenv(PostgresEnv) != "" {
			t.Fatalf("PostgreSQL at $%s is not reachable: %v", PostgresEnv, err)
		}
		t.Skipf("PostgreSQL tests skipped: no server answered at 127.0.0.1:5432 (%v); set %s=postgres://… to run them", err, PostgresEnv)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "drivemail_test_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create test schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
		}
	})
	pu, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := pu.Query()
	q.Set("search_path", schema)
	// A commit then returns before its WAL reaches the disk: what a
	// transaction sees, locks and makes atomic is unchanged, and only a
	// crash of the server, which no test causes, could lose one. Each
	// fsync'd commit cost the tests about 10 ms.
	q.Set("synchronous_commit", "off")
	pu.RawQuery = q.Encode()
	return pu.String()
}

// reachablePostgres returns the first candidate URL that accepts a
// connection: $DRIVEMAIL_TEST_POSTGRES, or the local server as root or postgres.
func reachablePostgres() (string, error) {
	candidates := []string{
		"postgres://root@127.0.0.1:5432/test?sslmode=disable",
		"postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
	}
	if v := os.Getenv(PostgresEnv); v != "" {
		candidates = []string{v}
	}
	var last error
	for _, c := range candidates {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		conn, err := pgx.Connect(ctx, c)
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return c, nil
		}
		last = err
	}
	return "", last
}
