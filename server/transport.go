package server

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/drivemail/drivemail/internal/ask"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/tools"
	"github.com/drivemail/drivemail/views"
)

// mcpEndpoint is /mcp in front of the MCP library, behind the Origin
// guard, CORS and the bearer check. Everything the protocol says is the
// library's, reached through its Handle with the body as read here; this
// layer keeps only what the library cannot do:
//   - session ids: the library either keeps no session at all or holds
//     every id it mints until DELETE or an idle sweep, and knows nothing
//     of users; drivemail's ids cost nothing to hold and are bound to
//     their user (sessions.go);
//   - limits before the body: one user's requests in flight and the bytes
//     they hold (userload.go), the body bounded in size and time, where
//     the library reads any body whole;
//   - the protocol-version header mismatches real clients send, which the
//     library refuses before any hook of its own runs;
//   - cancellations kept to their user, and a question's answer taken to
//     its call: the library keys both by session id, which it does not
//     have here (inflight.go, answers.go);
//   - the file-transfer draft (filetransfer.go);
//   - 405 for every method but POST: there is no listening stream.
type mcpEndpoint struct {
	lib         *mcpserver.StreamableHTTPServer
	ids         *sessionIDs
	calls       *inflight
	answers     *answerRoutes
	load        *userLoad
	asker       *ask.Asker
	maxBody     int64
	bodyTimeout time.Duration
	logger      *slog.Logger
	// files answers the file-transfer draft's methods (nil: off).
	files *fileTransfer
}

// askStateInfo derives the key that seals a question's state.
const askStateInfo = "drivemail ask state v1"

// maxAnswerBytes is the largest body that may come past a user's limits
// when a call of theirs waits for an answer (an answer is a form's values).
const maxAnswerBytes = 64 << 10

func newMCPEndpoint(d Deps) *mcpEndpoint {
	secrets := d.SessionSecrets
	if len(secrets) == 0 {
		secrets = [][]byte{[]byte(rand.Text())} // ids and states hold for this process only
	}
	var askKeys [][]byte
	for _, s := range secrets {
		askKeys = append(askKeys, deriveKey(s, askStateInfo))
	}
	e := &mcpEndpoint{
		lib:         newMCPHandler(d),
		ids:         newSessionIDs(secrets),
		calls:       newInflight(),
		answers:     newAnswerRoutes(),
		load:        newUserLoad(d.MaxMCPRequestsPerUser, 2*d.MaxMCPBodyBytes),
		asker:       ask.New(askKeys, d.UseOnce),
		maxBody:     d.MaxMCPBodyBytes,
		bodyTimeout: d.MCPBodyTimeout,
		logger:      d.Logger,
	}
	if d.FileTransfer != nil {
		e.files = &fileTransfer{transfers: d.FileTransfer, inputFiles: tools.InputFiles(), logger: d.Logger}
	}
	return e
}

const methodCancelled = "notifications/cancelled"

func (e *mcpEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		methodNotAllowed(w, r)
		return
	}
	u, ok := identity.FromContext(r.Context())
	if !ok {
		e.logger.ErrorContext(r.Context(), "mcp: no user behind the bearer check")
		http.Error(w, "drivemail hit an internal error; try again.", http.StatusInternalServerError)
		return
	}
	sess, verdict := e.ids.check(u.ID, r.Header.Values("Mcp-Session-Id"))
	if verdict == sessionMalformed {
		jsonRPCError(w, http.StatusBadRequest, -32600, fmt.Sprintf("The Mcp-Session-Id header is not one session id of at most %d visible ASCII characters. "+
			"Send the request without it: drivemail needs no session id.", maxSessionIDLen))
		return
	}
	if r.ContentLength > e.maxBody {
		tooLarge(w, e.maxBody)
		return
	}
	release, refused := e.load.admit(u.ID, e.heldBytes(r), false)
	// A call of this user's that waits for an answer must not be refused it
	// by its own place in the count: one small request more is read, and
	// let through only if it is an answer.
	answerOnly := refused != withinLimits && e.answers.open(u.ID, sess.id) && r.ContentLength >= 0 && r.ContentLength <= maxAnswerBytes
	if answerOnly {
		release, refused = e.load.admit(u.ID, e.heldBytes(r), true)
	}
	if refused != withinLimits {
		e.load.refuse(w, refused)
		return
	}
	defer release()
	body, ok := e.readBody(w, r)
	if !ok {
		return
	}
	msg := parseMessage(body)
	if answerOnly && !msg.isResponse() {
		e.load.refuse(w, tooManyRequests)
		return
	}
	// An initialize starts a new session whatever id came with it, so a
	// client that switched accounts is never refused its first request.
	if verdict == sessionForeign && msg.Method != string(mcp.MethodInitialize) {
		// 404 is the transport spec's word for "start a new session", which
		// is what such a client needs; it carries no hint of whose id it was.
		jsonRPCError(w, http.StatusNotFound, -32001, "This session id belongs to another sign-in. "+
			"Start a new session: send initialize without Mcp-Session-Id (or send requests without it).")
		return
	}
	switch {
	case msg.Method == methodCancelled:
		// The library would key it by a session id it does not have.
		e.calls.cancel(callKey(u.ID, sess.id, msg.Params.RequestID))
		w.WriteHeader(http.StatusAccepted)
	case msg.isResponse():
		e.deliverAnswer(w, r, u.ID, sess, msg, body)
	case e.files != nil && e.files.serve(r.Context(), w, msg, body):
	default:
		e.forward(w, r, u.ID, sess, msg, body)
	}
}

// heldBytes is what a request's body will hold at most: its announced
// length, or the largest body when it announces none.
func (e *mcpEndpoint) heldBytes(r *http.Request) int64 {
	if r.ContentLength >= 0 {
		return r.ContentLength
	}
	return e.maxBody
}

// forward hands an admitted message to the MCP library, as the library
// should see it: no client session id, a mended version header, a
// context this layer can cancel and that tells a tool whether it may ask
// its user; and, for a call that may ask on its event stream, a session
// id of that call's own (answerRoutes).
func (e *mcpEndpoint) forward(w http.ResponseWriter, r *http.Request, userID string, sess session, msg message, body []byte) {
	header := r.Header.Clone()
	header.Del("Mcp-Session-Id")
	tolerateProtocolHeader(header, msg)
	modern := msg.modern(header)
	ctx := r.Context()
	if msg.isRequest() {
		var done func()
		ctx, done = e.calls.track(ctx, callKey(userID, sess.id, msg.ID))
		defer done()
	}
	out := &libWriter{w: w, stream: acceptsEventStream(r.Header.Values("Accept"))}
	declaredFiles := false
	if msg.Method == string(mcp.MethodInitialize) && !modern {
		info := readInitialize(body)
		declaredFiles = info.files
		w.Header().Set("Mcp-Session-Id", e.ids.mint(userID, info.flags))
	}
	if e.files != nil {
		out.amend = e.files.amend(msg, declaredFiles)
	}
	stream := false
	if msg.Method == string(mcp.MethodToolsCall) && !modern && sess.flags&flagElicitForm != 0 && out.CanStream() {
		route := e.answers.begin(userID, sess.id)
		defer route.end()
		header.Set("Mcp-Session-Id", route.key)
		out.sent = route.expect
		stream = true
	}
	ctx = e.asker.For(ctx, userID, stream)
	// A 2026-07-28 request says itself whether its client renders views.
	ctx = views.WithRenders(ctx, !modern && sess.flags&flagRendersViews != 0)
	e.lib.Handle(out, &mcpserver.HTTPRequest{Method: http.MethodPost, URL: r.URL, Header: header, Body: body, Context: ctx})
	out.finish()
}

// deliverAnswer hands a client's answer (a JSON-RPC response) to the call
// of this user and session that asked for it.
func (e *mcpEndpoint) deliverAnswer(w http.ResponseWriter, r *http.Request, userID string, sess session, msg message, body []byte) {
	key, ok := e.answers.lookup(userID, sess.id, msg.ID)
	if ok {
		header := r.Header.Clone()
		header.Set("Mcp-Session-Id", key)
		tolerateProtocolHeader(header, msg)
		took := &statusOnly{header: http.Header{}}
		e.lib.Handle(took, &mcpserver.HTTPRequest{Method: http.MethodPost, URL: r.URL, Header: header, Body: body, Context: r.Context()})
		if took.status == http.StatusAccepted {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		// The call ended between the lookup and the handing over.
	}
	e.logger.InfoContext(r.Context(), "mcp: an answer found no call waiting for it", "user", userID, "session", sess.id != "")
	// The error carries the answer's id: a client that reads it (the
	// go-sdk) keeps its session, where a plain 400 ends it.
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{
		"code": -32600,
		"message": "No call of yours on this server is waiting for this answer: it ended (its wait for the answer is bounded), " +
			"or it is running on another server of this deployment. Nothing was done with the answer; call the tool again.",
	}})
}

// statusOnly takes the library's answer to a client's answer: only
// whether it was accepted matters.
type statusOnly struct {
	header http.Header
	status int
}

func (s *statusOnly) Header() http.Header { return s.header }
func (s *statusOnly) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
}
func (s *statusOnly) Write(b []byte) (int, error) { s.WriteHeader(http.StatusOK); return len(b), nil }
func (s *statusOnly) Flush()                      {}
func (s *statusOnly) CanStream() bool             { return false }

// readBody reads an MCP request body whole (the library needs it so), at
// most maxBody bytes within bodyTimeout. Its refusals close the connection.
func (e *mcpEndpoint) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	// Not every connection supports deadlines (test recorders); then the
	// server's own timeouts apply.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(e.bodyTimeout))
	body, err := readAtMost(r.Body, r.ContentLength, e.maxBody)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		jsonRPCError(w, http.StatusRequestTimeout, -32600, fmt.Sprintf("The request body took longer than %s to arrive. Send it again.", e.bodyTimeout))
		return nil, false
	case err != nil:
		w.Header().Set("Connection", "close")
		jsonRPCError(w, http.StatusBadRequest, -32700, "The request body could not be read (the connection broke off). Send it again.")
		return nil, false
	case int64(len(body)) > e.maxBody:
		tooLarge(w, e.maxBody)
		return nil, false
	}
	return body, true
}

// methodNotAllowed answers every method but POST. drivemail has no
// listening stream (GET): progress travels on each call's own response,
// and a stream held on one replica could not carry what another replica
// does anyway. Nor is there a session to end (DELETE).
func methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", http.MethodPost)
	msg := "The MCP endpoint takes POST requests (JSON-RPC)."
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		msg = "drivemail offers no listening stream: send requests with POST; a call's progress comes on its own response."
	case http.MethodDelete:
		msg = "drivemail keeps no session state, so there is no session to end; just stop using the session id."
	}
	http.Error(w, msg, http.StatusMethodNotAllowed)
}

// message is what this layer reads of a JSON-RPC message.
type message struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	Params struct {
		Meta      map[string]json.RawMessage `json:"_meta"`
		RequestID json.RawMessage            `json:"requestId"`
	} `json:"params"`
}

// parseMessage reads body's method, id and _meta; anything unreadable
// (a batch, broken JSON) yields an empty message, left to the library to
// answer.
func parseMessage(body []byte) message {
	var m message
	if json.Unmarshal(body, &m) != nil {
		return message{}
	}
	return m
}

func (m message) isRequest() bool {
	return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null"
}

// isResponse reports whether m answers a request the server sent.
func (m message) isResponse() bool {
	return m.Method == "" && len(m.ID) > 0 && string(m.ID) != "null" && (len(m.Result) > 0 || len(m.Error) > 0)
}

// initializeInfo is what this layer reads of an initialize request.
type initializeInfo struct {
	flags sessionFlags // what its session id will carry
	files bool         // it declares the file-transfer draft's capability
}

func readInitialize(body []byte) initializeInfo {
	var req struct {
		Params struct {
			ProtocolVersion string                     `json:"protocolVersion"`
			Capabilities    map[string]json.RawMessage `json:"capabilities"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil {
		return initializeInfo{}
	}
	var info initializeInfo
	info.files = isObject(req.Params.Capabilities["files"])
	var elicit struct {
		Form, URL json.RawMessage
	}
	// Elicitation came with 2025-06-18; "elicitation": {} is form mode,
	// from before the modes had names.
	if v := req.Params.Capabilities["elicitation"]; isObject(v) && req.Params.ProtocolVersion >= "2025-06-18" &&
		json.Unmarshal(v, &elicit) == nil && (isObject(elicit.Form) || len(elicit.URL) == 0) {
		info.flags |= flagElicitForm
	}
	if views.DeclaresJSON(req.Params.Capabilities["extensions"]) {
		info.flags |= flagRendersViews
	}
	return info
}

func isObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}

// metaVersion is the protocol version a 2026-07-28 request states in _meta.
func (m message) metaVersion() string {
	var v string
	_ = json.Unmarshal(m.Params.Meta[mcp.MetaKeyProtocolVersion], &v)
	return v
}

// modernMeta reports whether the request carries any of the 2026-07-28
// per-request _meta fields; a legacy request carries none.
func (m message) modernMeta() bool {
	for k := range m.Params.Meta {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			return true
		}
	}
	return false
}

// modern reports whether the library will serve m as a 2026-07-28 request.
func (m message) modern(h http.Header) bool {
	return mcp.IsModernProtocol(h.Get(mcp.HeaderProtocolVersion)) || mcp.IsModernProtocol(m.metaVersion())
}

// tolerateProtocolHeader mends the MCP-Protocol-Version mismatches clients
// were seen sending during the 2026-07-28 rollout, which the library would
// answer 400:
//   - a 2026-07-28 header on a request with no 2026-07-28 _meta, from a
//     session negotiated at an earlier version (SparkyFitness #2155): the
//     body says it is a legacy request, so the header is dropped;
//   - a legacy version in the header of a request whose _meta says
//     2026-07-28 (claude-code #93290): the body's version wins.
//
// Where both name 2026-07-28 or later and differ, or a server/discover
// probe lacks its _meta, the library's 400 stands: that is a client bug
// the spec defines an answer for, and clients fall back on a 400.
func tolerateProtocolHeader(h http.Header, m message) {
	header := h.Get(mcp.HeaderProtocolVersion)
	meta := m.metaVersion()
	switch {
	case mcp.IsModernProtocol(header) && !m.modernMeta() && m.Method != string(mcp.MethodServerDiscover):
		h.Del(mcp.HeaderProtocolVersion)
	case mcp.IsModernProtocol(meta) && mcp.IsValidProtocolVersion(header) && !mcp.IsModernProtocol(header):
		h.Set(mcp.HeaderProtocolVersion, meta)
	}
}

// acceptsEventStream reports whether the client's Accept allows an event
// stream. One that accepts only JSON gets one JSON response (progress
// notifications, which need a stream, are then left out).
func acceptsEventStream(accept []string) bool {
	for _, v := range accept {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			switch mt {
			case "text/event-stream", "text/*", "*/*":
				return true
			}
		}
	}
	return false
}

// jsonRPCError answers with a JSON-RPC error that has no id (the request
// was not read, or not understood).
func jsonRPCError(w http.ResponseWriter, status, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": message},
	})
}
