package compose

import (
	"context"
	"time"
)

// Retries of idempotent Google calls (Drive metadata and opens, Gmail
// reads): three tries in all, 200 ms and then 400 ms apart. retryBudget
// is those pauses together, the longest the loop waits in all.
const (
	retryAttempts = 3
	retryBackoff  = 200 * time.Millisecond
	retryBudget   = retryBackoff * (1<<(retryAttempts-1) - 1)
)

// retryRule says whether a failure may pass on another try and, when the
// service named one, the time before which another try is pointless
// (zero: none named).
type retryRule func(err error) (again bool, notBefore time.Time)

// retry runs call until it succeeds, fails in a way again rules out, or
// has been tried retryAttempts times, backing off between tries. A pause
// lasts until the time the rule names when that is later than the
// backoff; a pause that would take the loop past retryBudget is not
// waited at all: the failure is returned at once, since trying sooner
// than the service said does not help and the caller is waiting.
func retry[T any](ctx context.Context, again retryRule, call func() (T, error)) (T, error) {
	pause, left := retryBackoff, retryBudget
	for attempt := 1; ; attempt++ {
		v, err := call()
		if err == nil || attempt == retryAttempts {
			return v, err
		}
		ok, notBefore := again(err)
		if !ok {
			return v, err
		}
		wait := pause
		if d := time.Until(notBefore); d > wait {
			wait = d
		}
		if wait > left {
			return v, err
		}
		left -= wait
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, ctx.Err()
		case <-t.C:
		}
		pause *= 2
	}
}
