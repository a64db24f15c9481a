package compose

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Defaults for the send slots (Config).
const (
	DefaultMaxConcurrentSends = 8
	DefaultMaxSendsPerUser    = 3
	DefaultSendQueueTimeout   = 30 * time.Second
)

// slots bound the messages streaming at once on this replica: in all
// (each holds an upload chunk, so this bounds memory) and per user (so
// that one user's sends cannot take every slot while another's wait), and
// how long a send waits for its turn. A send first takes one of its
// user's slots, then one of all; both waits share one deadline, after
// which the send is refused with nothing sent.
//
// The counts live in this process, not in the store: the slots they guard
// (memory, connections to Gmail) are this replica's, a crashed replica's
// counts vanish with it instead of blocking its users until a lease
// expires, and no send pays a store round trip to start. With R replicas
// a user can have R × MaxSendsPerUser sends in flight; docs/scaling.md
// says so.
type slots struct {
	all     chan struct{}
	perUser int
	wait    time.Duration

	mu    sync.Mutex
	users map[string]*userSlots
}

// userSlots is one user's share; refs counts the sends holding or waiting
// for one of its slots, so that an idle user's entry is dropped.
type userSlots struct {
	sem  chan struct{}
	refs int
}

func newSlots(all, perUser int, wait time.Duration) *slots {
	return &slots{all: make(chan struct{}, all), perUser: perUser, wait: wait, users: map[string]*userSlots{}}
}

// acquire waits for one of the user's slots and then one of all, for at
// most the queue timeout, and returns the release of both. A wait that
// runs out is a *Refusal: nothing was sent.
func (s *slots) acquire(ctx context.Context, userID string) (release func(), err error) {
	us := s.join(userID)
	timer := time.NewTimer(s.wait)
	defer timer.Stop()
	select {
	case us.sem <- struct{}{}:
	case <-timer.C:
		s.leave(userID, us)
		return nil, refuse(kindUserBusy, "%s and try again. Nothing was sent.", stillSending(s.perUser))
	case <-ctx.Done():
		s.leave(userID, us)
		return nil, fmt.Errorf("waiting to send: %w", ctx.Err())
	}
	select {
	case s.all <- struct{}{}:
	case <-timer.C:
		<-us.sem
		s.leave(userID, us)
		return nil, refuse(kindServerBusy, "This server is busy sending other people's messages: none of its %d sending slots came free within %s. Nothing was sent; try again in a minute.",
			cap(s.all), s.wait)
	case <-ctx.Done():
		<-us.sem
		s.leave(userID, us)
		return nil, fmt.Errorf("waiting to send: %w", ctx.Err())
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-s.all
			<-us.sem
			s.leave(userID, us)
		})
	}, nil
}

func (s *slots) join(userID string) *userSlots {
	s.mu.Lock()
	defer s.mu.Unlock()
	us := s.users[userID]
	if us == nil {
		us = &userSlots{sem: make(chan struct{}, s.perUser)}
		s.users[userID] = us
	}
	us.refs++
	return us
}

func (s *slots) leave(userID string, us *userSlots) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if us.refs--; us.refs == 0 {
		delete(s.users, userID)
	}
}

// stillSending says how many of the user's messages hold their slots.
func stillSending(n int) string {
	if n == 1 {
		return "Your previous message is still sending; wait for it to finish"
	}
	return fmt.Sprintf("%d of your messages are still sending; wait for one to finish", n)
}
