package postgres_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/drivemail/drivemail/store/storetest"
)

// TestMain runs the tests, then reports in one line whether they ran
// against a server or skipped, and why (make test prints it).
func TestMain(m *testing.M) {
	code := m.Run()
	if err := storetest.AppendReport(storetest.PostgresStatus()); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}
