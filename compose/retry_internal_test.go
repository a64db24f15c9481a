package compose

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRetryLoop: the one loop of Drive's and Gmail's retries tries a call
// that keeps failing retryAttempts times when the rule allows it, once
// when it does not, waits until the time the rule names, tries no more
// when that time lies past the loop's budget, and ends with its context.
func TestRetryLoop(t *testing.T) {
	failure := errors.New("failure")
	for _, tc := range []struct {
		name      string
		again     retryRule
		cancel    bool // ctx ends during the first pause
		wantCalls int
		wantErr   error
		minGap    time.Duration // between the first two calls
	}{
		{name: "transient, every try", again: func(error) (bool, time.Time) { return true, time.Time{} },
			wantCalls: retryAttempts, wantErr: failure, minGap: retryBackoff},
		{name: "not worth another try", again: func(error) (bool, time.Time) { return false, time.Time{} },
			wantCalls: 1, wantErr: failure},
		{name: "told to wait within the budget", again: func(error) (bool, time.Time) { return true, time.Now().Add(retryBudget - 50*time.Millisecond) },
			wantCalls: 2, wantErr: failure, minGap: retryBudget - 100*time.Millisecond},
		{name: "told to wait past the budget", again: func(error) (bool, time.Time) { return true, time.Now().Add(time.Hour) },
			wantCalls: 1, wantErr: failure},
		{name: "told a time already past", again: func(error) (bool, time.Time) { return true, time.Now().Add(-time.Hour) },
			wantCalls: retryAttempts, wantErr: failure, minGap: retryBackoff},
		{name: "context ends while it waits", again: func(error) (bool, time.Time) { return true, time.Time{} }, cancel: true,
			wantCalls: 1, wantErr: context.Canceled},
	} {
		t.Run(tc.name, inBubble(func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var calls []time.Time
			_, err := retry(ctx, tc.again, func() (int, error) {
				calls = append(calls, time.Now())
				if tc.cancel {
					cancel()
				}
				return 0, failure
			})
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
			if len(calls) != tc.wantCalls {
				t.Errorf("%d calls, want %d", len(calls), tc.wantCalls)
			}
			if len(calls) >= 2 && calls[1].Sub(calls[0]) < tc.minGap {
				t.Errorf("second try %v after the first, want at least %v", calls[1].Sub(calls[0]), tc.minGap)
			}
		}))
	}
	t.Run("success ends it", inBubble(func(t *testing.T) {
		calls := 0
		v, err := retry(context.Background(), func(error) (bool, time.Time) { return true, time.Time{} }, func() (int, error) {
			calls++
			if calls < 2 {
				return 0, failure
			}
			return 7, nil
		})
		if v != 7 || err != nil || calls != 2 {
			t.Errorf("got %d, %v after %d calls; want 7, nil after 2", v, err, calls)
		}
	}))
}
