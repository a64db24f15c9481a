package media

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/internal/memnet"
)

// uploadPath is where the harness mounts its endpoint: Gmail's send path,
// so the real gmail/v1 client can drive it.
const uploadPath = "/upload/gmail/v1/users/{userId}/messages/send"

// harness serves one upload endpoint that records what it finishes.
type harness struct {
	t      *testing.T
	srv    *httptest.Server
	hc     *http.Client // reaches srv
	deps   core.Deps
	faults *core.Faults
	token  string

	mu       sync.Mutex
	now      time.Time
	finished []finishedUpload
}

type finishedUpload struct {
	Upload
	content []byte
}

type harnessOptions struct {
	maxSize int64
	accept  []string
	opts    Options
	admit   func(context.Context, Upload) (Result, bool)
}

func newHarness(t *testing.T, ho harnessOptions) *harness {
	t.Helper()
	return startHarness(t, nil, ho)
}

// newBubbleHarness is newHarness for a test inside a testing/synctest
// bubble (call it there): served on an in-memory network, where the
// server's pause before closing a connection whose body it refused
// (half a second in net/http) passes at once.
func newBubbleHarness(t *testing.T, ho harnessOptions) *harness {
	t.Helper()
	return startHarness(t, memnet.New(), ho)
}

// inBubble is test run inside a testing/synctest bubble, for t.Run or as
// a test's whole body: its harness comes from newBubbleHarness.
func inBubble(test func(t *testing.T)) func(t *testing.T) {
	return func(t *testing.T) { synctest.Test(t, test) }
}

// startHarness is newHarness on network n, or on loopback when n is nil.
func startHarness(t *testing.T, n *memnet.Network, ho harnessOptions) *harness {
	t.Helper()
	ended := &core.EndedUploads{}
	h := &harness{t: t, faults: &core.Faults{Uploads: ended}, now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	blobs, err := core.NewBlobs("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = blobs.Close() })
	h.deps = core.Deps{
		Accounts: core.NewAccounts(365*24*time.Hour, h.clock),
		Blobs:    blobs,
		Stats:    core.NewStats(),
		Now:      h.clock,
		Uploads:  ended,
	}
	h.token = h.deps.Accounts.IssueAccess("ann@example.com", "test", []string{"scope.send"})
	s := New(h.deps, ho.opts)
	ep := Endpoint{
		MaxSize: ho.maxSize,
		Accept:  ho.accept,
		Authorize: func(w http.ResponseWriter, r *http.Request) (core.Token, bool) {
			tok, ok := h.deps.Accounts.Authenticate(w, r)
			if !ok || !core.RequireScope(w, tok, "scope.send") {
				return core.Token{}, false
			}
			return tok, true
		},
		Finish: h.finish,
		Admit:  ho.admit,
	}
	mux := http.NewServeMux()
	mux.Handle(uploadPath, s.Handler(ep))
	mux.Handle("/upload/gmail/v1/users/{userId}/drafts", s.Handler(ep))
	if n != nil {
		h.srv, h.hc = n.Serve(t, h.faults.Middleware(mux))
		return h
	}
	h.srv = httptest.NewServer(h.faults.Middleware(mux))
	h.hc = h.srv.Client()
	t.Cleanup(h.srv.Close)
	return h
}

func (h *harness) clock() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now
}

func (h *harness) advance(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now = h.now.Add(d)
}

// finish records the upload and answers with its blob's id and size.
func (h *harness) finish(_ context.Context, up Upload) Result {
	content, err := h.deps.Blobs.ReadAll(up.Blob.ID)
	if err != nil {
		return ErrorResult(500, "backendError", err.Error())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.finished = append(h.finished, finishedUpload{Upload: up, content: content})
	return Result{Status: http.StatusOK, Body: map[string]any{"id": up.Blob.ID, "size": up.Blob.Size, "n": len(h.finished)}}
}

func (h *harness) uploads() []finishedUpload {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]finishedUpload(nil), h.finished...)
}

// url is the upload URL for userId "me" with the given query.
func (h *harness) url(query string) string {
	return h.srv.URL + "/upload/gmail/v1/users/me/messages/send?" + query
}

// do sends one request with the bearer token and returns status, headers and body.
func (h *harness) do(method, url string, header map[string]string, body []byte) (int, http.Header, []byte) {
	h.t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// open starts a resumable session and returns its URL.
func (h *harness) open(header map[string]string, metadata string) string {
	h.t.Helper()
	hdr := map[string]string{"Content-Type": "application/json; charset=UTF-8", "X-Upload-Content-Type": "message/rfc822"}
	for k, v := range header {
		hdr[k] = v
	}
	code, hd, body := h.do("POST", h.url("uploadType=resumable"), hdr, []byte(metadata))
	if code != http.StatusOK {
		h.t.Fatalf("open session: %d %s", code, body)
	}
	loc := hd.Get("Location")
	if !strings.HasPrefix(loc, h.srv.URL+"/upload/gmail/v1/users/me/messages/send?") || !strings.Contains(loc, "upload_id=") {
		h.t.Fatalf("Location %q: want an absolute URL on %s with an upload_id", loc, h.srv.URL)
	}
	return loc
}

// googleReason returns the first reason of a Google error body.
func googleReason(t *testing.T, body []byte) string {
	t.Helper()
	var e core.ErrorBody
	if err := json.Unmarshal(body, &e); err != nil || len(e.Error.Errors) == 0 {
		t.Fatalf("not a Google error body: %s", body)
	}
	return e.Error.Errors[0].Reason
}

// pattern returns n deterministic bytes that differ at every offset mod 251.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}
