package storetest

import (
	"fmt"
	"net/url"
	"os"
	"strings"
)

// ReportEnv names the file a test binary appends its one-line report to:
// make test sets it and prints the file, because go test shows a passing
// package's skip messages only with -v, and whether the PostgreSQL tests
// ran is worth a line.
const ReportEnv = "DRIVEMAIL_TEST_REPORT"

// PostgresStatus says in one line whether the PostgreSQL tests run here
// (PostgresURL gives them a server) and against what, or why not: the
// same probe PostgresURL makes. A password in the URL is not shown.
func PostgresStatus() string {
	given := os.Getenv(PostgresEnv)
	base, err := reachablePostgres()
	switch {
	case err == nil:
		return "PostgreSQL store tests ran against " + redactURL(base)
	case given != "":
		return fmt.Sprintf("PostgreSQL store tests failed: $%s (%s) did not answer: %s", PostgresEnv, redactURL(given), redactError(err, given))
	default:
		return fmt.Sprintf("PostgreSQL store tests skipped: no server answered at 127.0.0.1:5432 (%v); set %s=postgres://… to run them", err, PostgresEnv)
	}
}

// AppendReport appends line to the file $DRIVEMAIL_TEST_REPORT names, if
// it names one.
func AppendReport(line string) error {
	path := os.Getenv(ReportEnv)
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("test report: %w", err)
	}
	if _, err := fmt.Fprintln(f, line); err != nil {
		f.Close()
		return fmt.Errorf("test report: %w", err)
	}
	return f.Close()
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return u.Redacted()
}

// redactError drops raw's password from an error text, should a driver
// quote it.
func redactError(err error, raw string) string {
	msg := err.Error()
	if u, perr := url.Parse(raw); perr == nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}
