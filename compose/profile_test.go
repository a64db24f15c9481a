package compose

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestProfileCache(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	c := newProfileCache(time.Minute, func() time.Time { return now })
	calls := 0
	fetch := func(addr string) func(context.Context) (string, error) {
		return func(context.Context) (string, error) { calls++; return addr, nil }
	}
	ctx := context.Background()

	for i := 0; i < 3; i++ {
		if got, _ := c.from(ctx, "u1", fetch("ana@example.com")); got != "ana@example.com" {
			t.Fatalf("from = %q", got)
		}
	}
	if calls != 1 {
		t.Errorf("three sends within the TTL made %d getProfile calls, want 1", calls)
	}
	if got, _ := c.from(ctx, "u2", fetch("bob@example.com")); got != "bob@example.com" || calls != 2 {
		t.Errorf("second user: %q after %d calls", got, calls)
	}
	now = now.Add(time.Minute)
	if got, _ := c.from(ctx, "u1", fetch("ana2@example.com")); got != "ana2@example.com" || calls != 3 {
		t.Errorf("after the TTL: %q after %d calls, want a fresh fetch", got, calls)
	}
	// No user: nothing is cached.
	c.from(ctx, "", fetch("x@example.com"))
	c.from(ctx, "", fetch("x@example.com"))
	if calls != 5 {
		t.Errorf("anonymous fetches = %d, want 2 uncached", calls-3)
	}
	// A failure is not cached.
	boom := errors.New("boom")
	if _, err := c.from(ctx, "u3", func(context.Context) (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
	if got, _ := c.from(ctx, "u3", fetch("carl@example.com")); got != "carl@example.com" {
		t.Errorf("after a failure: %q", got)
	}
}

func TestProfileCacheBounded(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	c := newProfileCache(time.Minute, func() time.Time { return now })
	for i := 0; i < maxProfiles+5; i++ {
		c.from(context.Background(), string(rune('a'+i%26))+time.Duration(i).String(), func(context.Context) (string, error) { return "x@example.com", nil })
	}
	if n := len(c.m); n > maxProfiles {
		t.Errorf("cache holds %d entries, bound is %d", n, maxProfiles)
	}
}
