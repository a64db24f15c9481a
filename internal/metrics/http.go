package metrics

import (
	"io"
	"net/http"
	"strconv"
	"time"
)

// unmatchedRoute labels a request no route pattern matched (a redirect the
// mux made itself, for instance).
const unmatchedRoute = "unmatched"

// InstrumentHTTP counts and times every request by route pattern. Put it
// directly around the *http.ServeMux: the mux records the pattern it
// matched on the request it is given (Request.Pattern), and the label is
// read from there once the request is served, so it is always one of the
// server's own patterns, never a raw path.
func (m *Metrics) InstrumentHTTP(mux http.Handler) http.Handler {
	if m == nil {
		return mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		m.httpInFlight.Inc()
		sw := &StatusWriter{ResponseWriter: w}
		finished := false
		// Deferred, so a handler that panics (answered 500 further out)
		// is counted too; the panic goes on unrecovered.
		defer func() {
			m.httpInFlight.Dec()
			code := sw.Code()
			if !finished {
				code = http.StatusInternalServerError
			}
			route := r.Pattern
			if route == "" {
				route = unmatchedRoute
			}
			m.httpRequests.WithLabelValues(route, methodLabel(r.Method), strconv.Itoa(code)).Inc()
			m.httpDuration.WithLabelValues(route).Observe(time.Since(start).Seconds())
		}()
		mux.ServeHTTP(sw, r)
		finished = true
	})
}

// InstrumentUpload counts uploads through next by outcome, and the bytes
// read from their bodies. mode is "direct" (/upload) or "ticket"
// (/upload/<ticket>).
func (m *Metrics) InstrumentUpload(mode string, next http.Handler) http.Handler {
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &StatusWriter{ResponseWriter: w}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &countingBody{ReadCloser: r.Body, add: m.uploadBytes.Add}
		}
		next.ServeHTTP(sw, r)
		m.uploads.WithLabelValues(mode, uploadOutcome(sw.Code())).Inc()
	})
}

func uploadOutcome(code int) string {
	switch {
	case code >= 200 && code < 300:
		return "stored"
	case code >= 500:
		return "failed"
	default:
		return "refused"
	}
}

// methodLabel keeps the method label to the standard methods: a client
// can send any token as a method.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// StatusWriter records the status code and body size of the response
// written through it; the server's request log uses it too. It keeps
// Flush (server-sent events) and Unwrap (http.ResponseController) working.
type StatusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *StatusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *StatusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

func (w *StatusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Code is the status sent: 200 when the handler wrote nothing.
func (w *StatusWriter) Code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// Bytes is how many body bytes were written.
func (w *StatusWriter) Bytes() int64 { return w.bytes }

// countingBody adds the bytes read through it to a counter as they pass.
type countingBody struct {
	io.ReadCloser
	add func(float64)
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.add(float64(n))
	}
	return n, err
}
