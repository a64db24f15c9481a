package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/tools"
)

// startServe runs serve on a fresh loopback listener with mail as the
// sender, and returns the base URL, the context to cancel and serve's error.
func startServe(t *testing.T, mail *fakeMail, grace time.Duration) (string, context.CancelFunc, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("http://" + ln.Addr().String())
	s := NewServer(Deps{
		BaseURL: base,
		Auth:    fakeAuth{base: base.String()},
		Tools:   tools.Deps{Drive: fakeDrive{}, Mail: mail},
		Store:   fakeStore{},
	})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- serve(ctx, &http.Server{Handler: s, ReadHeaderTimeout: time.Second}, ln, grace, slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(cancel)
	return base.String(), cancel, errc
}

const sendBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_email","arguments":{"to":"a@example.com","subject":"s","body_text":"b"}}}`

func postMCP(base string) (*http.Response, error) {
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(sendBody))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", "mcp-session-0b9b4ec8-7f36-4c57-a7b9-5d2a2c8e6d3f")
	return (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
}

func TestShutdownLetsARunningSendFinish(t *testing.T) {
	mail := &fakeMail{started: make(chan struct{}), release: make(chan struct{})}
	base, cancel, errc := startServe(t, mail, 10*time.Second)

	type result struct {
		status int
		body   string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := postMCP(base)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- result{status: resp.StatusCode, body: string(b), err: err}
	}()
	<-mail.started
	cancel() // SIGTERM arrives mid-send

	// New connections are refused while the send runs.
	deadline := time.Now().Add(2 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), 100*time.Millisecond)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener still accepts connections after shutdown began")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-errc:
		t.Fatalf("serve returned before the send finished: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(mail.release)
	r := <-done
	if r.err != nil || r.status != 200 || !strings.Contains(r.body, `"id":"msg-1"`) {
		t.Fatalf("send during shutdown: %+v", r)
	}
	if mail.count() != 1 {
		t.Fatalf("sent %d messages", mail.count())
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not return after the send finished")
	}
}

func TestShutdownGraceExpiresAndCancelsTheSend(t *testing.T) {
	mail := &fakeMail{started: make(chan struct{}), release: make(chan struct{}), ended: make(chan error, 1)}
	base, cancel, errc := startServe(t, mail, 200*time.Millisecond)
	go func() {
		if resp, err := postMCP(base); err == nil {
			resp.Body.Close()
		}
	}()
	<-mail.started
	start := time.Now()
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not return after the grace period")
	}
	if waited := time.Since(start); waited < 150*time.Millisecond {
		t.Errorf("returned after %v, before the grace period", waited)
	}
	select {
	case err := <-mail.ended:
		if err == nil || mail.count() != 0 {
			t.Errorf("a send cut by the grace period still completed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the send cut by the grace period never returned")
	}
}
