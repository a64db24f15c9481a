package upload

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/drivemail/drivemail/store"
)

// Limits is what the uploads need from the store: single-use keys and
// per-user counters that every replica shares. store.Store satisfies it.
type Limits interface {
	// UseOnce records the first use of key until expires; a second use
	// before then fails with store.ErrUsed.
	UseOnce(ctx context.Context, key string, expires time.Time) error
	// ReleaseOnce forgets key's use, so that it may be used once more.
	ReleaseOnce(ctx context.Context, key string) error
	// Hit counts one event for key in the current fixed window and
	// returns the count so far.
	Hit(ctx context.Context, key string, window time.Duration) (int64, error)
}

// rateLimit counts one event of kind for the user and refuses past max
// per window, saying when the window ends.
func (s *Service) rateLimit(ctx context.Context, kind, userID string, max int) error {
	n, err := s.cfg.Limits.Hit(ctx, kind+":"+userID, s.cfg.RateWindow)
	if err != nil {
		return fmt.Errorf("upload: rate limit: %w", err)
	}
	if n <= int64(max) {
		return nil
	}
	now := s.cfg.Now()
	wait := now.Truncate(s.cfg.RateWindow).Add(s.cfg.RateWindow).Sub(now)
	e := refuse(http.StatusTooManyRequests, kindRateLimited, "Too many uploads: at most %d every %s per user. Try again in %s.",
		max, spell(s.cfg.RateWindow), spell(wait.Round(time.Second)))
	e.RetryAfter = wait
	return e
}

// useTicket spends the ticket's nonce, on any replica, exactly once.
func (s *Service) useTicket(ctx context.Context, p permit) error {
	err := s.cfg.Limits.UseOnce(ctx, ticketKey(p), p.expires.Add(time.Minute))
	if errors.Is(err, store.ErrUsed) {
		return refuse(http.StatusConflict, kindTicketUsed, "This upload URL was already used; each works once. Ask request_upload for a new one.")
	}
	if err != nil {
		return fmt.Errorf("upload: use ticket: %w", err)
	}
	return nil
}

// ticketKey is the single-use key of p's ticket.
func ticketKey(p permit) string { return "upload-ticket:" + p.nonce }

// slots bounds the uploads running at once on this replica, per user (so
// that one user cannot take every slot; the same fairness as the send
// slots in compose) and in all. Each running upload holds a Drive chunk
// and its read-ahead, so the total bounds the memory uploads take.
type slots struct {
	mu      sync.Mutex
	perUser map[string]int
	total   int
	maxUser int
	maxAll  int
}

func newSlots(maxUser, maxAll int) *slots {
	return &slots{perUser: map[string]int{}, maxUser: maxUser, maxAll: maxAll}
}

// take claims a slot for the user, or refuses; release gives it back.
func (s *slots) take(userID string) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perUser[userID] >= s.maxUser {
		e := refuse(http.StatusTooManyRequests, kindUserBusy, "%s and try again. Nothing was stored.", stillRunning(s.maxUser))
		e.RetryAfter = 10 * time.Second
		return nil, e
	}
	if s.total >= s.maxAll {
		e := refuse(http.StatusServiceUnavailable, kindServerBusy, "This server is busy with other people's uploads. Nothing was stored; try again in a minute.")
		e.RetryAfter = 30 * time.Second
		return nil, e
	}
	s.perUser[userID]++
	s.total++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.total--
			if s.perUser[userID]--; s.perUser[userID] <= 0 {
				delete(s.perUser, userID)
			}
		})
	}, nil
}

// stillRunning says how many of the user's uploads hold their slots.
func stillRunning(n int) string {
	if n == 1 {
		return "Your previous upload is still running; wait for it to finish"
	}
	return fmt.Sprintf("%d of your uploads are still running; wait for one to finish", n)
}

// spell writes a duration for people: "10 minutes", "1 hour", "42 seconds".
func spell(d time.Duration) string {
	unit := func(n int64, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return unit(int64(d/time.Hour), "hour")
	case d >= time.Minute && d%time.Minute == 0:
		return unit(int64(d/time.Minute), "minute")
	case d >= time.Second:
		return unit(int64(d.Round(time.Second)/time.Second), "second")
	}
	return d.String()
}
