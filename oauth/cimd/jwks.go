package cimd

import (
	"context"
	"sync"
	"time"
)

// A private_key_jwt client's metadata document names a jwks_uri: its
// public keys, which sign the assertions it authenticates with at the
// token endpoint. The key set is fetched under the same rules as the
// document (the URL rules, public addresses, time and size caps) and
// cached; a key id not in the cached set may refetch it, at most once
// every minTTL, so a client that rotated its keys is not locked out and
// a stranger sending unknown key ids cannot make drivemail fetch at will.

// keySets caches key sets by URL.
type keySets struct {
	mu   sync.Mutex
	sets map[string]keySet
}

type keySet struct {
	body    []byte
	expires time.Time // fresh until then
	fetched time.Time // when it was last fetched (for refetch pacing)
	local   bool      // fetched from a loopback address (AllowLoopback)
}

// Keys returns the JSON Web Key Set at jwksURI, from the cache while
// fresh. refetch asks for a new copy (a key id was not found), which is
// granted at most once a minute per URL; otherwise the cached copy is
// returned. Its refusals are *Error.
func (f *Fetcher) Keys(ctx context.Context, jwksURI string, refetch bool) ([]byte, error) {
	u, err := f.checkURL(jwksURI)
	if err != nil {
		return nil, &Error{msg: "jwks_uri: " + err.Error(), kind: kindDocument}
	}
	if err := f.localForRemote(ctx, u.Scheme == "http"); err != nil {
		return nil, err
	}
	now := f.cfg.Now()
	f.keys.mu.Lock()
	if f.keys.sets == nil {
		f.keys.sets = map[string]keySet{}
	}
	ks, ok := f.keys.sets[jwksURI]
	f.keys.mu.Unlock()
	if err := f.localForRemote(ctx, ok && ks.local); err != nil {
		return nil, err
	}
	fresh := ok && now.Before(ks.expires)
	if ok && (fresh && !refetch || now.Sub(ks.fetched) < minTTL) {
		return ks.body, nil
	}
	select {
	case f.slots <- struct{}{}:
		defer func() { <-f.slots }()
	case <-ctx.Done():
		return nil, &Error{msg: "drivemail is fetching too many client documents at once; try again in a moment", kind: kindServer}
	}
	body, ttl, local, err := f.fetchJSON(ctx, u, "the client's key set (jwks_uri)")
	if err != nil {
		return nil, err
	}
	ttl = max(ttl, minTTL) // keys are checked on every token request
	f.keys.mu.Lock()
	if len(f.keys.sets) >= maxEntries {
		for k, v := range f.keys.sets {
			if !now.Before(v.expires) {
				delete(f.keys.sets, k)
			}
		}
		if len(f.keys.sets) >= maxEntries {
			clear(f.keys.sets)
		}
	}
	f.keys.sets[jwksURI] = keySet{body: body, expires: now.Add(ttl), fetched: now, local: local}
	f.keys.mu.Unlock()
	return body, nil
}
