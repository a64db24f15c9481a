package wan

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

// linkTime is how long n bytes take to cross a link of rate r.
func linkTime(n int, r Rate) time.Duration {
	return time.Duration(float64(n) / float64(r) * float64(time.Second))
}

// In a synctest bubble the shaper's clock is virtual, so the bytes a
// handler has been given can be held against the time exactly: a body
// of n bytes is not whole before n/up has passed since its first byte,
// and an answer of n bytes is not written before latency plus n/down.
// (A shaper that let a burst through at the start finished a piece's
// time early, however large the request.)
func TestBytesCrossTheLinkAtItsRate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   string
		size   int
		upload bool
	}{
		{name: "35.8 MB message up, google", spec: "google", size: 35_800_000, upload: true},
		{name: "one small piece up", spec: "gmail.up=1MB/s", size: 3000, upload: true},
		{name: "25 MiB file down, google", spec: "google", size: 25 << 20},
		{name: "one byte down at the slowest cap", spec: "drive.down=1KiB/s", size: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.spec, Loopback())
			if err != nil {
				t.Fatal(err)
			}
			synctest.Test(t, func(t *testing.T) {
				var bodyDone, answered time.Duration
				start := time.Now()
				h := New(p).Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if _, err := io.Copy(io.Discard, r.Body); err != nil {
						t.Error(err)
					}
					bodyDone = time.Since(start)
					if !tc.upload {
						_, _ = w.Write(make([]byte, tc.size))
					}
				}))
				var req *http.Request
				if tc.upload {
					req = httptest.NewRequest("PUT", "/upload/gmail/v1/users/me/messages/send?upload_id=1", bytes.NewReader(make([]byte, tc.size)))
				} else {
					req = httptest.NewRequest("GET", "/drive/v3/files/a?alt=media", nil)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				answered = time.Since(start)

				if tc.upload {
					link := p.Link(Gmail)
					if want := linkTime(tc.size, link.Up); bodyDone < want {
						t.Errorf("the body's %d bytes reached the handler in %v; the link takes %v", tc.size, bodyDone, want)
					}
					if want := linkTime(tc.size, link.Up) + link.Latency + link.Finish; answered < want {
						t.Errorf("answered after %v; the link allows no less than %v", answered, want)
					}
					return
				}
				link := p.Link(Drive)
				if want := link.Latency + link.TTFB + linkTime(tc.size, link.Down); answered < want || rec.Body.Len() != tc.size {
					t.Errorf("%d of %d bytes written after %v; the link allows no less than %v", rec.Body.Len(), tc.size, answered, want)
				}
			})
		})
	}
}

// A link carries bytes one after another: a request whose body arrives
// at the rate takes no longer than the link does either (a piece's
// time, at most, for the steps it moves in).
func TestTheLinkIsNotSlowerThanItsRate(t *testing.T) {
	p, err := Parse("gmail.up=16MB/s", Loopback())
	if err != nil {
		t.Fatal(err)
	}
	const size = 8 << 20
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		h := New(p).Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
		}))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("PUT", "/upload/gmail/v1/x", bytes.NewReader(make([]byte, size))))
		if took, want := time.Since(start), linkTime(size, 16*MB); took > want+pieceTime {
			t.Errorf("%d bytes at 16MB/s took %v; the link takes %v", size, took, want)
		}
	})
}
