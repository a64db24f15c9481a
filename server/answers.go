package server

import (
	"encoding/json"
	"strconv"
	"sync"
)

// answerRoutes takes a client's answer to a question a call put on its
// event stream (elicitation/create, for a 2025 client) back to that call.
// The MCP library sends the question and matches the answer by the
// session id it was given and the JSON-RPC id; run stateless it has no
// session ids, and by the client's id alone two calls of one session
// would share one mailbox. So a call that may ask gets a key of its own
// here, handed to the library as the session id of that call alone, and
// an answer (a POST by the same user, in the same session, with the id of
// a request the call sent) is handed on under that key. Per process: an
// answer that lands on another replica finds no route (docs/scaling.md).
type answerRoutes struct {
	mu      sync.Mutex
	next    uint64
	byID    map[string]string // callKey(user, session, JSON-RPC id) → call key
	waiting map[string]int    // user and session → calls of theirs that may ask
}

// maxQuestionsPerCall bounds the requests one call's route remembers (the
// library's own bound for one call is 10 rounds).
const maxQuestionsPerCall = 16

func newAnswerRoutes() *answerRoutes {
	return &answerRoutes{byID: make(map[string]string), waiting: make(map[string]int)}
}

// callRoute is one call's route, from begin to end.
type callRoute struct {
	routes *answerRoutes
	key    string // the library's session id for this call
	user   string
	sid    string
	ids    []string
}

// begin opens a route for a call of userID in session sid.
func (a *answerRoutes) begin(userID, sid string) *callRoute {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	a.waiting[userID+"\x00"+sid]++
	return &callRoute{routes: a, key: "dm-call-" + strconv.FormatUint(a.next, 10), user: userID, sid: sid}
}

// expect records that the call sent the client a request with id, so the
// answer to it comes here. It runs before the request leaves.
func (c *callRoute) expect(id json.RawMessage) {
	c.routes.mu.Lock()
	defer c.routes.mu.Unlock()
	if len(c.ids) >= maxQuestionsPerCall {
		return
	}
	k := callKey(c.user, c.sid, id)
	c.routes.byID[k] = c.key
	c.ids = append(c.ids, k)
}

// end closes the route: answers that come later find nothing.
func (c *callRoute) end() {
	c.routes.mu.Lock()
	defer c.routes.mu.Unlock()
	for _, k := range c.ids {
		delete(c.routes.byID, k)
	}
	w := c.user + "\x00" + c.sid
	if c.routes.waiting[w]--; c.routes.waiting[w] <= 0 {
		delete(c.routes.waiting, w)
	}
}

// lookup returns the library session id of the call waiting for the
// answer with id from userID in session sid.
func (a *answerRoutes) lookup(userID, sid string, id json.RawMessage) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	key, ok := a.byID[callKey(userID, sid, id)]
	return key, ok
}

// open reports whether a call of userID in session sid may be waiting
// for an answer.
func (a *answerRoutes) open(userID, sid string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.waiting[userID+"\x00"+sid] > 0
}
