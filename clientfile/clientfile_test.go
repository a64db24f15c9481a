package clientfile_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/clientfile"
	"github.com/drivemail/drivemail/clientfile/clientfiletest"
	"github.com/drivemail/drivemail/internal/memnet"
)

const limit = 1 << 20

func TestOpenStreamsTheFileWithoutCredentials(t *testing.T) {
	h := clientfiletest.NewHost(t)
	data := bytes.Repeat([]byte("pdf!"), 1000)
	h.Handle("/f/report", clientfiletest.Serve(data, "application/pdf", "Q3 report.pdf"))
	h.Handle("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, h.URL("blob.example.com", "/f/report"), http.StatusFound)
	})
	f := h.Fetcher(t, nil)

	file, err := f.Open(context.Background(), h.URL("", "/hop?sig=abc"), limit)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(file.Body)
	file.Body.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, err %v; want the %d bytes served", len(got), err, len(data))
	}
	if file.Size != int64(len(data)) || file.MimeType != "application/pdf" || file.Name != "Q3 report.pdf" {
		t.Fatalf("file = size %d, type %q, name %q", file.Size, file.MimeType, file.Name)
	}
	for _, r := range h.Requests() {
		for _, hdr := range []string{"Authorization", "Cookie", "Proxy-Authorization"} {
			if v := r.Header.Get(hdr); v != "" {
				t.Errorf("%s %s carried %s", r.Method, r.URL.Path, hdr)
			}
		}
	}
	if n := len(h.Requests()); n != 2 {
		t.Fatalf("%d requests, want the first and its redirect", n)
	}
}

// TestContentLengthOverTheLimitIsRefusedBeforeTheBody: the host sends
// its headers and holds the body back; Open must answer without waiting
// for it, at one byte past the limit, and take the file at the limit.
func TestContentLengthOverTheLimitIsRefusedBeforeTheBody(t *testing.T) {
	for _, tc := range []struct {
		size int64
		ok   bool
	}{{limit, true}, {limit + 1, false}} {
		t.Run(strconv.FormatInt(tc.size, 10), func(t *testing.T) {
			h := clientfiletest.NewHost(t)
			release := make(chan struct{})
			wrote := make(chan int64, 1)
			h.Handle("/big", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", strconv.FormatInt(tc.size, 10))
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
					wrote <- 0
					return
				}
				n, _ := io.Copy(w, io.LimitReader(zeros{}, tc.size))
				wrote <- n
			})
			f := h.Fetcher(t, nil)
			// The body is released only for the size that is taken: a
			// refusal must come while the host still holds it back.
			file, err := f.Open(context.Background(), h.URL("", "/big"), limit)
			if !tc.ok {
				if err == nil {
					// Hang up, so the host's handler ends and the test
					// fails here rather than hanging in the host's Close.
					file.Body.Close()
				}
				var fe *clientfile.Error
				if !errors.As(err, &fe) || fe.Failure != clientfile.TooLarge || fe.Size != tc.size {
					t.Fatalf("Open = %v, want TooLarge with the announced size", err)
				}
				if n := <-wrote; n != 0 {
					t.Fatalf("the host sent %d body bytes before the refusal", n)
				}
				return
			}
			close(release)
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, file.Body)
			file.Body.Close()
			if err != nil || n != tc.size {
				t.Fatalf("read %d, err %v", n, err)
			}
		})
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestUnannouncedSizeIsCounted: without Content-Length the body is
// counted, and fails one byte past the limit.
func TestUnannouncedSizeIsCounted(t *testing.T) {
	for _, tc := range []struct {
		size int64
		ok   bool
	}{{limit, true}, {limit + 1, false}} {
		h := clientfiletest.NewHost(t)
		h.Handle("/chunked", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			_, _ = io.Copy(w, io.LimitReader(zeros{}, tc.size))
		})
		file, err := h.Fetcher(t, nil).Open(context.Background(), h.URL("", "/chunked"), limit)
		if err != nil {
			t.Fatal(err)
		}
		if file.Size != -1 {
			t.Fatalf("size %d, want -1 (unknown)", file.Size)
		}
		n, err := io.Copy(io.Discard, file.Body)
		file.Body.Close()
		switch {
		case tc.ok && (err != nil || n != tc.size):
			t.Errorf("size %d: read %d, err %v", tc.size, n, err)
		case !tc.ok && clientfile.FailureOf(err) != clientfile.TooLarge:
			t.Errorf("size %d: err %v, want TooLarge", tc.size, err)
		}
	}
}

func TestRedirectsAreHeldToThePolicy(t *testing.T) {
	h := clientfiletest.NewHost(t)
	h.Handle("/f", clientfiletest.Serve([]byte("x"), "text/plain", ""))
	redirect := func(to string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusFound) }
	}
	h.Handle("/to-private", redirect(h.URL(clientfiletest.PrivateHost, "/f")))
	h.Handle("/to-http", redirect("http://files.example.com/f"))
	h.Handle("/to-elsewhere", redirect("https://evil.test/f"))
	h.Handle("/to-loop", redirect(h.URL("", "/to-loop")))
	// A chain of exactly MaxRedirects hops is followed; one more is not.
	for i := 1; i <= clientfile.DefaultMaxRedirects+1; i++ {
		next := h.URL("", fmt.Sprintf("/hop%d", i-1))
		if i == 1 {
			next = h.URL("", "/f")
		}
		h.Handle(fmt.Sprintf("/hop%d", i), redirect(next))
	}
	tests := []struct {
		path string
		want clientfile.Failure
	}{
		{fmt.Sprintf("/hop%d", clientfile.DefaultMaxRedirects), 0},
		{fmt.Sprintf("/hop%d", clientfile.DefaultMaxRedirects+1), clientfile.TooManyRedirects},
		{"/to-private", clientfile.PrivateAddress},
		{"/to-http", clientfile.NotHTTPS},
		{"/to-elsewhere", clientfile.HostNotAllowed},
		{"/to-loop", clientfile.TooManyRedirects},
	}
	f := h.Fetcher(t, nil)
	for _, tc := range tests {
		file, err := f.Open(context.Background(), h.URL("", tc.path), limit)
		if err == nil {
			file.Body.Close()
		}
		if clientfile.FailureOf(err) != tc.want || tc.want == 0 && err != nil {
			t.Errorf("%s: err %v, want kind %d", tc.path, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "10.0.0.5") {
			t.Errorf("%s: the error names the private address", tc.path)
		}
	}
	// The private host was never dialled: only the hops on loopback were served.
	for _, r := range h.Requests() {
		if strings.HasPrefix(r.Host, clientfiletest.PrivateHost) {
			t.Fatalf("a request reached %s", r.Host)
		}
	}
}

func TestURLRules(t *testing.T) {
	f, err := clientfile.New(clientfile.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url  string
		want clientfile.Failure
	}{
		{"https://files.oaiusercontent.com/file-abc?se=1&sig=x", 0},
		{"https://sdmntprwestus.oaiusercontent.com/files/x?sig=y", 0},
		{"https://chatgpt.com/backend-api/estuary/content?id=file-1", 0},
		{"http://files.oaiusercontent.com/file-abc", clientfile.NotHTTPS},
		{"https://oaiusercontent.com.evil.test/f", clientfile.HostNotAllowed},
		{"https://evil-oaiusercontent.com/f", clientfile.HostNotAllowed},
		{"https://app.web-sandbox.oaiusercontent.com/f", clientfile.HostNotAllowed},
		{"https://user:pw@files.oaiusercontent.com/f", clientfile.BadURL},
		{"chat_upload", clientfile.BadURL},
		{"https://files.oaiusercontent.com/" + strings.Repeat("a", clientfile.MaxURLLength), clientfile.BadURL},
		{"https://files.oaiusercontent.com/" + strings.Repeat("a", clientfile.MaxURLLength-len("https://files.oaiusercontent.com/")), 0},
		{"https://files.oaiusercontent.com/" + strings.Repeat("a", clientfile.MaxURLLength-len("https://files.oaiusercontent.com/")+1), clientfile.BadURL},
	}
	for _, tc := range tests {
		if got := clientfile.FailureOf(f.CheckURL(tc.url)); got != tc.want {
			t.Errorf("CheckURL(%.60s) kind %d, want %d", tc.url, got, tc.want)
		}
	}
}

func TestExpiredURLs(t *testing.T) {
	h := clientfiletest.NewHost(t)
	for _, code := range []int{401, 403, 404, 410} {
		h.Handle("/"+strconv.Itoa(code), func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "AuthenticationFailed: Signed expiry time has passed", code)
		})
	}
	h.Handle("/500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "oops", 500) })
	f := h.Fetcher(t, nil)
	for _, code := range []int{401, 403, 404, 410} {
		_, err := f.Open(context.Background(), h.URL("", "/"+strconv.Itoa(code)), limit)
		if clientfile.FailureOf(err) != clientfile.Expired {
			t.Errorf("%d: err %v, want Expired", code, err)
		}
	}
	if _, err := f.Open(context.Background(), h.URL("", "/500"), limit); clientfile.FailureOf(err) != clientfile.Unavailable {
		t.Errorf("500: err %v, want Unavailable", err)
	}
}

// TestStalledAndSlowBodies: a host that stops sending fails the read
// after the idle timeout; one that trickles fails after the total time.
func TestStalledAndSlowBodies(t *testing.T) { synctest.Test(t, testStalledAndSlowBodies) }

func testStalledAndSlowBodies(t *testing.T) {
	h := clientfiletest.NewHostOn(t, memnet.New())
	h.Handle("/stall", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		_, _ = w.Write([]byte("abc"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	h.Handle("/trickle", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		for range 100000 {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-time.After(20 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
	})
	f := h.Fetcher(t, func(c *clientfile.Config) {
		c.IdleTimeout = 300 * time.Millisecond
		c.MaxDuration = time.Second
	})
	for path, want := range map[string]clientfile.Failure{"/stall": clientfile.Stalled, "/trickle": clientfile.TooSlow} {
		file, err := f.Open(context.Background(), h.URL("", path), limit)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = io.Copy(io.Discard, file.Body)
		file.Body.Close()
		if clientfile.FailureOf(err) != want {
			t.Errorf("%s: err %v, want kind %d", path, err, want)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%s: gave up after %v", path, took)
		}
	}
}

func TestParseHosts(t *testing.T) {
	if _, err := clientfile.ParseHosts([]string{"files.example.com", "*.oaiusercontent.com"}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"https://files.example.com", "files.example.com:443", "*", "files.example.com/x", ""} {
		if _, err := clientfile.ParseHosts([]string{bad}); err == nil {
			t.Errorf("ParseHosts(%q) accepted it", bad)
		}
	}
}
