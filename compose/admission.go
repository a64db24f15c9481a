package compose

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Defaults of admission (Config).
const (
	DefaultMaxConcurrentSends = 64
	DefaultMaxSendsPerUser    = 3
	DefaultSendQueueTimeout   = 30 * time.Second
)

// admission decides when a planned send may stream on this replica. A
// send reserves the memory it will hold (reservation) from the budget,
// and counts against a cap on sends at once and one on its user's; it
// waits, for at most the queue timeout, until all three have room, and
// is refused past it with nothing sent.
//
// Waiting sends are served by user, not by arrival: the next room goes to
// the user, below their own cap, who holds the least of the budget; among
// equals, the one served longest ago (a user who had nothing running or
// waiting counts as never served), then the one whose send came first.
// Each user's sends go in their order. So a quiet user's message goes
// ahead of a busy user's next one, however many that user queued first. The send whose
// turn it is waits for its room even when another's smaller one would
// fit: letting small sends pass could hold a large one back until its
// timeout, and room comes back as running sends end.
//
// The counts live in this process, not in the store: what they guard
// (memory, connections to Google) is this replica's, a crashed replica's
// counts vanish with it instead of blocking its users until a lease
// expires, and no send pays a store round trip to start. With R replicas
// a user can have R × MaxSendsPerUser sends in flight; docs/scaling.md
// says so.
type admission struct {
	budget  int64 // bytes the running sends may reserve
	sends   int   // sends running at once
	perUser int   // one user's sends running at once
	wait    time.Duration

	mu      sync.Mutex
	used    int64
	running int
	arrived uint64 // sends that have come, for the order among equals
	granted uint64 // sends that have been let through, likewise
	users   map[string]*userSends
}

// userSends is one user's sends on this replica: those running (and what
// they reserved) and those waiting, in order, and when the last was let
// through. It is dropped once it has neither.
type userSends struct {
	held    int64
	running int
	served  uint64 // admission.granted when its last send went
	queue   []*waiter
}

// waiter is one send waiting for its room; granted is closed when it has
// it.
type waiter struct {
	need    int64
	seq     uint64
	granted chan struct{}
}

func newAdmission(budget int64, sends, perUser int, wait time.Duration) *admission {
	return &admission{budget: budget, sends: sends, perUser: perUser, wait: wait, users: map[string]*userSends{}}
}

// acquire waits until the send may reserve need bytes, for at most the
// queue timeout, and returns the release of what it reserved. A need
// above the whole budget is taken as the budget, so that every send can
// go once the others are done. A wait that runs out is a *Refusal:
// nothing was sent. A send whose context ends first holds nothing.
func (a *admission) acquire(ctx context.Context, userID string, need int64) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("waiting to send: %w", err)
	}
	need = min(max(need, 0), a.budget)
	w := &waiter{need: need, granted: make(chan struct{})}
	a.mu.Lock()
	us := a.users[userID]
	if us == nil {
		us = &userSends{}
		a.users[userID] = us
	}
	a.arrived++
	w.seq = a.arrived
	us.queue = append(us.queue, w)
	a.serve()
	a.mu.Unlock()

	timer := time.NewTimer(a.wait)
	defer timer.Stop()
	select {
	case <-w.granted:
		return a.releaser(userID, us, need), nil
	case <-timer.C:
	case <-ctx.Done():
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-w.granted: // its room came as the wait ended
		if err := ctx.Err(); err != nil {
			a.free(userID, us, need)
			return nil, fmt.Errorf("waiting to send: %w", err)
		}
		return a.releaser(userID, us, need), nil
	default:
	}
	// Its own user's sends hold it back when, with the server's room
	// aside, those running and those ahead of it fill the user's cap.
	own := us.running+us.ahead(w) >= a.perUser
	us.remove(w)
	a.dropIdle(userID, us)
	a.serve() // it may have been the one whose turn it was
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("waiting to send: %w", err)
	}
	if own {
		return nil, refuse(kindUserBusy, "%s and try again. Nothing was sent.", stillSending(a.perUser))
	}
	return nil, refuse(kindServerBusy, "This server is busy sending other people's messages: no room to send yours came free within %s. Nothing was sent; try again in a minute.", a.wait)
}

// releaser returns what a granted send calls once it is done; a second
// call does nothing.
func (a *admission) releaser(userID string, us *userSends, need int64) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.free(userID, us, need)
		})
	}
}

// free gives back a granted send's room and serves the sends waiting
// for it. a.mu must be held.
func (a *admission) free(userID string, us *userSends, need int64) {
	a.used -= need
	a.running--
	us.held -= need
	us.running--
	a.dropIdle(userID, us)
	a.serve()
}

// serve grants waiting sends their room, in turn, while the one whose
// turn it is fits. a.mu must be held.
func (a *admission) serve() {
	for {
		us := a.next()
		if us == nil {
			return
		}
		w := us.queue[0]
		if a.running >= a.sends || a.used+w.need > a.budget {
			return
		}
		us.queue[0] = nil
		us.queue = us.queue[1:]
		a.granted++
		us.held += w.need
		us.running++
		us.served = a.granted
		a.used += w.need
		a.running++
		close(w.granted)
	}
}

// next is the user whose first waiting send goes next: among those
// below the per-user cap with a send waiting, the one holding the least,
// then the one served longest ago, then the one whose send came first.
// The users are those with sends running or waiting on this replica,
// so the scan is bounded by the sends in flight. a.mu must be held.
func (a *admission) next() *userSends {
	var best *userSends
	for _, us := range a.users {
		if len(us.queue) == 0 || us.running >= a.perUser {
			continue
		}
		if best == nil || us.before(best) {
			best = us
		}
	}
	return best
}

// before reports whether this user's turn comes before other's.
func (us *userSends) before(other *userSends) bool {
	switch {
	case us.held != other.held:
		return us.held < other.held
	case us.served != other.served:
		return us.served < other.served
	}
	return us.queue[0].seq < other.queue[0].seq
}

// dropIdle forgets a user with nothing running or waiting. a.mu
// must be held.
func (a *admission) dropIdle(userID string, us *userSends) {
	if us.running == 0 && len(us.queue) == 0 {
		delete(a.users, userID)
	}
}

// ahead counts the user's sends waiting before w.
func (us *userSends) ahead(w *waiter) int {
	for i, q := range us.queue {
		if q == w {
			return i
		}
	}
	return len(us.queue)
}

// remove takes w out of the queue.
func (us *userSends) remove(w *waiter) {
	if i := us.ahead(w); i < len(us.queue) {
		us.queue = slices.Delete(us.queue, i, i+1)
	}
}

// stillSending says how many of the user's messages are sending.
func stillSending(n int) string {
	if n == 1 {
		return "Your previous message is still sending; wait for it to finish"
	}
	return fmt.Sprintf("%d of your messages are still sending; wait for one to finish", n)
}
