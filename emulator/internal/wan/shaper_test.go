package wan

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// stub answers like the emulator's kinds of route: metadata, a download,
// an upload that opens a session, a middle chunk and a last chunk, and
// echoes the size of any body it reads whole.
func stub() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /drive/v3/files/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("alt") == "media" {
			_, _ = w.Write(make([]byte, 1<<20))
			return
		}
		_, _ = io.WriteString(w, `{"id":"x"}`)
	})
	mux.HandleFunc("GET /drive/v3/files/{id}/export", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "too big", http.StatusForbidden)
	})
	mux.HandleFunc("POST /upload/gmail/v1/users/me/messages/send", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		switch r.URL.Query().Get("step") {
		case "open":
			w.Header().Set("Location", "http://example/upload?upload_id=1")
		case "middle":
			w.Header().Set("X-HTTP-Status-Code-Override", "308")
		}
		_, _ = io.WriteString(w, strings.Repeat("x", int(n%7)))
	})
	mux.HandleFunc("GET /_emulator/stats", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("GET /gmail/v1/users/me/profile", func(w http.ResponseWriter, r *http.Request) {})
	return mux
}

// timed makes a request through a shaper with the given spec and reports
// how long the answer took, whole.
func timed(t *testing.T, spec, method, path string, body []byte) time.Duration {
	t.Helper()
	p, err := Parse(spec, Loopback())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(p).Middleware(stub()))
	defer srv.Close()
	req, _ := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
	start := time.Now()
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return time.Since(start)
}

// The bounds are generous above (a busy machine is slow) and exact below:
// a lower bound fails whenever the shaping is off.
func TestShaping(t *testing.T) {
	mib := make([]byte, 1<<20)
	for _, tc := range []struct {
		name, spec, method, path string
		body                     []byte
		atLeast, below           time.Duration
	}{
		{name: "latency on every request of the API", spec: "drive.latency=300ms",
			method: "GET", path: "/drive/v3/files/a", atLeast: 300 * time.Millisecond, below: 3 * time.Second},
		{name: "latency of another API does not apply", spec: "drive.latency=2s",
			method: "GET", path: "/gmail/v1/users/me/profile", below: 2 * time.Second},
		{name: "controls are never shaped", spec: "all.latency=2s,all.down=1KiB/s",
			method: "GET", path: "/_emulator/stats", below: 2 * time.Second},
		{name: "ttfb on a download", spec: "drive.ttfb=300ms",
			method: "GET", path: "/drive/v3/files/a?alt=media", atLeast: 300 * time.Millisecond, below: 3 * time.Second},
		{name: "no ttfb on metadata", spec: "drive.ttfb=2s",
			method: "GET", path: "/drive/v3/files/a", below: 2 * time.Second},
		{name: "no ttfb on a failed export", spec: "drive.ttfb=2s",
			method: "GET", path: "/drive/v3/files/a/export", below: 2 * time.Second},
		{name: "1 MiB down at 4 MiB/s", spec: "drive.down=4MiB/s",
			method: "GET", path: "/drive/v3/files/a?alt=media", atLeast: 200 * time.Millisecond, below: 3 * time.Second},
		{name: "1 MiB up at 4 MiB/s", spec: "gmail.up=4MiB/s",
			method: "POST", path: "/upload/gmail/v1/users/me/messages/send", body: mib, atLeast: 200 * time.Millisecond, below: 3 * time.Second},
		{name: "latency counts from the body's end", spec: "gmail.up=4MiB/s,gmail.latency=300ms",
			method: "POST", path: "/upload/gmail/v1/users/me/messages/send", body: mib, atLeast: 500 * time.Millisecond, below: 4 * time.Second},
		{name: "finish on an upload's last request", spec: "gmail.finish=300ms",
			method: "POST", path: "/upload/gmail/v1/users/me/messages/send?step=last", body: []byte("x"), atLeast: 300 * time.Millisecond, below: 3 * time.Second},
		{name: "no finish when a session opens", spec: "gmail.finish=2s",
			method: "POST", path: "/upload/gmail/v1/users/me/messages/send?step=open", below: 2 * time.Second},
		{name: "no finish on a middle chunk", spec: "gmail.finish=2s",
			method: "POST", path: "/upload/gmail/v1/users/me/messages/send?step=middle", body: mib, below: 2 * time.Second},
		{name: "loopback adds nothing", spec: "loopback",
			method: "POST", path: "/upload/gmail/v1/users/me/messages/send", body: mib, below: 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			took := timed(t, tc.spec, tc.method, tc.path, tc.body)
			if took < tc.atLeast || took >= tc.below {
				t.Errorf("took %v; want at least %v and under %v", took, tc.atLeast, tc.below)
			}
		})
	}
}

// A client that gives up ends every wait at once: the held answer, the
// paced response and the paced request body.
func TestWaitsEndWhenTheClientGoesAway(t *testing.T) {
	for _, tc := range []struct {
		name, spec, method, path string
		body                     io.Reader
	}{
		{name: "latency", spec: "drive.latency=1m", method: "GET", path: "/drive/v3/files/a"},
		{name: "ttfb", spec: "drive.ttfb=1m", method: "GET", path: "/drive/v3/files/a?alt=media"},
		{name: "response at the slowest rate", spec: "drive.down=1KiB/s", method: "GET", path: "/drive/v3/files/a?alt=media"},
		{name: "finish", spec: "gmail.finish=1m", method: "POST", path: "/upload/gmail/v1/users/me/messages/send", body: strings.NewReader("x")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Parse(tc.spec, Loopback())
			if err != nil {
				t.Fatal(err)
			}
			returned := make(chan struct{})
			entered := make(chan struct{}, 1)
			h := New(p).Middleware(stub())
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				entered <- struct{}{}
				h.ServeHTTP(w, r)
				close(returned)
			}))
			defer srv.Close()
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, tc.method, srv.URL+tc.path, tc.body)
			errc := make(chan error, 1)
			go func() {
				res, err := srv.Client().Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
				errc <- err
			}()
			<-entered
			cancel()
			if err := <-errc; err == nil {
				t.Fatal("the request finished before the client gave up: nothing was held")
			}
			select {
			case <-returned:
			case <-time.After(10 * time.Second):
				t.Fatal("the handler still waits 10 s after its client went away")
			}
		})
	}
}
