package compose

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/internal/refusal"
)

// mustTake acquires at once (well within the wait) or fails the test.
func mustTake(t *testing.T, s *slots, user string) func() {
	t.Helper()
	release, err := s.acquire(context.Background(), user)
	if err != nil {
		t.Fatalf("%s: %v", user, err)
	}
	return release
}

func refusalKind(err error) kind {
	return refusal.KindOf(err)
}

func TestSlotsPerUserCapAtItsEdge(t *testing.T) {
	s := newSlots(8, 2, 50*time.Millisecond)
	a1, a2 := mustTake(t, s, "ann"), mustTake(t, s, "ann") // at the cap
	_, err := s.acquire(context.Background(), "ann")       // just past it
	if refusalKind(err) != kindUserBusy || err.Error() != "2 of your messages are still sending; wait for one to finish and try again. Nothing was sent." {
		t.Fatalf("a third send of ann: %v", err)
	}
	b := mustTake(t, s, "bob") // another user is not held up by ann
	a1()
	a3 := mustTake(t, s, "ann")
	for _, r := range []func(){a2, a3, b} {
		r()
	}
	a1() // a second release is harmless
	if len(s.users) != 0 || len(s.all) != 0 {
		t.Errorf("after every release: %d users, %d slots taken", len(s.users), len(s.all))
	}
}

func TestSlotsWaitForTheUsersOwnSlot(t *testing.T) {
	s := newSlots(8, 1, time.Minute)
	first := mustTake(t, s, "ann")
	got := make(chan error, 1)
	go func() {
		release, err := s.acquire(context.Background(), "ann")
		if err == nil {
			release()
		}
		got <- err
	}()
	first() // the waiting send goes when ann's first finishes
	if err := <-got; err != nil {
		t.Fatalf("the waiting send: %v", err)
	}
}

func TestSlotsRefuseWhenEverySlotStaysTaken(t *testing.T) {
	s := newSlots(2, 2, 50*time.Millisecond)
	a1, a2 := mustTake(t, s, "ann"), mustTake(t, s, "cat")
	_, err := s.acquire(context.Background(), "bob")
	if refusalKind(err) != kindServerBusy || !strings.Contains(err.Error(), "none of its 2 sending slots came free within 50ms. Nothing was sent") {
		t.Fatalf("bob with every slot taken: %v", err)
	}
	if _, held := s.users["bob"]; held || len(s.all) != 2 {
		t.Errorf("the refused send kept a slot: users %v, %d taken", s.users, len(s.all))
	}
	a1()
	mustTake(t, s, "bob")()
	a2()
}

func TestSlotsWaitEndsWithTheContext(t *testing.T) {
	s := newSlots(1, 1, time.Minute)
	release := mustTake(t, s, "ann")
	defer release()
	for _, user := range []string{"ann", "bob"} { // waiting for the user's slot, and for one of all
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := s.acquire(ctx, user)
		if !errors.Is(err, context.Canceled) || refusalKind(err) != "" {
			t.Errorf("%s, cancelled: %v", user, err)
		}
	}
	if len(s.users) != 1 {
		t.Errorf("cancelled waits left entries: %v", s.users)
	}
}
