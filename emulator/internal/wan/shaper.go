package wan

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// Shaper applies the profile in force to the requests it wraps. Safe for
// concurrent use; a change applies to requests that arrive after it.
type Shaper struct {
	cur   atomic.Pointer[Profile]
	clock clock
}

// New returns a shaper applying p.
func New(p Profile) *Shaper {
	s := &Shaper{clock: realClock{}}
	s.Set(p)
	return s
}

// Profile returns the profile in force.
func (s *Shaper) Profile() Profile { return *s.cur.Load() }

// Set puts p in force.
func (s *Shaper) Set(p Profile) { s.cur.Store(&p) }

// Middleware shapes each request to an emulated API by its API's link:
// the request body is read at most at Up; the answer, once the handler
// has it ready (the handlers read the request body first), is held for
// Latency, plus TTFB for a download or Finish for an upload's last
// request; the response body is written at most at Down. Every wait ends
// when the request's context does (the client went away). Other paths,
// /_emulator/ among them, pass untouched, as does everything under the
// loopback profile.
func (s *Shaper) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api, ok := classify(r.URL.Path)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		link := s.Profile().Link(api)
		if link == (Link{}) {
			next.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		sw := &writer{ResponseWriter: w, ctx: ctx, clock: s.clock, link: link,
			download: isDownload(api, r), upload: isUpload(r.URL.Path)}
		if link.Up > 0 && r.Body != nil && r.Body != http.NoBody {
			r.Body = &reader{ReadCloser: r.Body, ctx: ctx, pace: newPacer(s.clock, link.Up)}
		}
		if link.Down > 0 {
			sw.pace = newPacer(s.clock, link.Down)
		}
		next.ServeHTTP(sw, r)
		if !sw.held {
			// The handler wrote nothing: net/http answers 200 once it returns.
			sw.hold(http.StatusOK)
		}
	})
}

// classify names the API a path belongs to, as Google's hosts split them.
// Export links (docs.google.com at Google) count as Drive.
func classify(path string) (API, bool) {
	for _, p := range []struct {
		prefix string
		api    API
	}{
		{"/drive/", Drive}, {"/upload/drive/", Drive}, {"/resumable/upload/drive/", Drive},
		{"/feeds/download/", Drive}, {"/spreadsheets/export", Drive},
		{"/gmail/", Gmail}, {"/upload/gmail/", Gmail}, {"/resumable/upload/gmail/", Gmail},
		{"/v4/spreadsheets", Sheets},
		{"/o/oauth2/", OAuth}, {"/oauth2/", OAuth}, {"/token", OAuth}, {"/revoke", OAuth},
	} {
		if strings.HasPrefix(path, p.prefix) {
			return p.api, true
		}
	}
	return 0, false
}

// isDownload reports whether r asks Drive for file content: alt=media,
// files.export, or an export link.
func isDownload(api API, r *http.Request) bool {
	if api != Drive || r.Method != http.MethodGet {
		return false
	}
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/feeds/download/"), strings.HasPrefix(p, "/spreadsheets/export"):
		return true
	case strings.HasPrefix(p, "/drive/v3/files/"):
		return strings.HasSuffix(p, "/export") || r.URL.Query().Get("alt") == "media"
	}
	return false
}

func isUpload(path string) bool {
	return strings.HasPrefix(path, "/upload/") || strings.HasPrefix(path, "/resumable/upload/")
}

// completesUpload reports whether an upload request's answer is its
// upload's last: a success that neither opens a resumable session (a
// Location) nor asks for the next chunk (a 308, or its override).
func completesUpload(code int, h http.Header) bool {
	return code >= 200 && code < 300 && h.Get("Location") == "" && h.Get("X-HTTP-Status-Code-Override") == ""
}

// writer holds the answer until the link's delays have passed and paces
// the body it writes.
type writer struct {
	http.ResponseWriter
	ctx      context.Context
	clock    clock
	link     Link
	download bool
	upload   bool
	pace     *pacer // nil when the response is not paced
	held     bool
	gone     error // the client went away while the answer was held
}

// hold waits until the answer to this request may leave, once: Google's
// time comes after the handler's own (an injected delay adds to it).
func (w *writer) hold(code int) {
	w.held = true
	wait := w.link.Latency
	if w.download && code >= 200 && code < 300 {
		wait += w.link.TTFB
	}
	if w.upload && completesUpload(code, w.Header()) {
		wait += w.link.Finish
	}
	w.gone = w.clock.Sleep(w.ctx, wait)
}

func (w *writer) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	if !w.held {
		w.hold(code)
	}
	if w.gone == nil {
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *writer) Write(b []byte) (int, error) {
	if !w.held {
		w.WriteHeader(http.StatusOK)
	}
	if w.gone != nil {
		return 0, w.gone
	}
	if w.pace == nil {
		return w.ResponseWriter.Write(b)
	}
	written := 0
	for len(b) > 0 {
		n := min(len(b), w.pace.piece)
		if err := w.pace.take(w.ctx, n); err != nil {
			return written, err
		}
		m, err := w.ResponseWriter.Write(b[:n])
		written += m
		if err != nil {
			return written, err
		}
		b = b[n:]
	}
	return written, nil
}

// Flush sends what is buffered, once the answer may leave.
func (w *writer) Flush() {
	if !w.held {
		w.WriteHeader(http.StatusOK)
	}
	if w.gone == nil {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (a fault that
// cuts it hijacks it).
func (w *writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// reader paces a request body. One goroutine reads it at a time, not
// always the handler's (a delay fault reads ahead).
type reader struct {
	io.ReadCloser
	ctx  context.Context
	pace *pacer
}

func (r *reader) Read(b []byte) (int, error) {
	if len(b) > r.pace.piece {
		b = b[:r.pace.piece]
	}
	n, err := r.ReadCloser.Read(b)
	if n > 0 {
		if perr := r.pace.take(r.ctx, n); perr != nil && err == nil {
			err = perr
		}
	}
	return n, err
}
