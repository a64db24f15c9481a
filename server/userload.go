package server

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
)

// DefaultMaxMCPRequestsPerUser caps one user's /mcp requests in flight on
// one replica (--max-mcp-requests-per-user): well above what a client
// runs in parallel (a few tool calls, each send also bounded by its send
// slots), far below what a hundred trickling connections would hold.
const DefaultMaxMCPRequestsPerUser = 16

// mcpRetryAfter is what a refused request is told to wait: most calls end
// within seconds, and a body that trickles is cut by its deadline.
const mcpRetryAfter = 2

// userLoad caps what one signed-in user holds in /mcp at once on this
// replica: the requests in flight, and the body bytes they announced (a
// body of unknown length counts as the largest one), each held until the
// request ends, since its body stays in memory while the call runs. Any
// Google account can sign in, so without it one user's hundred
// connections, each announcing 4 MiB and sending slowly, held 400 MiB.
// The count lives in memory, per replica, for the reasons send admission
// does (docs/scaling.md).
type userLoad struct {
	maxRequests int
	maxBytes    int64

	mu    sync.Mutex
	users map[string]*heldByUser
}

type heldByUser struct {
	requests int
	bytes    int64
}

func newUserLoad(maxRequests int, maxBytes int64) *userLoad {
	return &userLoad{maxRequests: maxRequests, maxBytes: maxBytes, users: make(map[string]*heldByUser)}
}

// overLimit is why a request was refused: one of these two.
type overLimit int

const (
	withinLimits overLimit = iota
	tooManyRequests
	tooManyBytes
)

// admit takes one request of bytes for userID, or says which limit it
// would pass. extra lets one small request past both (an answer a waiting
// call needs, which must not be refused by the call it would end).
// release gives the request back, once.
func (l *userLoad) admit(userID string, bytes int64, extra bool) (release func(), refused overLimit) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.users[userID]
	if h == nil {
		h = &heldByUser{}
		l.users[userID] = h
	}
	maxRequests, maxBytes := l.maxRequests, l.maxBytes
	if extra {
		maxRequests, maxBytes = maxRequests+1, maxBytes+maxAnswerBytes
	}
	switch {
	case h.requests >= maxRequests:
		refused = tooManyRequests
	case h.bytes+bytes > maxBytes:
		refused = tooManyBytes
	}
	if refused != withinLimits {
		if h.requests == 0 {
			delete(l.users, userID)
		}
		return func() {}, refused
	}
	h.requests++
	h.bytes += bytes
	return sync.OnceFunc(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		h.requests--
		h.bytes -= bytes
		if h.requests == 0 {
			delete(l.users, userID)
		}
	}), withinLimits
}

// refuse answers a request over one of the user's limits with 429 and
// Retry-After, as a JSON-RPC error the model can act on. The body is left
// unread, so the connection closes after the answer.
func (l *userLoad) refuse(w http.ResponseWriter, why overLimit) {
	msg := fmt.Sprintf("You have %d requests to this drivemail server running at once, the most one user may. "+
		"Wait for one to finish, then send this one again (in %d seconds or later).", l.maxRequests, mcpRetryAfter)
	if why == tooManyBytes {
		msg = fmt.Sprintf("Your requests running on this drivemail server already carry %d MiB, the most one user's may. "+
			"Wait for one to finish, then send this one again (in %d seconds or later). "+
			"Tool arguments carry file ids, not files: attach Drive files by id, or upload a file first with request_upload.", l.maxBytes>>20, mcpRetryAfter)
	}
	w.Header().Set("Retry-After", strconv.Itoa(mcpRetryAfter))
	w.Header().Set("Connection", "close")
	jsonRPCError(w, http.StatusTooManyRequests, codeBusy, msg)
}

// codeBusy is the JSON-RPC error of a request refused for load: in the
// range JSON-RPC leaves to servers.
const codeBusy = -32000
