package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	gmail "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

const chunk = googleapi.MinUploadChunkSize // 256 KiB keeps the tests fast

// bearer adds the token and, before the Nth chunk request (1-based), runs
// the hook registered for it: the way a test aims a fault at one chunk.
type bearer struct {
	base  http.RoundTripper
	token string
	mu    sync.Mutex
	n     int
	hooks map[int]func()
	last  string // the last session URL used
}

func (b *bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	if strings.Contains(r.URL.RawQuery, "upload_id=") {
		b.mu.Lock()
		b.n++
		b.last = r.URL.String()
		hook := b.hooks[b.n]
		b.mu.Unlock()
		if hook != nil {
			hook()
		}
	}
	return b.base.RoundTrip(r)
}

func (h *harness) gmailClient(t *testing.T, hooks map[int]func()) (*gmail.Service, *bearer) {
	t.Helper()
	b := &bearer{base: h.hc.Transport, token: h.token, hooks: hooks}
	svc, err := gmail.NewService(context.Background(), option.WithEndpoint(h.srv.URL+"/"), option.WithHTTPClient(&http.Client{Transport: b}))
	if err != nil {
		t.Fatal(err)
	}
	return svc, b
}

func (h *harness) send(t *testing.T, svc *gmail.Service, r io.Reader) (*gmail.Message, error) {
	t.Helper()
	return svc.Users.Messages.Send("me", &gmail.Message{ThreadId: "thread-9"}).
		Media(r, googleapi.ContentType("message/rfc822"), googleapi.ChunkSize(chunk)).
		Context(context.Background()).Do()
}

func TestRealClientMultipartAndResumable(t *testing.T) {
	for _, size := range []int{100, chunk - 1, chunk, 4 * chunk, 4*chunk + 17} {
		h := newHarness(t, harnessOptions{accept: []string{"message/*"}})
		content := pattern(size)
		if _, err := h.send(t, must(h.gmailClient(t, nil)), bytes.NewReader(content)); err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		ups := h.uploads()
		if len(ups) != 1 || !bytes.Equal(ups[0].content, content) {
			t.Fatalf("%d bytes: %d uploads, content equal %v", size, len(ups), len(ups) == 1 && bytes.Equal(ups[0].content, content))
		}
		wantType := "resumable"
		if size < chunk {
			wantType = "multipart"
		}
		if got := ups[0].Query.Get("uploadType"); got != wantType || string(bytes.TrimSpace(ups[0].Metadata)) != `{"threadId":"thread-9"}` {
			t.Errorf("%d bytes: uploadType %q metadata %s, want %s", size, got, ups[0].Metadata, wantType)
		}
	}
}

func TestRealClientRetriesChunksAfterFaults(t *testing.T) {
	synctest.Test(t, testRealClientRetriesChunksAfterFaults)
}

func testRealClientRetriesChunksAfterFaults(t *testing.T) {
	h := newBubbleHarness(t, harnessOptions{accept: []string{"message/*"}})
	path := "/upload/gmail/v1/users/me/messages/send"
	cut := int64(1000)
	fault := func(f core.Fault) func() {
		return func() {
			if err := h.faults.Add(f); err != nil {
				t.Error(err)
			}
		}
	}
	hooks := map[int]func(){
		2: fault(core.Fault{PathPrefix: path, Status: 503, Times: 2}), // second chunk: two 503s
		5: fault(core.Fault{PathPrefix: path, CutRequestAfter: &cut}), // third chunk: connection cut mid-body
		6: fault(core.Fault{PathPrefix: path, Status: 429}),           // and then rate limited once
		8: fault(core.Fault{PathPrefix: path, Status: 500}),           // the final chunk fails once
	}
	content := pattern(4*chunk + 100)
	msg, err := h.send(t, must(h.gmailClient(t, hooks)), bytes.NewReader(content))
	if err != nil {
		t.Fatalf("send with faults: %v", err)
	}
	ups := h.uploads()
	if len(ups) != 1 || !bytes.Equal(ups[0].content, content) {
		t.Fatalf("%d uploads, content equal %v", len(ups), len(ups) == 1 && bytes.Equal(ups[0].content, content))
	}
	if msg.Id != ups[0].Blob.ID {
		t.Errorf("message id %q, want the one upload's %q", msg.Id, ups[0].Blob.ID)
	}
	if p := h.faults.Pending(); len(p) != 0 {
		t.Errorf("faults left unused: %+v (the test did not exercise them)", p)
	}
}

func TestRealClientLostFinalAnswerGivesSameResource(t *testing.T) {
	// The final chunk is handled but its answer is cut: the client sees an
	// error, and asking the session again gives the same resource, with
	// still only one upload behind it.
	h := newHarness(t, harnessOptions{accept: []string{"message/*"}})
	cut := int64(0)
	hooks := map[int]func(){
		2: func() { _ = h.faults.Add(core.Fault{PathPrefix: "/upload/", CutResponseAfter: &cut}) },
	}
	svc, tr := h.gmailClient(t, hooks)
	size := chunk + 5
	if _, err := h.send(t, svc, bytes.NewReader(pattern(size))); err == nil {
		t.Fatal("send succeeded although the final answer was cut")
	}
	ups := h.uploads()
	if len(ups) != 1 {
		t.Fatalf("%d uploads after a lost final answer, want 1", len(ups))
	}
	code, _, body := h.do("PUT", tr.last, map[string]string{"Content-Range": fmt.Sprintf("bytes */%d", size)}, nil)
	var got struct{ ID string }
	if err := json.Unmarshal(body, &got); code != 200 || err != nil || got.ID != ups[0].Blob.ID {
		t.Errorf("asked again: %d %s, want the upload %s", code, body, ups[0].Blob.ID)
	}
	if n := len(h.uploads()); n != 1 {
		t.Errorf("%d uploads after asking again, want 1", n)
	}
}

func must(svc *gmail.Service, _ *bearer) *gmail.Service { return svc }

// failingReader returns n bytes of content, then an error.
type failingReader struct {
	r io.Reader
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if errors.Is(err, io.EOF) {
		return n, errors.New("drive stream broke")
	}
	return n, err
}

func TestRealClientReaderErrorYieldsNothing(t *testing.T) {
	for _, size := range []int{100, 3*chunk + 10} {
		h := newHarness(t, harnessOptions{accept: []string{"message/*"}})
		_, err := h.send(t, must(h.gmailClient(t, nil)), &failingReader{bytes.NewReader(pattern(size))})
		if err == nil || !strings.Contains(err.Error(), "drive stream broke") {
			t.Fatalf("%d bytes: err = %v, want the reader's error", size, err)
		}
		if n := len(h.uploads()); n != 0 {
			t.Errorf("%d bytes: %d uploads finished from a broken reader", size, n)
		}
		if st := h.deps.Stats.Snapshot(); st.UploadsFinished != 0 {
			t.Errorf("%d bytes: uploads finished = %d", size, st.UploadsFinished)
		}
	}
}

// TestAdmitRefusalsLeaveTheSessionOpen: an API that refuses a complete
// upload for now (Gmail's 429 rate limits) answers the last request with
// its error and finishes nothing. The Go client retries a resumable
// upload's last chunk after a 429, and the session, still holding the
// content, finishes once when it is admitted. A simple upload is not
// retried: it fails, and nothing is finished.
func TestAdmitRefusalsLeaveTheSessionOpen(t *testing.T) {
	for _, tc := range []struct {
		name    string
		size    int
		refuse  int // how many times Admit says no
		wantErr bool
	}{
		{"resumable, refused twice then admitted", 4*chunk + 17, 2, false},
		{"resumable ending on a chunk boundary, refused once", 2 * chunk, 1, false},
		{"multipart, refused once", 100, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			asked := 0
			h := newHarness(t, harnessOptions{accept: []string{"message/*"}, admit: func(_ context.Context, up Upload) (Result, bool) {
				mu.Lock()
				defer mu.Unlock()
				asked++
				if up.Token.Email != "ann@example.com" || up.Query.Get("uploadType") == "" {
					t.Errorf("Admit got upload %+v", up)
				}
				if asked <= tc.refuse {
					return ErrorResult(http.StatusTooManyRequests, "rateLimitExceeded", "Rate Limit Exceeded"), false
				}
				return Result{}, true
			}})
			content := pattern(tc.size)
			_, err := h.send(t, must(h.gmailClient(t, nil)), bytes.NewReader(content))
			var ge *googleapi.Error
			switch {
			case tc.wantErr && (!errors.As(err, &ge) || ge.Code != 429):
				t.Fatalf("err = %v, want the 429", err)
			case !tc.wantErr && err != nil:
				t.Fatalf("send: %v", err)
			}
			ups := h.uploads()
			mu.Lock()
			defer mu.Unlock()
			if tc.wantErr {
				if len(ups) != 0 || asked != 1 {
					t.Errorf("%d uploads finished after a refusal, Admit asked %d times; want 0 and 1", len(ups), asked)
				}
				return
			}
			if len(ups) != 1 || !bytes.Equal(ups[0].content, content) || asked != tc.refuse+1 {
				t.Errorf("%d uploads finished (content equal %v), Admit asked %d times; want 1 upload and %d asks",
					len(ups), len(ups) == 1 && bytes.Equal(ups[0].content, content), asked, tc.refuse+1)
			}
		})
	}
}
