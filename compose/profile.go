package compose

import (
	"context"
	"sync"
	"time"
)

// maxProfiles bounds the From cache; past it, expired entries go, and if
// none has expired the cache starts over.
const maxProfiles = 10_000

// profileCache remembers each user's sending address for a while, so a
// burst of sends costs one getProfile.
type profileCache struct {
	ttl time.Duration
	now func() time.Time
	mu  sync.Mutex
	m   map[string]profileEntry
}

type profileEntry struct {
	addr    string
	expires time.Time
}

func newProfileCache(ttl time.Duration, now func() time.Time) *profileCache {
	return &profileCache{ttl: ttl, now: now, m: map[string]profileEntry{}}
}

// from returns the address of the user userID: from the cache, else
// from fetch. Without a user id nothing is cached.
func (c *profileCache) from(ctx context.Context, userID string, fetch func(context.Context) (string, error)) (string, error) {
	if userID == "" {
		return fetch(ctx)
	}
	now := c.now()
	c.mu.Lock()
	e, hit := c.m[userID]
	c.mu.Unlock()
	if hit && now.Before(e.expires) {
		return e.addr, nil
	}
	addr, err := fetch(ctx)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxProfiles {
		for k, v := range c.m {
			if !now.Before(v.expires) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxProfiles {
			c.m = map[string]profileEntry{}
		}
	}
	c.m[userID] = profileEntry{addr: addr, expires: now.Add(c.ttl)}
	return addr, nil
}
