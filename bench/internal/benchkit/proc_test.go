package benchkit

import (
	"strings"
	"testing"
)

func TestParseStatus(t *testing.T) {
	status := "Name:\tdrivemail\nVmHWM:\t   51200 kB\nVmRSS:\t   33000 kB\nThreads:\t9\n"
	rss, hwm, err := parseStatus(strings.NewReader(status))
	if err != nil || rss != 33000<<10 || hwm != 51200<<10 {
		t.Errorf("rss %d, hwm %d, err %v", rss, hwm, err)
	}
	if _, _, err := parseStatus(strings.NewReader("Name:\tx\nVmRSS:\tlots kB\n")); err == nil {
		t.Error("a status without VmHWM and a readable VmRSS was accepted")
	}
}

// TestStartKeepsWhatWasPrintedFirst: Start returns at "listening on",
// with the lines before it (serve --demo's DEMO_TOKEN) at hand.
func TestStartKeepsWhatWasPrintedFirst(t *testing.T) {
	p, err := Start(t.Context(), "sh", "-c", "echo DEMO_TOKEN=dm_at_x; echo listening on http://127.0.0.1:1; echo DEMO_TOKEN=later; exec sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	if p.URL != "http://127.0.0.1:1" || p.Printed("DEMO_TOKEN=") != "dm_at_x" || p.Printed("nothing") != "" {
		t.Errorf("URL %q, DEMO_TOKEN %q", p.URL, p.Printed("DEMO_TOKEN="))
	}
}
