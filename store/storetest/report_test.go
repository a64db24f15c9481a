package storetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPostgresStatus: the report line says the tests failed when the
// server named in $DRIVEMAIL_TEST_POSTGRES does not answer, names it
// without its password, and is appended to the report file.
func TestPostgresStatus(t *testing.T) {
	t.Setenv(PostgresEnv, "postgres://dm:s3cret-pw@127.0.0.1:1/test?sslmode=disable")
	line := PostgresStatus()
	if !strings.HasPrefix(line, "PostgreSQL store tests failed: $DRIVEMAIL_TEST_POSTGRES (postgres://dm:xxxxx@127.0.0.1:1/test") || strings.Contains(line, "s3cret") {
		t.Errorf("status = %q", line)
	}
	report := filepath.Join(t.TempDir(), "report")
	t.Setenv(ReportEnv, report)
	for _, l := range []string{"one", "two"} {
		if err := AppendReport(l); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(report); err != nil || string(b) != "one\ntwo\n" {
		t.Errorf("report file %q, %v", b, err)
	}
}
