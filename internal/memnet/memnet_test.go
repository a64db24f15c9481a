package memnet_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/internal/memnet"
)

// TestHTTPInABubble: a client and a server on the network run in one
// bubble, and a server that stalls for an hour is timed out by the
// client at once on the real clock, at the client's timeout on the
// bubble's.
func TestHTTPInABubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New()
		srv := n.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/stall" {
				select {
				case <-time.After(time.Hour):
				case <-r.Context().Done():
				}
				return
			}
			body, _ := io.ReadAll(r.Body)
			w.Write(bytes.ToUpper(body))
		}))
		defer srv.Close()
		tr := n.Transport()
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr, Timeout: 3 * time.Second}

		resp, err := c.Post(srv.URL+"/echo", "text/plain", strings.NewReader("hello"))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != "HELLO" {
			t.Errorf("echo = %q, want HELLO", got)
		}

		start := time.Now()
		_, err = c.Get(srv.URL + "/stall")
		if err == nil {
			t.Fatal("a stalled server answered")
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("timed out after %v on the bubble's clock, want exactly the client's 3s", d)
		}
	})
}

// TestLargeBodiesBothWays: more than a buffer's worth each way arrives
// whole, the writer waiting for the reader.
func TestLargeBodiesBothWays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New()
		srv := n.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(w, r.Body)
		}))
		defer srv.Close()
		tr := n.Transport()
		defer tr.CloseIdleConnections()
		data := bytes.Repeat([]byte("0123456789abcdef"), 3*memnet.BufferSize/16+7)
		resp, err := (&http.Client{Transport: tr}).Post(srv.URL, "application/octet-stream", bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read %d bytes (err %v), want the %d sent", len(got), err, len(data))
		}
	})
}

// TestConnSemantics: a writer blocks once BufferSize is unread, deadlines
// end waits with os.ErrDeadlineExceeded, a closed end gives EOF to its
// peer after the bytes written, and writes to it fail.
func TestConnSemantics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New()
		l := n.Listen()
		defer l.Close()
		accepted := make(chan net.Conn)
		go func() {
			c, err := l.Accept()
			if err != nil {
				t.Error(err)
			}
			accepted <- c
		}()
		client, err := n.DialContext(context.Background(), "tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		server := <-accepted

		// A full buffer holds the writer until its deadline.
		client.SetWriteDeadline(time.Now().Add(time.Second))
		wrote, err := client.Write(make([]byte, memnet.BufferSize+1))
		if wrote != memnet.BufferSize || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("write past the buffer = %d, %v; want %d and a deadline error", wrote, err, memnet.BufferSize)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("the deadline's error %v is not a net.Error timeout", err)
		}
		client.SetWriteDeadline(time.Time{})

		// A read with nothing to read ends at its deadline, at once on the
		// real clock.
		client.SetReadDeadline(time.Now().Add(time.Minute))
		start := time.Now()
		if _, err := client.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("read with nothing sent: %v, want a deadline error", err)
		}
		if d := time.Since(start); d != time.Minute {
			t.Errorf("the read waited %v, want its deadline's minute", d)
		}
		client.SetReadDeadline(time.Time{})

		// The server drains what the client wrote, then sees EOF.
		go func() {
			client.Write([]byte("tail"))
			client.Close()
		}()
		got, err := io.ReadAll(server)
		if err != nil || len(got) != memnet.BufferSize+len("tail") {
			t.Errorf("server read %d bytes (err %v), want %d", len(got), err, memnet.BufferSize+len("tail"))
		}
		if _, err := server.Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
			t.Errorf("write to a closed peer: %v, want EPIPE", err)
		}
		if _, err := client.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
			t.Errorf("read of a closed end: %v, want net.ErrClosed", err)
		}
		server.Close()
	})
}

// TestDialRefusals: no listener on the port, or a closed one, refuses.
func TestDialRefusals(t *testing.T) {
	n := memnet.New()
	l := n.Listen()
	addr := l.Addr().String()
	l.Close()
	for _, a := range []string{addr, "127.0.0.1:1"} {
		if _, err := n.DialContext(context.Background(), "tcp", a); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("dial %s: %v, want connection refused", a, err)
		}
	}
}

// TestCloseWithBytesUnreadResets: an end that closes with bytes it never
// read resets the connection, as TCP's RST does: its peer reads what it
// was sent and then ECONNRESET, not EOF; so does a peer that writes to an
// end already closed.
func TestCloseWithBytesUnreadResets(t *testing.T) {
	n := memnet.New()
	l := n.Listen()
	defer l.Close()
	pair := func() (client, server net.Conn) {
		t.Helper()
		accepted := make(chan net.Conn, 1)
		go func() {
			c, _ := l.Accept()
			accepted <- c
		}()
		client, err := n.DialContext(context.Background(), "tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		return client, <-accepted
	}

	client, server := pair()
	client.Write([]byte("a request the server never reads"))
	server.Write([]byte("an answer"))
	server.Close()
	got, err := io.ReadAll(client)
	if string(got) != "an answer" || !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("after a close with bytes unread: read %q, %v; want the answer, then ECONNRESET", got, err)
	}
	client.Close()

	client, server = pair()
	server.Close() // nothing unread: a clean close
	if _, err := client.Write([]byte("too late")); !errors.Is(err, syscall.EPIPE) {
		t.Errorf("write to a closed end: %v, want EPIPE", err)
	}
	if _, err := client.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("read after writing to a closed end: %v, want ECONNRESET", err)
	}
	client.Close()
}
