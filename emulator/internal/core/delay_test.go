package core

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// delayServer serves f's middleware in front of a handler that answers
// the body's length and SHA-256. ended gets a value each time the
// middleware returns; handled counts the requests that reached the handler.
func delayServer(t *testing.T, f *Faults) (srv *httptest.Server, ended chan struct{}, handled *atomic.Int32) {
	t.Helper()
	ended = make(chan struct{}, 16)
	handled = new(atomic.Int32)
	inner := f.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handled.Add(1)
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
	}))
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { ended <- struct{}{} }()
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, ended, handled
}

// onlyReader hides a reader's type, so the client sends it chunked.
type onlyReader struct{ io.Reader }

// TestFaultDelayEndsWhenTheClientGoesAway: a client that gives up during
// a delay frees the request at once, with a body or without, instead of
// holding its connection and goroutine for the whole delay.
func TestFaultDelayEndsWhenTheClientGoesAway(t *testing.T) {
	tests := []struct {
		name   string
		method string
		body   func() io.Reader
	}{
		{"no body", http.MethodGet, nil},
		{"small body", http.MethodPut, func() io.Reader { return strings.NewReader("chunk") }},
		{"1 MiB body", http.MethodPost, func() io.Reader { return bytes.NewReader(make([]byte, 1<<20)) }},
		{"chunked body", http.MethodPost, func() io.Reader { return onlyReader{strings.NewReader(strings.Repeat("z", 70_000))} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Faults
			srv, ended, handled := delayServer(t, &f)
			if err := f.Add(Fault{PathPrefix: "/upload/", Delay: Duration(30 * time.Second)}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
			defer cancel()
			var body io.Reader
			if tt.body != nil {
				body = tt.body()
			}
			req, _ := http.NewRequestWithContext(ctx, tt.method, srv.URL+"/upload/x", body)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				t.Fatalf("answered %d during a 30 s delay", resp.StatusCode)
			}
			select {
			case <-ended:
			case <-time.After(5 * time.Second):
				t.Fatal("the request still holds the server 5 s after its client went away")
			}
			if n := handled.Load(); n != 0 {
				t.Errorf("%d requests were handled after their client went away", n)
			}
		})
	}
}

// TestFaultDelayPassesTheBody: after a delay the handler reads the whole
// body as sent, whatever its size (up to past what the delay reads
// ahead) or framing.
func TestFaultDelayPassesTheBody(t *testing.T) {
	sizes := []int{0, 1, delayChunk, delayChunk + 1, delayAhead + delayChunk + 7}
	var f Faults
	srv, _, _ := delayServer(t, &f)
	for _, size := range sizes {
		for _, chunked := range []bool{false, true} {
			if err := f.Add(Fault{PathPrefix: "/upload/", Delay: Duration(20 * time.Millisecond)}); err != nil {
				t.Fatal(err)
			}
			data := make([]byte, size)
			for i := range data {
				data[i] = byte(i * 7)
			}
			var body io.Reader = bytes.NewReader(data)
			if chunked {
				body = onlyReader{body}
			}
			resp, err := http.Post(srv.URL+"/upload/x", "application/octet-stream", body)
			if err != nil {
				t.Fatalf("%d bytes (chunked %v): %v", size, chunked, err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			sum := sha256.Sum256(data)
			if want := fmt.Sprintf("%d %s", size, hex.EncodeToString(sum[:])); resp.StatusCode != 200 || string(got) != want {
				t.Errorf("%d bytes (chunked %v): %d %q, want 200 %q", size, chunked, resp.StatusCode, got, want)
			}
		}
	}
	if n := len(f.Pending()); n != 0 {
		t.Errorf("%d delay rules unused", n)
	}
}

// TestFaultDelayBeforeOtherFaults: a delay before a status or a cut
// request leaves the server sound: the connection is usable or cleanly
// cut, and the next request is served.
func TestFaultDelayBeforeOtherFaults(t *testing.T) {
	var f Faults
	srv, _, _ := delayServer(t, &f)
	d := Duration(20 * time.Millisecond)
	body := strings.Repeat("b", 300_000)
	if err := f.Add(Fault{PathPrefix: "/upload/", Delay: d, Status: 503}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(srv.URL+"/upload/x", "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Errorf("delay then status: %d, want 503", resp.StatusCode)
	}
	if err := f.Add(Fault{PathPrefix: "/upload/", Delay: d, CutRequestAfter: ptr(1000)}); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Post(srv.URL+"/upload/x", "text/plain", strings.NewReader(body)); err == nil {
		resp.Body.Close()
		t.Errorf("delay then cut request: answered %d, want the connection cut", resp.StatusCode)
	}
	resp, err = http.Post(srv.URL+"/upload/x", "text/plain", strings.NewReader("ok"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(string(got), "2 ") {
		t.Errorf("after the faults: %d %q", resp.StatusCode, got)
	}
}
