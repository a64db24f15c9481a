package ask

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// StateTTL is how long a 2026-07-28 client has to call again with its
// user's answer: the user's reading time, and the model's turn.
const StateTTL = 10 * time.Minute

// Asker seals the state of a question a 2026-07-28 client takes away,
// and spends each answer once. A client may send back any state and any
// answer; the seal binds an answer to the user, the tool, its exact
// arguments and the question, for StateTTL, so an answer given to one
// send cannot be carried to another.
type Asker struct {
	keys [][]byte // the first seals; all open
	// spend records a state's nonce as used until it expires; it fails
	// for one already used. nil: answers are not held to one use.
	spend func(ctx context.Context, key string, expires time.Time) error
	now   func() time.Time
}

// New returns an Asker that seals with keys (32 bytes each, for this
// purpose only; the first seals, all open) and spends answers with spend
// (nil: not enforced). Replicas given the same keys and a shared spend
// accept each other's states.
func New(keys [][]byte, spend func(ctx context.Context, key string, expires time.Time) error) *Asker {
	return &Asker{keys: keys, spend: spend, now: time.Now}
}

// For returns ctx for a call of userID; stream says whether a 2025 client
// can be asked on this call's event stream (it declared form elicitation,
// and its answer can reach this process).
func (a *Asker) For(ctx context.Context, userID string, stream bool) context.Context {
	return context.WithValue(ctx, routeKey{}, route{asker: a, user: userID, stream: stream})
}

// modern asks a 2026-07-28 client: the answer its retry carries, once its
// state is shown to be this question's for this call, or else the
// input_required result that asks.
func (a *Asker) modern(ctx context.Context, userID string, req mcp.CallToolRequest, q Question) (Answer, *mcp.CallToolResult) {
	digest := callDigest(userID, req, q)
	if nonce, expires, ok := a.open(req.Params.RequestState, digest); ok {
		if res := mcpserver.ElicitationResponse(req.Params.InputResponses, q.Key); res != nil {
			if a.spend == nil || a.spend(ctx, "ask-state:"+nonce, expires) == nil {
				return answerOf(&res.ElicitationResponse), nil
			}
		}
	}
	// No answer yet, or one that is not this call's, expired, or spent:
	// ask (again). The spec's rule too: a missing answer is asked again,
	// never an error.
	return Answer{}, mcpserver.NewInputRequestBuilder(a.seal(digest)).Elicit(q.Key, params(q)).ToolResult()
}

// State layout, base64url: version (1) | expiry, Unix seconds (8) |
// nonce (12) | MAC (16). The MAC covers the rest and the call's digest.
const (
	stateVersion  = 1
	stateNonceLen = 12
	stateMACLen   = 16
	stateBodyLen  = 1 + 8 + stateNonceLen
)

func (a *Asker) seal(digest []byte) string {
	raw := make([]byte, stateBodyLen, stateBodyLen+stateMACLen)
	raw[0] = stateVersion
	binary.BigEndian.PutUint64(raw[1:9], uint64(a.now().Add(StateTTL).Unix()))
	_, _ = rand.Read(raw[9:stateBodyLen]) // crypto/rand.Read never fails
	raw = append(raw, mac(a.keys[0], raw, digest)...)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// open checks a state against the call's digest, and returns its nonce
// and expiry.
func (a *Asker) open(state string, digest []byte) (nonce string, expires time.Time, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || len(raw) != stateBodyLen+stateMACLen || raw[0] != stateVersion {
		return "", time.Time{}, false
	}
	body, tag := raw[:stateBodyLen], raw[stateBodyLen:]
	expires = time.Unix(int64(binary.BigEndian.Uint64(body[1:9])), 0)
	if !a.now().Before(expires) {
		return "", time.Time{}, false
	}
	for _, k := range a.keys {
		if hmac.Equal(tag, mac(k, body, digest)) {
			return base64.RawURLEncoding.EncodeToString(body[9:]), expires, true
		}
	}
	return "", time.Time{}, false
}

func mac(key, body, digest []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(body)
	h.Write(digest)
	return h.Sum(nil)[:stateMACLen]
}

// callDigest names one question of one call: the user, the tool, its
// arguments (encoding/json writes a map's keys in order, so equal
// arguments give equal bytes), and the question: its key, what it says
// and what it is bound to. The same arguments may describe another
// message by the retry (a file changed), and an answer to what the user
// read then is not an answer to that.
func callDigest(userID string, req mcp.CallToolRequest, q Question) []byte {
	args, _ := json.Marshal(req.Params.Arguments)
	h := sha256.New()
	for _, part := range [][]byte{[]byte(userID), []byte(req.Params.Name), []byte(q.Key), args, []byte(q.Message), []byte(q.Bind)} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return h.Sum(nil)
}
