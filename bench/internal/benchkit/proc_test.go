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
