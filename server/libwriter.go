package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// libWriter is what the MCP library writes one request's answer through
// (its HTTPResponseWriter). It decides whether the answer may be an
// event stream, holds an answer back when the file-transfer draft must
// amend it, and tells the transport of each request the library sends
// the client on the stream before it goes out, so its answer finds the
// call (answerRoutes).
type libWriter struct {
	w http.ResponseWriter
	// stream: the client accepts an event stream. Without it the library
	// answers with one JSON body (progress, which needs a stream, is then
	// left out).
	stream bool
	// amend, when set, changes a successful result before it goes out; the
	// answer is then held back whole, always as one JSON body.
	amend  func(result map[string]json.RawMessage)
	status int
	held   bytes.Buffer
	// sent, when set, is told the JSON-RPC id of every request the library
	// sends on the stream.
	sent func(id json.RawMessage)
}

func (l *libWriter) Header() http.Header { return l.w.Header() }

func (l *libWriter) WriteHeader(status int) {
	if l.amend == nil {
		l.w.WriteHeader(status)
		return
	}
	if l.status == 0 {
		l.status = status
	}
}

func (l *libWriter) Write(b []byte) (int, error) {
	if l.amend != nil {
		l.WriteHeader(http.StatusOK)
		return l.held.Write(b)
	}
	if l.sent != nil {
		if id, ok := streamedRequestID(b); ok {
			l.sent(id)
		}
	}
	return l.w.Write(b)
}

func (l *libWriter) Flush() {
	if l.CanStream() {
		_ = http.NewResponseController(l.w).Flush()
	}
}

func (l *libWriter) CanStream() bool { return l.stream && l.amend == nil }

// sseRequestPrefix starts every event the library writes on a stream,
// one Write each.
const sseRequestPrefix = "event: message\ndata: "

// streamedRequestID reads the id of a JSON-RPC request written as one
// event; notifications and the final response have none to report.
func streamedRequestID(event []byte) (json.RawMessage, bool) {
	data, ok := bytes.CutPrefix(event, []byte(sseRequestPrefix))
	if !ok {
		return nil, false
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(bytes.TrimSpace(data), &m) != nil || m.Method == "" || len(m.ID) == 0 {
		return nil, false
	}
	return m.ID, true
}

// finish sends a held answer, its successful JSON-RPC result amended;
// anything else goes out as the library wrote it.
func (l *libWriter) finish() {
	if l.amend == nil {
		return
	}
	if l.status == 0 {
		l.status = http.StatusOK
	}
	body := l.held.Bytes()
	if l.status == http.StatusOK && strings.HasPrefix(l.Header().Get("Content-Type"), "application/json") {
		var resp map[string]json.RawMessage
		var result map[string]json.RawMessage
		if json.Unmarshal(body, &resp) == nil && json.Unmarshal(resp["result"], &result) == nil && result != nil {
			l.amend(result)
			if b, err := json.Marshal(result); err == nil {
				resp["result"] = b
				if out, err := json.Marshal(resp); err == nil {
					body = append(out, '\n')
				}
			}
		}
	}
	l.w.Header().Del("Content-Length")
	l.w.WriteHeader(l.status)
	_, _ = l.w.Write(body)
}
