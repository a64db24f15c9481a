package core

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Fault is one injected failure rule, matched by method and path prefix.
// It applies to the next Times matching requests (0 means once).
type Fault struct {
	// Method limits the rule to one HTTP method; empty matches any.
	Method string `json:"method,omitempty"`
	// PathPrefix selects requests whose URL path starts with it.
	PathPrefix string `json:"path_prefix"`
	// Times is how many matching requests the rule affects (default 1).
	Times int `json:"times,omitempty"`
	// Status, when set, answers the request with a Google-shaped error of
	// this code instead of handling it.
	Status int `json:"status,omitempty"`
	// Reason and Message, with Status only, are the error's reason (such
	// as "cannotDownloadAbusiveFile") and message; by default a reason
	// for the code and "Injected fault: <status text>".
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// CutResponseAfter, when set, lets the handler run but closes the
	// connection after that many response body bytes.
	CutResponseAfter *int64 `json:"cut_response_after,omitempty"`
	// CutRequestAfter, when set, reads that many request body bytes and then
	// closes the connection without answering.
	CutRequestAfter *int64 `json:"cut_request_after,omitempty"`
	// Delay is added before the request is handled (Go duration string in JSON, e.g. "250ms").
	Delay Duration `json:"delay,omitempty"`
	// ServiceDisabled answers Google's "API not enabled" error (403
	// SERVICE_DISABLED, see ServiceDisabled) of the API the path belongs
	// to, as if the project had not enabled it. Switches turns an API off
	// for good instead.
	ServiceDisabled bool `json:"service_disabled,omitempty"`
	// SignInPage answers 200 text/html with a Google sign-in page instead
	// of handling the request: what Google's web endpoints send when the
	// credentials do not reach the file, and what a client that does not
	// check the Content-Type would attach as the file.
	SignInPage bool `json:"sign_in_page,omitempty"`
	// EndSession, with a 408 or 429 Status on a resumable session URL,
	// also ends the session (any other 4xx always does, as Google's
	// resumable-upload guide says; see EndsUploadSession).
	EndSession bool `json:"end_session,omitempty"`
}

// Duration is a time.Duration that reads and writes JSON as "250ms".
type Duration time.Duration

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Duration(d).String() + `"`), nil
}

// UnmarshalJSON reads a Go duration string such as "250ms".
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*d = 0
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return errors.New(`delay: want a duration such as "250ms"`)
	}
	*d = Duration(v)
	return nil
}

// MaxFaults bounds the pending rules, so a runaway test cannot grow the
// list without end.
const MaxFaults = 1000

// Faults holds the pending fault rules.
type Faults struct {
	// Project names the Google Cloud project of a request's OAuth client
	// for ServiceDisabled faults; nil uses ProjectNumber("").
	Project func(*http.Request) string
	// Uploads records the resumable sessions an injected 4xx ended; nil
	// records none.
	Uploads *EndedUploads

	mu    sync.Mutex
	rules []*Fault
}

// Add queues a rule.
func (f *Faults) Add(r Fault) error {
	if r.PathPrefix == "" || r.PathPrefix[0] != '/' {
		return errors.New("path_prefix must start with /")
	}
	if r.Status == 0 && r.CutResponseAfter == nil && r.CutRequestAfter == nil && r.Delay == 0 && !r.ServiceDisabled && !r.SignInPage {
		return errors.New("a fault needs status, service_disabled, sign_in_page, cut_response_after, cut_request_after or delay")
	}
	if r.SignInPage && (r.ServiceDisabled || r.Status != 0 || r.CutResponseAfter != nil || r.CutRequestAfter != nil) {
		return errors.New("sign_in_page answers the request itself: leave out status, service_disabled and the cuts")
	}
	if r.ServiceDisabled {
		if r.Status != 0 || r.CutResponseAfter != nil || r.CutRequestAfter != nil {
			return errors.New("service_disabled answers the request itself: leave out status and the cuts")
		}
		if _, ok := APIOf(r.PathPrefix); !ok {
			return errors.New("service_disabled needs a path_prefix inside one API, such as /drive/v3/, /gmail/v1/ or /v4/spreadsheets")
		}
	}
	if r.Status != 0 && (r.Status < 400 || r.Status > 599) {
		return errors.New("status must be an HTTP error code (400-599)")
	}
	if err := checkReason(r); err != nil {
		return err
	}
	if r.EndSession && r.Status != http.StatusRequestTimeout && r.Status != http.StatusTooManyRequests {
		return errors.New("end_session goes with status 408 or 429: every other 4xx ends a resumable session anyway, and a 5xx never does")
	}
	if r.Times < 0 || r.Delay < 0 || (r.CutResponseAfter != nil && *r.CutResponseAfter < 0) ||
		(r.CutRequestAfter != nil && *r.CutRequestAfter < 0) {
		return errors.New("times, delay, cut_response_after and cut_request_after must not be negative")
	}
	if r.Times == 0 {
		r.Times = 1
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.rules) >= MaxFaults {
		return fmt.Errorf("%d fault rules are pending already: clear them with DELETE /_emulator/faults first", MaxFaults)
	}
	f.rules = append(f.rules, &r)
	return nil
}

// Clear drops every pending rule.
func (f *Faults) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

// Pending lists the rules not yet used up.
func (f *Faults) Pending() []Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Fault, 0, len(f.rules))
	for _, r := range f.rules {
		out = append(out, *r)
	}
	return out
}

// take consumes one use of the first rule matching r.
func (f *Faults) take(r *http.Request) (Fault, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, rule := range f.rules {
		if rule.Method != "" && !strings.EqualFold(rule.Method, r.Method) {
			continue
		}
		if !strings.HasPrefix(r.URL.Path, rule.PathPrefix) {
			continue
		}
		rule.Times--
		got := *rule
		if rule.Times <= 0 {
			f.rules = append(f.rules[:i], f.rules[i+1:]...)
		}
		return got, true
	}
	return Fault{}, false
}

// Middleware applies pending faults to matching requests. Paths under
// /_emulator/ are never faulted, so a test can always reach its controls.
func (f *Faults) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/_emulator/") {
			next.ServeHTTP(w, r)
			return
		}
		rule, ok := f.take(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if rule.Delay > 0 {
			var gone <-chan struct{}
			if hasBody(r) {
				p := newBodyPump(r.Body)
				defer p.Close()
				r.Body, gone = p, p.broken
			}
			if !sleep(r.Context(), time.Duration(rule.Delay), gone) {
				return
			}
		}
		if answersInPlace(rule) {
			drainBody(w, r)
			if rule.Status != 0 && (EndsUploadSession(rule.Status) || rule.EndSession) {
				f.Uploads.End(r.URL.Query().Get("upload_id"))
			}
		}
		switch {
		case rule.CutRequestAfter != nil:
			_, _ = io.CopyN(io.Discard, r.Body, *rule.CutRequestAfter)
			resetConnection(w)
			// ErrAbortHandler makes net/http drop the connection without a response.
			panic(http.ErrAbortHandler)
		case rule.SignInPage:
			WriteSignInPage(w, r.URL.String())
		case rule.ServiceDisabled:
			api, _ := APIOf(r.URL.Path)
			WriteErrorBody(w, ServiceDisabled(api, f.project(r)))
		case rule.Status != 0:
			WriteError(w, rule.Status, rule.errorReason(), rule.errorMessage())
		case rule.CutResponseAfter != nil:
			next.ServeHTTP(&cuttingWriter{ResponseWriter: w, left: *rule.CutResponseAfter}, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// answersInPlace reports whether rule answers the request itself,
// without the handler that would have read its body.
func answersInPlace(rule Fault) bool {
	return rule.CutRequestAfter == nil && rule.CutResponseAfter == nil &&
		(rule.Status != 0 || rule.ServiceDisabled || rule.SignInPage)
}

// maxDrain bounds the request body read before an injected answer: past
// Gmail's largest upload (36,700,160 bytes) and google-api-python-client's
// 100 MiB chunks. A longer body is left unread and the connection closed.
const maxDrain = 128 << 20

// drainBody reads the request's body (up to maxDrain) before an answer
// that does not need it, as Google's front end does: a client that sends
// its whole body before it reads the answer (Python's http.client) would
// otherwise meet a closed connection mid-body, or wait for its timeout.
func drainBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	n, _ := io.CopyN(io.Discard, r.Body, maxDrain+1)
	if n > maxDrain {
		w.Header().Set("Connection", "close")
	}
}

// project is the project a ServiceDisabled fault names.
func (f *Faults) project(r *http.Request) string {
	if f.Project != nil {
		return f.Project(r)
	}
	return ProjectNumber("")
}

// resetConnection closes the client's connection with a TCP reset, the
// way a network failure looks ("connection reset by peer", which Google's
// clients retry), rather than an orderly close they read as a bare EOF.
func resetConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// Bounds of a fault's reason and message: Google's reasons are short
// camelCase words, and a message is a sentence.
const (
	maxReasonLen  = 64
	maxMessageLen = 300
)

// checkReason refuses a reason or message without a status, a reason
// that is not a word of letters and digits, and a message too long or
// with control characters.
func checkReason(r Fault) error {
	if r.Status == 0 && (r.Reason != "" || r.Message != "") {
		return errors.New("reason and message need a status")
	}
	if len(r.Reason) > maxReasonLen {
		return fmt.Errorf("reason must be at most %d characters", maxReasonLen)
	}
	for i, c := range r.Reason {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return errors.New(`reason must be letters and digits, starting with a letter, such as "cannotDownloadAbusiveFile"`)
		}
	}
	if utf8.RuneCountInString(r.Message) > maxMessageLen {
		return fmt.Errorf("message must be at most %d characters", maxMessageLen)
	}
	if !utf8.ValidString(r.Message) || strings.IndexFunc(r.Message, unicode.IsControl) >= 0 {
		return errors.New("message must be UTF-8 text without control characters")
	}
	return nil
}

// errorReason is the reason of the rule's Google error.
func (r Fault) errorReason() string {
	if r.Reason != "" {
		return r.Reason
	}
	return reasonFor(r.Status)
}

// errorMessage is the message of the rule's Google error.
func (r Fault) errorMessage() string {
	if r.Message != "" {
		return r.Message
	}
	return "Injected fault: " + http.StatusText(r.Status)
}

func reasonFor(code int) string {
	switch code {
	case 429:
		return "rateLimitExceeded"
	case 500:
		return "backendError"
	case 503:
		return "backendError"
	case 403:
		return "forbidden"
	case 404:
		return "notFound"
	default:
		return "injectedFault"
	}
}

// cuttingWriter passes through left bytes of body and then aborts the connection.
type cuttingWriter struct {
	http.ResponseWriter
	left int64
}

func (c *cuttingWriter) Write(p []byte) (int, error) {
	if int64(len(p)) <= c.left {
		c.left -= int64(len(p))
		return c.ResponseWriter.Write(p)
	}
	n, _ := c.ResponseWriter.Write(p[:c.left])
	c.left = 0
	if fl, ok := c.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
	_ = n
	panic(http.ErrAbortHandler)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (c *cuttingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
