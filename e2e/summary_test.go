package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSummaryMarksExpectedFailures: the summary the e2e runs print shows
// a failing scenario the baseline lists as expected, one it does not list
// as a failure, and the suite's own list of expected failures not again.
func TestSummaryMarksExpectedFailures(t *testing.T) {
	awk, err := exec.LookPath("awk")
	if err != nil {
		t.Skip("no awk on PATH")
	}
	dir := t.TempDir()
	baseline := filepath.Join(dir, "baseline.yml")
	output := filepath.Join(dir, "out.txt")
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(baseline, "server:\n  # fixtures\n  - tools-call-image\n  - prompts-list\n")
	write(output, "Running…\n✗ before the summary\n=== SUMMARY ===\n✓ ping: 1 passed, 0 failed\n✗ tools-call-image: 0 passed, 2 failed\n"+
		"✗ prompts-list: 0 passed, 1 failed\n✗ tools-list: 3 passed, 1 failed\n\nTotal: 4 passed, 4 failed\n\n"+
		"\x1b[33mExpected failures (in baseline):\x1b[0m\n  ~ tools-call-image\n  ~ prompts-list\n\n\x1b[32mBaseline check passed: all failures are expected.\x1b[0m\n")
	out, err := exec.Command(awk, "-v", "baseline="+baseline, "-f", "summary.awk", output).CombinedOutput()
	if err != nil {
		t.Fatalf("awk: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{
		"=== SUMMARY ===\n✓ ping: 1 passed, 0 failed\n",
		"~ tools-call-image: 0 passed, 2 failed (expected: " + baseline + ")\n",
		"~ prompts-list: 0 passed, 1 failed (expected: " + baseline + ")\n",
		"✗ tools-list: 3 passed, 1 failed\n",
		"Baseline check passed",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "before the summary") || strings.Contains(got, "  ~ ") || strings.Count(got, "✗") != 1 {
		t.Errorf("summary has what is not the summary, or says the expected failures twice:\n%s", got)
	}
}
