package upload

import (
	"errors"
	"net/http"
	"testing"
)

// TestSlotsPerUserAndInAll: a user's uploads stop at the per-user cap
// (another user still gets a slot) and everyone's at the total; each
// refusal says what to do and that nothing was stored.
func TestSlotsPerUserAndInAll(t *testing.T) {
	s := newSlots(2, 3)
	take := func(user string) (func(), *Error) {
		release, err := s.take(user)
		var e *Error
		errors.As(err, &e)
		return release, e
	}
	a1, _ := take("ann")
	a2, _ := take("ann") // at ann's cap
	if _, e := take("ann"); e == nil || e.Status != http.StatusTooManyRequests ||
		e.Error() != "2 of your uploads are still running; wait for one to finish and try again. Nothing was stored." || e.RetryAfter == 0 {
		t.Fatalf("ann past her cap: %v", e)
	}
	b1, e := take("bob") // at the total
	if e != nil {
		t.Fatalf("bob while ann is at her cap: %v", e)
	}
	if _, e := take("cat"); e == nil || e.Status != http.StatusServiceUnavailable ||
		e.Error() != "This server is busy with other people's uploads. Nothing was stored; try again in a minute." {
		t.Fatalf("cat past the total: %v", e)
	}
	a1()
	a1() // a second release is harmless
	c1, e := take("cat")
	if e != nil {
		t.Fatalf("cat after ann's first ended: %v", e)
	}
	for _, r := range []func(){a2, b1, c1} {
		r()
	}
	if s.total != 0 || len(s.perUser) != 0 {
		t.Errorf("after every release: total %d, users %v", s.total, s.perUser)
	}
}
