package clientfile_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/clientfile"
	"github.com/drivemail/drivemail/clientfile/clientfiletest"
	"github.com/drivemail/drivemail/internal/memnet"
)

// The sentences the model sees, as upload's save_file words them.
const (
	retry        = "Try again in a minute; if it fails again, ask the user to attach the file to the conversation again, then call again with the new file."
	sayFailed    = "The host of the file failed while it was fetched. Nothing was saved. " + retry
	sayStalled   = "The host of the file stopped sending it, or sent it too slowly. Nothing was saved. " + retry
	letGoTimeout = 5 * time.Second
)

// checkRefusal asserts the failure's kind, its log text and the sentence
// the model sees, which must not carry the URL's signature.
func checkRefusal(t *testing.T, err error, kind clientfile.Failure, status int, detail, says string) {
	t.Helper()
	var fe *clientfile.Error
	if !errors.As(err, &fe) || fe.Failure != kind || fe.Status != status || !strings.Contains(fe.Error(), detail) {
		t.Fatalf("err %v; want kind %d, status %d, saying %q", err, kind, status, detail)
	}
	r := clientfile.Wording{File: "the file", Done: "Nothing was saved."}.Refusal(err)
	if r == nil {
		t.Fatalf("%v has no refusal", err)
	}
	wantKind := clientfile.KindUnavailable
	if kind == clientfile.Stalled {
		wantKind = clientfile.KindStalled
	}
	if r.Kind != wantKind || r.Text != says {
		t.Fatalf("refusal %s %q\nwant      %s %q", r.Kind, r.Text, wantKind, says)
	}
	if strings.Contains(r.Text+fe.Error(), "sig=") {
		t.Fatalf("the URL's signature is in %q / %q", r.Text, fe.Error())
	}
}

// letGo waits for a host to see its connection closed: a refused fetch
// must not hold the host's connection open.
func letGo(t *testing.T, closed <-chan struct{}) {
	t.Helper()
	select {
	case <-closed:
	case <-time.After(letGoTimeout):
		t.Fatalf("the connection was still open %v after the refusal", letGoTimeout)
	}
}

// inBubble is test run inside a testing/synctest bubble, for t.Run: the
// host's silences and the fetcher's timeouts pass at once on the
// bubble's clock, and exactly.
func inBubble(test func(t *testing.T)) func(t *testing.T) {
	return func(t *testing.T) { synctest.Test(t, test) }
}

// stopBeforeClose is closed as the test ends, before the test host
// closes (cleanups run last first): a handler that waits for the client
// to hang up is released even when it never does, so the host's Close,
// which waits for its handlers, ends and the test fails rather than hangs.
func stopBeforeClose(t *testing.T) <-chan struct{} {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	return stop
}

// TestHostThatDoesNotResolve: a name with no address, at the first URL or
// at a redirect, is the host's failure, asked of the fetcher's resolver
// and never dialled. The names are under .invalid (RFC 6761 §6.4), and
// the resolver is the test's, so no query leaves the machine.
func TestHostThatDoesNotResolve(t *testing.T) {
	h := clientfiletest.NewHost(t)
	h.Handle("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://gone.invalid/f?sig=abc", http.StatusFound)
	})
	var mu sync.Mutex
	var asked []string
	f := h.Fetcher(t, func(c *clientfile.Config) {
		c.Hosts = append(c.Hosts, "gone.invalid", "empty.invalid")
		c.Policy.LookupNetIP = func(_ context.Context, host string) ([]netip.Addr, error) {
			mu.Lock()
			asked = append(asked, host)
			mu.Unlock()
			switch host {
			case "gone.invalid":
				return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
			case "empty.invalid":
				return nil, nil // an answer with no address in it
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
	})
	tests := []struct {
		name     string
		url      string
		host     string // the name that does not resolve
		requests int    // requests that reached the test host
	}{
		{"no such host", "https://gone.invalid/f?sig=abc", "gone.invalid", 0},
		{"no address in the answer", "https://empty.invalid/f?sig=abc", "empty.invalid", 0},
		{"a redirect to a host that does not resolve", h.URL("", "/hop?sig=abc"), "gone.invalid", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			asked = nil
			mu.Unlock()
			before := len(h.Requests())
			file, err := f.Open(context.Background(), tc.url, limit)
			if err == nil {
				file.Body.Close()
			}
			checkRefusal(t, err, clientfile.Unavailable, 0, "the host does not resolve", sayFailed)
			mu.Lock()
			defer mu.Unlock()
			if len(asked) == 0 || asked[len(asked)-1] != tc.host {
				t.Errorf("the resolver was asked %q; want %q last", asked, tc.host)
			}
			if n := len(h.Requests()) - before; n != tc.requests {
				t.Errorf("%d requests reached the host, want %d", n, tc.requests)
			}
		})
	}
}

// TestHostThatDoesNotAnswer: a host that takes the connection and then
// says nothing (no TLS handshake, or no headers) fails Open once the
// header timeout, or the caller's deadline, has passed, as Stalled "no
// answer", and the connection is closed; one that hangs up is the host's
// failure.
func TestHostThatDoesNotAnswer(t *testing.T) {
	const short = 300 * time.Millisecond
	tests := []struct {
		name          string
		silent        bool // a TCP listener that never answers the TLS handshake
		hangUp        bool // a TCP listener that closes each connection at once
		headerTimeout time.Duration
		deadline      time.Duration // the caller's, 0 for none
		kind          clientfile.Failure
		detail, says  string
	}{
		{name: "headers held back", headerTimeout: short, kind: clientfile.Stalled, detail: "no answer", says: sayStalled},
		{name: "TLS handshake never answered", silent: true, headerTimeout: short, kind: clientfile.Stalled, detail: "no answer", says: sayStalled},
		{name: "the caller's deadline before the headers", deadline: short, kind: clientfile.Stalled, detail: "no answer", says: sayStalled},
		{name: "hangs up before answering", hangUp: true, kind: clientfile.Unavailable, detail: "the host failed", says: sayFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, inBubble(func(t *testing.T) {
			n := memnet.New()
			h := clientfiletest.NewHostOn(t, n)
			held := make(chan struct{})
			stop := stopBeforeClose(t)
			h.Handle("/held", func(w http.ResponseWriter, r *http.Request) {
				select { // headers never come; the client hangs up
				case <-r.Context().Done():
					close(held)
				case <-stop:
				}
			})
			url, closed := h.URL("", "/held?sig=abc"), (<-chan struct{})(held)
			if tc.silent || tc.hangUp {
				var port string
				port, closed = rawHost(t, n, tc.hangUp)
				url = "https://files.example.com:" + port + "/f?sig=abc"
			}
			f := h.Fetcher(t, func(c *clientfile.Config) {
				if tc.headerTimeout > 0 {
					c.HeaderTimeout = tc.headerTimeout
				}
			})
			// Without a deadline of the caller's, a backstop: a timeout
			// that never fires fails the time check below, not the run.
			deadline := tc.deadline
			if deadline == 0 {
				deadline = 10 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			start := time.Now()
			file, err := f.Open(ctx, url, limit)
			took := time.Since(start)
			if err == nil {
				file.Body.Close()
			}
			checkRefusal(t, err, tc.kind, 0, tc.detail, tc.says)
			// The shortened timeout, not the test config's 5 s, ended it.
			if wait := tc.headerTimeout + tc.deadline; took < wait || took > wait+3*time.Second {
				t.Errorf("Open gave up after %v, want about %v", took, wait)
			}
			letGo(t, closed)
		}))
	}
}

// rawHost listens on n and, for each connection, either closes it at
// once or reads (the TLS ClientHello) without ever answering. closed is
// signalled as each connection ends.
func rawHost(t *testing.T, n *memnet.Network, hangUp bool) (port string, closed <-chan struct{}) {
	t.Helper()
	ln := n.Listen()
	t.Cleanup(func() { ln.Close() })
	done := make(chan struct{}, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if !hangUp {
					// Returns when the client closes its end.
					_ = c.SetReadDeadline(time.Now().Add(2 * letGoTimeout))
					_, _ = io.Copy(io.Discard, c)
				}
				done <- struct{}{}
			}()
		}
	}()
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return port, done
}

// TestPartialAnswerIsRefused: drivemail asks for the whole file (no
// Range), so a 206 is the host's failure, refused from its headers: Open
// does not wait for the body, and the connection is closed.
func TestPartialAnswerIsRefused(t *testing.T) {
	tests := []struct {
		name          string
		contentLength string // "" for none (chunked)
	}{
		{"with a length", "100"},
		{"without a length", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := clientfiletest.NewHost(t)
			hungUp := make(chan struct{})
			stop := stopBeforeClose(t)
			h.Handle("/part", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Range", "bytes 0-99/1000")
				if tc.contentLength != "" {
					w.Header().Set("Content-Length", tc.contentLength)
				}
				w.WriteHeader(http.StatusPartialContent)
				w.(http.Flusher).Flush()
				// The body is held back: a refusal must come from the
				// headers alone, and the fetcher must hang up.
				select {
				case <-r.Context().Done():
					close(hungUp)
				case <-stop:
				}
			})
			start := time.Now()
			file, err := h.Fetcher(t, nil).Open(context.Background(), h.URL("", "/part?sig=abc"), limit)
			if err == nil {
				file.Body.Close()
			}
			checkRefusal(t, err, clientfile.Unavailable, http.StatusPartialContent, "(HTTP 206): a partial answer to a whole-file request", sayFailed)
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("Open took %v: it waited on the body", took)
			}
			letGo(t, hungUp)
			for _, r := range h.Requests() {
				if rg := r.Header.Get("Range"); rg != "" {
					t.Errorf("the request asked for Range %q", rg)
				}
			}
		})
	}
}
