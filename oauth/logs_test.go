package oauth_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// requestMark stands for what the server puts in a request's context (its
// request id), which a log line gets only when logged with that context.
type requestMark struct{}

// markedLogs is a slog handler that writes text lines and notes the
// messages logged without a request's context.
type markedLogs struct {
	slog.Handler
	rec *logRecord
}

type logRecord struct {
	mu       sync.Mutex
	text     bytes.Buffer
	unmarked []string
}

func (l *logRecord) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.Write(p)
}

func (l *logRecord) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.String()
}

func (h markedLogs) Handle(ctx context.Context, r slog.Record) error {
	if ctx.Value(requestMark{}) == nil {
		h.rec.mu.Lock()
		h.rec.unmarked = append(h.rec.unmarked, r.Message)
		h.rec.mu.Unlock()
	}
	return h.Handler.Handle(ctx, r)
}

func (h markedLogs) WithAttrs(a []slog.Attr) slog.Handler {
	return markedLogs{h.Handler.WithAttrs(a), h.rec}
}

func (h markedLogs) WithGroup(name string) slog.Handler {
	return markedLogs{h.Handler.WithGroup(name), h.rec}
}

// TestLogLinesCarryTheRequest: every line the authorization server logs
// while serving a request is logged with that request's context (so the
// server's handler adds its request id), and names no text a caller chose.
func TestLogLinesCarryTheRequest(t *testing.T) {
	rec := &logRecord{}
	h := newHarness(t, options{logger: slog.New(markedLogs{slog.NewTextHandler(rec, nil), rec})})
	h.setFront(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestMark{}, true)))
	}))

	h.authorize() // client registered, user authorized a client

	a := h.newAuthRequest(h.publicClient())
	code := h.codeFor(a)
	h.exchange(a, code)
	h.exchange(a, code) // authorization code reused; grant revoked

	b := newBrowser(t)
	cb := toCallback(t, h, b, h.newAuthRequest(a.clientID))
	q := cb.Query()
	q.Del("code")
	q.Set("error", "SECRET-chosen-text")
	cb.RawQuery = q.Encode()
	b.get(cb.String()) // Google refused the authorization

	b = newBrowser(t)
	cb = toCallback(t, h, b, h.newAuthRequest(a.clientID))
	q = cb.Query()
	q.Set("code", "4/forged")
	cb.RawQuery = q.Encode()
	b.get(cb.String()) // Google sign-in failed

	logs := rec.String()
	for _, msg := range []string{"client registered", "user authorized a client", "authorization code reused",
		"Google refused the authorization", "Google sign-in failed"} {
		if !strings.Contains(logs, msg) {
			t.Errorf("no %q line:\n%s", msg, logs)
		}
	}
	rec.mu.Lock()
	if len(rec.unmarked) > 0 {
		t.Errorf("logged without the request's context: %q", rec.unmarked)
	}
	rec.mu.Unlock()
	if !strings.Contains(logs, "google_error=other") || strings.Contains(logs, "SECRET") {
		t.Errorf("an unknown Google error should be logged as other, never as sent:\n%s", logs)
	}
}
