package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// Request bodies are where a slow client holds a connection: net/http puts
// no deadline on them, and after a handler answers it reads up to 256 KiB
// of whatever body is left before it reuses the connection. So every body
// gets a read deadline, and what a handler leaves unread (a stranger's
// body behind a 401, any refusal's) is never read at all.
const (
	// DefaultBodyTimeout is how long any request body may take to arrive
	// (the OAuth forms are a few hundred bytes).
	DefaultBodyTimeout = 10 * time.Second
	// DefaultMCPBodyTimeout is how long an MCP request body (up to 4 MiB,
	// from a signed-in client) may take to arrive.
	DefaultMCPBodyTimeout = 30 * time.Second
)

// bodyDeadline puts a read deadline of d on every request body. Once the
// body has been read to its end the deadline is lifted: net/http then
// watches the connection for the client going away, and a deadline left
// there would cancel a request that is still working (a send streaming to
// Gmail). Handlers that allow longer (uploads pace themselves, MCP bodies
// have their own limit) move the deadline themselves. A body the handler
// did not read to its end is abandoned when the handler returns: the
// connection closes after the answer instead of waiting for the rest,
// lingering only on a small rest (lingerOnUnreadBody).
func bodyDeadline(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !hasBody(r) {
				next.ServeHTTP(w, r)
				return
			}
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(d)) != nil {
				next.ServeHTTP(w, r) // no deadlines here (a test recorder)
				return
			}
			body := &liftAtEOF{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
			length := r.ContentLength
			r = r.WithContext(r.Context())
			r.Body = body
			next.ServeHTTP(&closeUnlessRead{ResponseWriter: w, body: body}, r)
			if !body.atEOF.Load() {
				lingerOnUnreadBody(rc, body, length)
			}
		})
	}
}

// What is read, after the answer, of a body the handler left unread. A
// client that writes its whole body before it reads the answer (any that
// sends no "Expect: 100-continue", Go's own among them) would otherwise
// meet a connection reset under its write and never see the refusal. The
// answer goes out first, so no one waits for it; then at most lingerBytes
// are read and dropped, for at most lingerTime, and the connection closes.
// A body with more than that still to come is not waited for at all.
const (
	lingerBytes = 256 << 10
	lingerTime  = time.Second
)

// lingerOnUnreadBody sends the answer, then reads what may remain of a
// body of length bytes (-1 when unknown) within lingerBytes and
// lingerTime. The answer said "Connection: close" (closeUnlessRead), so
// net/http ends the connection after it, reading nothing more itself.
func lingerOnUnreadBody(rc *http.ResponseController, body *liftAtEOF, length int64) {
	_ = rc.SetReadDeadline(time.Now().Add(lingerTime))
	_ = rc.Flush()
	if length < 0 || length-body.read.Load() <= lingerBytes {
		_, _ = io.CopyBuffer(io.Discard, io.LimitReader(body, lingerBytes), make([]byte, 4<<10))
	}
	_ = rc.SetReadDeadline(time.Now())
}

// closeUnlessRead marks an answer begun before its request's body was
// read to the end "Connection: close": the rest of that body is not
// waited for, so the connection cannot carry another request. It keeps
// Flush (server-sent events) and Unwrap (http.ResponseController).
type closeUnlessRead struct {
	http.ResponseWriter
	body    *liftAtEOF
	started bool
}

func (w *closeUnlessRead) WriteHeader(code int) {
	if !w.started && code >= 200 {
		w.started = true
		if !w.body.atEOF.Load() {
			w.Header().Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *closeUnlessRead) Write(p []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

func (w *closeUnlessRead) Flush() {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *closeUnlessRead) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func hasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// liftAtEOF runs lift once, when the body it wraps reaches its end, and
// counts the bytes read.
type liftAtEOF struct {
	io.ReadCloser
	atEOF atomic.Bool
	read  atomic.Int64
	lift  func()
}

func (b *liftAtEOF) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read.Add(int64(n))
	if err == io.EOF && !b.atEOF.Swap(true) {
		b.lift()
	}
	return n, err
}

// readSmallBody reads a body of at most limit bytes before the handler
// runs (under bodyDeadline's deadline), so a form handler never waits on a
// slow client: a body that does not arrive in time is answered 408, one
// that is too large 413, both closing the connection. The errors are
// OAuth-shaped JSON, as the routes it guards are the OAuth endpoints.
func readSmallBody(limit int64, timeout time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !hasBody(r) {
				next.ServeHTTP(w, r)
				return
			}
			if r.ContentLength > limit {
				bodyRefusal(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("The request body is larger than %d bytes.", limit))
				return
			}
			body, err := readAtMost(r.Body, r.ContentLength, limit)
			switch {
			case errors.Is(err, os.ErrDeadlineExceeded):
				bodyRefusal(w, http.StatusRequestTimeout, fmt.Sprintf("The request body took longer than %s to arrive. Send it again.", timeout))
				return
			case err != nil:
				bodyRefusal(w, http.StatusBadRequest, "The request body could not be read (the connection broke off). Send it again.")
				return
			case int64(len(body)) > limit:
				bodyRefusal(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("The request body is larger than %d bytes.", limit))
				return
			}
			r = r.WithContext(r.Context())
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			next.ServeHTTP(w, r)
		})
	}
}

func bodyRefusal(w http.ResponseWriter, status int, description string) {
	w.Header().Set("Connection", "close")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_request", "error_description": description})
}

// readAtMost reads a body of at most limit bytes (and one more, to tell a
// body over the limit). Memory follows the bytes that arrived, never the
// length announced: the buffer starts at firstBodyBuffer and doubles as
// it fills, up to the announced length, so a client that announces 4 MiB
// and sends a byte holds a few KiB, and a whole body costs at most twice
// its size while it grows.
func readAtMost(body io.Reader, length, limit int64) ([]byte, error) {
	most := limit + 1
	if length >= 0 && length <= limit {
		most = length
	}
	buf := make([]byte, 0, min(firstBodyBuffer, most))
	for int64(len(buf)) < most {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(2*int64(cap(buf)), most))
			copy(grown, buf)
			buf = grown
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF:
			return buf, nil
		case err != nil:
			return nil, err
		}
	}
	return buf, nil
}

// firstBodyBuffer is where a body's buffer starts: most MCP requests and
// every OAuth form fit.
const firstBodyBuffer = 8 << 10
