package server

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
)

// inflight lets a client cancel its own running requests, and only those.
// The MCP library keys its cancellations by session id and request id; run
// stateless, every request's session id is empty, so there one user's
// notifications/cancelled for request 5 could end another user's send.
// This layer keys calls by user, session id and request id instead, and
// never passes a cancellation to the library. It is per replica: a
// cancellation that lands on another replica than its call finds nothing,
// and the call runs to its end.
type inflight struct {
	mu    sync.Mutex
	calls map[string][]*context.CancelFunc
}

func newInflight() *inflight {
	return &inflight{calls: make(map[string][]*context.CancelFunc)}
}

// callKey names a request of a user within a session ("" without one).
// The JSON-RPC id is compacted, so 5 and "5" stay different ids and
// spacing does not matter.
func callKey(userID, sessionID string, id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		b.Reset()
		b.Write(id)
	}
	return userID + "\x00" + sessionID + "\x00" + b.String()
}

// track makes ctx cancellable under key until done is called.
func (f *inflight) track(ctx context.Context, key string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	entry := &cancel
	f.mu.Lock()
	f.calls[key] = append(f.calls[key], entry)
	f.mu.Unlock()
	return ctx, func() {
		f.mu.Lock()
		list := f.calls[key]
		for i, e := range list {
			if e == entry {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(f.calls, key)
		} else {
			f.calls[key] = list
		}
		f.mu.Unlock()
		cancel()
	}
}

// cancel ends every call running under key and says how many there were.
func (f *inflight) cancel(key string) int {
	f.mu.Lock()
	list := f.calls[key]
	delete(f.calls, key)
	f.mu.Unlock()
	for _, c := range list {
		(*c)()
	}
	return len(list)
}
