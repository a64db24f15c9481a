package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// libWriter is what the MCP library writes one request's answer through
// (its HTTPResponseWriter). It decides whether the answer may be an
// event stream, and holds an answer back when the file-transfer draft
// must amend it.
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
	return l.w.Write(b)
}

func (l *libWriter) Flush() {
	if l.CanStream() {
		_ = http.NewResponseController(l.w).Flush()
	}
}

func (l *libWriter) CanStream() bool { return l.stream && l.amend == nil }

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
