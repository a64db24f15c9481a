package compose

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/internal/refusal"
)

// The tests run in synctest bubbles: a wait of the queue timeout passes
// at once, on the bubble's clock, and synctest.Wait says every goroutine
// of the test is blocked, so "still waiting" is a fact, not a guess.

const queueWait = 30 * time.Second

// mustTake acquires at once or fails the test.
func mustTake(t *testing.T, a *admission, user string, need int64) func() {
	t.Helper()
	r := arrive(t, a, user, need).now(t)
	if r.err != nil {
		t.Fatalf("%s: %v", user, r.err)
	}
	return r.release
}

// pending is an acquire running in its own goroutine.
type pending chan acquired

type acquired struct {
	release func()
	err     error
}

func start(ctx context.Context, a *admission, user string, need int64) pending {
	p := make(pending, 1)
	go func() {
		release, err := a.acquire(ctx, user, need)
		p <- acquired{release, err}
	}()
	return p
}

// arrive starts an acquire with no deadline of its own and lets it
// queue (or go), so that the sends of a test ask in a known order.
func arrive(t *testing.T, a *admission, user string, need int64) pending {
	t.Helper()
	p := start(context.Background(), a, user, need)
	synctest.Wait()
	return p
}

// now is the acquire's outcome, which must have come (after synctest.Wait).
func (p pending) now(t *testing.T) acquired {
	t.Helper()
	select {
	case r := <-p:
		return r
	default:
		t.Fatal("the send is still waiting")
		return acquired{}
	}
}

// goes waits for the goroutines of the test to settle, and returns the
// release of p's grant, failing the test unless p was granted and every
// one of still is still waiting.
func goes(t *testing.T, what string, p pending, still ...pending) func() {
	t.Helper()
	synctest.Wait()
	r := p.now(t)
	if r.err != nil {
		t.Fatalf("%s: %v", what, r.err)
	}
	for i, q := range still {
		if !q.waiting() {
			t.Fatalf("%s went, and so did one that should still wait (%d of %d)", what, i+1, len(still))
		}
	}
	return r.release
}

// waiting reports that the acquire has no outcome yet (after synctest.Wait).
func (p pending) waiting() bool { return len(p) == 0 }

// idle fails the test unless nothing is reserved, running or remembered.
func idle(t *testing.T, a *admission) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.used != 0 || a.running != 0 || len(a.users) != 0 {
		t.Errorf("after every release: %d bytes reserved, %d running, users %v", a.used, a.running, a.users)
	}
}

func TestAdmissionPerUserCapAtItsEdge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(1000, 8, 2, queueWait)
		a1, a2 := mustTake(t, a, "ann", 1), mustTake(t, a, "ann", 1) // at the cap
		third := start(context.Background(), a, "ann", 1)            // just past it
		b := mustTake(t, a, "bob", 1)                                // another user is not held up by ann
		time.Sleep(queueWait)
		synctest.Wait()
		err := third.now(t).err
		if refusal.KindOf(err) != kindUserBusy || err.Error() != "2 of your messages are still sending; wait for one to finish and try again. Nothing was sent." {
			t.Fatalf("a third send of ann: %v", err)
		}
		a1()
		a3 := mustTake(t, a, "ann", 1)
		for _, r := range []func(){a2, a3, b} {
			r()
		}
		a1() // a second release is harmless
		idle(t, a)
	})
}

func TestAdmissionMemoryAtItsEdge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(100, 8, 3, queueWait)
		ann := mustTake(t, a, "ann", 60)
		bob := mustTake(t, a, "bob", 40) // the budget exactly
		cat := start(context.Background(), a, "cat", 1)
		time.Sleep(queueWait - time.Nanosecond)
		synctest.Wait()
		if !cat.waiting() {
			t.Fatal("one byte past the budget went, or was refused before the queue timeout")
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		err := cat.now(t).err
		if refusal.KindOf(err) != kindServerBusy || err.Error() != "This server is busy sending other people's messages: no room to send yours came free within 30s. Nothing was sent; try again in a minute." {
			t.Fatalf("cat past the budget: %v", err)
		}
		bob()
		mustTake(t, a, "cat", 40)() // what bob gave back
		ann()
		mustTake(t, a, "cat", 1000)() // more than the whole budget: it goes alone
		idle(t, a)
	})
}

func TestAdmissionCountCapAtItsEdge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(1000, 2, 2, queueWait)
		ann, bob := mustTake(t, a, "ann", 1), mustTake(t, a, "bob", 1) // at the cap
		cat := arrive(t, a, "cat", 1)                                  // past it
		if !cat.waiting() {
			t.Fatal("a third send went with a cap of two")
		}
		ann()
		synctest.Wait()
		if r := cat.now(t); r.err != nil {
			t.Fatalf("cat once ann was done: %v", r.err)
		} else {
			r.release()
		}
		bob()
		idle(t, a)
	})
}

// TestAdmissionServesTheQuietUserFirst: with room for one send, a busy
// user's queued sends do not go ahead of another user's one that came
// after them.
func TestAdmissionServesTheQuietUserFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(10, 8, 3, queueWait)
		first := mustTake(t, a, "noisy", 10)
		second := arrive(t, a, "noisy", 10)
		third := arrive(t, a, "noisy", 10)
		quiet := arrive(t, a, "quiet", 10)
		first()
		goes(t, "the quiet user's send", quiet, second, third)()
		goes(t, "the noisy user's second", second, third)() // then the noisy user's, in their order
		goes(t, "the noisy user's third", third)()
		idle(t, a)
	})
}

// TestAdmissionServesWhoHoldsLeast: the user holding less of the budget
// goes first, though the other asked first; among users holding as
// much, the one who asked first.
func TestAdmissionServesWhoHoldsLeast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(10, 8, 3, queueWait)
		big, small := mustTake(t, a, "big", 6), mustTake(t, a, "small", 2)
		blocker := mustTake(t, a, "blocker", 2) // the budget is full
		bigNext := arrive(t, a, "big", 2)
		smallNext := arrive(t, a, "small", 2)
		blocker() // 2 bytes free: to the user holding 2, not the one holding 6 who asked first
		goes(t, "the send of the user holding less", smallNext, bigNext)()
		small()
		big()
		goes(t, "the send of the user who held more", bigNext)()
		// ann and bob hold nothing and were never served: ann asked
		// first and goes first.
		hog := mustTake(t, a, "hog", 10)
		ann := arrive(t, a, "ann", 10)
		bob := arrive(t, a, "bob", 10)
		hog()
		goes(t, "ann's send, which asked first", ann, bob)()
		goes(t, "bob's send", bob)()
		idle(t, a)
	})
}

// TestAdmissionTurnIsNotPassed: the send whose turn it is waits for its
// room even when a smaller one behind it would fit, and both go when the
// room comes.
func TestAdmissionTurnIsNotPassed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(10, 8, 3, queueWait)
		hog := mustTake(t, a, "hog", 8)
		large := arrive(t, a, "ann", 5) // ann's turn: 2 free
		small := arrive(t, a, "bob", 1) // would fit
		if !large.waiting() || !small.waiting() {
			t.Fatal("a send went past the one whose turn it was")
		}
		hog()
		synctest.Wait()
		l, s := large.now(t), small.now(t)
		if l.err != nil || s.err != nil {
			t.Fatalf("once the room came: %v, %v", l.err, s.err)
		}
		l.release()
		s.release()
		idle(t, a)
	})
}

// TestAdmissionCancelledWaitHoldsNothing: a send cancelled while it
// waits returns the context's error, not a refusal, reserves nothing,
// and lets the sends behind it go.
func TestAdmissionCancelledWaitHoldsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(10, 8, 3, queueWait)
		hog := mustTake(t, a, "hog", 6)
		ctx, cancel := context.WithCancel(context.Background())
		bob := start(ctx, a, "bob", 6) // its turn, 4 free
		synctest.Wait()
		cat := arrive(t, a, "cat", 4) // fits, but waits its turn
		if !cat.waiting() {
			t.Fatal("cat went past bob")
		}
		cancel()
		synctest.Wait()
		if err := bob.now(t).err; !errors.Is(err, context.Canceled) || refusal.KindOf(err) != "" {
			t.Errorf("bob, cancelled: %v", err)
		}
		c := cat.now(t)
		if c.err != nil {
			t.Fatalf("cat once bob gave up: %v", c.err)
		}
		a.mu.Lock()
		used, running, bobLeft := a.used, a.running, a.users["bob"]
		a.mu.Unlock()
		if used != 10 || running != 2 || bobLeft != nil {
			t.Errorf("after bob's cancelled wait: %d bytes reserved (want 10), %d running (want 2), bob's entry %v", used, running, bobLeft)
		}
		// A context ended before the send asks holds nothing either.
		if _, err := a.acquire(ctx, "dan", 1); !errors.Is(err, context.Canceled) {
			t.Errorf("an ended context: %v", err)
		}
		c.release()
		hog()
		idle(t, a)
	})
}

// TestAdmissionGrantAndCancelTogether: a send whose room comes as its
// context ends either has the room (and releases it) or holds nothing.
func TestAdmissionGrantAndCancelTogether(t *testing.T) {
	for range 20 {
		synctest.Test(t, func(t *testing.T) {
			a := newAdmission(10, 8, 3, queueWait)
			hog := mustTake(t, a, "hog", 10)
			ctx, cancel := context.WithCancel(context.Background())
			bob := start(ctx, a, "bob", 10)
			synctest.Wait()
			hog() // grants bob…
			cancel()
			synctest.Wait()
			r := bob.now(t)
			a.mu.Lock()
			used := a.used
			a.mu.Unlock()
			switch {
			case r.err == nil && used == 10:
				r.release()
			case r.err != nil && used == 0:
			default:
				t.Fatalf("bob: %v with %d bytes reserved", r.err, used)
			}
			idle(t, a)
		})
	}
}

// TestAdmissionUnderLoadLeavesNothing: many users' sends of many sizes,
// some cancelled and some timed out, leave nothing reserved and no
// goroutine behind (synctest.Test fails on one), and the budget and caps
// hold throughout.
func TestAdmissionUnderLoadLeavesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const budget, sends, perUser = 100, 6, 2
		a := newAdmission(budget, sends, perUser, time.Second)
		var wg sync.WaitGroup
		for i := range 200 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(i), 21))
				user := fmt.Sprint("user", rng.IntN(7))
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(1500))*time.Millisecond)
				defer cancel()
				time.Sleep(time.Duration(rng.IntN(2000)) * time.Millisecond)
				release, err := a.acquire(ctx, user, int64(1+rng.IntN(60)))
				if err != nil {
					return
				}
				a.mu.Lock()
				over := a.used > budget || a.running > sends || a.users[user].running > perUser
				a.mu.Unlock()
				if over {
					t.Error("a limit was passed")
				}
				time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
				release()
			})
		}
		wg.Wait()
		idle(t, a)
	})
}
