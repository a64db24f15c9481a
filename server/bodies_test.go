package server

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/tools"
)

// slowRequest writes a request head and the first bytes of its body to
// ts, as a slow client does, then stops sending.
func slowRequest(t *testing.T, ts *testServer, method, path string, headers map[string]string, bodyLength int, firstBytes string) net.Conn {
	t.Helper()
	c := ts.dial(t)
	addr := ts.Listener.Addr().String()
	var b strings.Builder
	b.WriteString(method + " " + path + " HTTP/1.1\r\nHost: " + addr + "\r\n")
	for k, v := range headers {
		b.WriteString(k + ": " + v + "\r\n")
	}
	b.WriteString("Content-Length: " + strconv.Itoa(bodyLength) + "\r\n\r\n" + firstBytes)
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	return c
}

// answer is what a slow client gets back.
type answer struct {
	status int
	body   string
	closed time.Duration // from the call until the server closed the connection
	err    error
}

// awaitAnswer reads the response on c and waits for the server to close
// the connection, giving up after limit.
func awaitAnswer(c net.Conn, limit time.Duration) answer {
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(limit))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return answer{err: err}
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	a := answer{status: resp.StatusCode, body: string(body)}
	// The server must now end the connection: nothing more will come.
	if _, err := br.ReadByte(); err == nil {
		a.err = io.ErrUnexpectedEOF
		return a
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		a.err = err
		return a
	}
	a.closed = time.Since(start)
	return a
}

// A body the server does not want is never waited for: a stranger gets
// the 401 at once and the connection ends, as do other refusals and a
// body sent to a route that takes none. The body deadline
// here is a minute, so only an answer that does not wait passes. Before,
// POST /mcp read up to 4 MiB before the bearer check, and net/http read up
// to 256 KiB of any unread body before it answered.
func TestUnwantedBodiesAreNeverAwaited(t *testing.T) {
	jsonBody := map[string]string{"Content-Type": "application/json"}
	for _, tc := range []struct {
		name, method, path string
		headers            map[string]string
		length             int
		status             int
	}{
		{"POST /mcp without a token", "POST", "/mcp", jsonBody, 4 << 20, 401},
		{"POST /mcp with a small body and no token", "POST", "/mcp", jsonBody, 1000, 401},
		{"POST /mcp with a bad token", "POST", "/mcp", map[string]string{"Content-Type": "application/json", "Authorization": "Bearer nope"}, 1000, 401},
		{"POST /mcp from a foreign origin", "POST", "/mcp", map[string]string{"Origin": "https://evil.example", "Authorization": "Bearer " + testToken}, 1000, 403},
		{"PUT /mcp without a token", "PUT", "/mcp", nil, 1000, 401},
		{"POST /upload without a token", "POST", "/upload", nil, 1000, 401},
		{"an OAuth form too large to read", "POST", "/oauth/token", nil, maxFormBodyBytes + 1, 413},
		{"a body sent to a route that takes none", "GET", "/healthz", nil, 1000, 200},
	} {
		t.Run(tc.name, inBubble(func(t *testing.T) {
			ts := newBubbleServer(t, func(d *Deps) { d.BodyTimeout, d.MCPBodyTimeout = time.Minute, time.Minute })
			c := slowRequest(t, ts, tc.method, tc.path, tc.headers, tc.length, `{"jsonrpc":`)
			a := awaitAnswer(c, 5*time.Second)
			if a.err != nil || a.status != tc.status {
				t.Fatalf("got %d after %v (%v), want %d and the connection closed at once", a.status, a.closed, a.err, tc.status)
			}
		}))
	}
}

// Every body the server reads has a deadline: a trickle is cut with 408
// and the connection closed.
func TestSlowBodiesAreCut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, tc := range []struct {
		name, method, path string
		headers            map[string]string
		status             int
		body               string
	}{
		{"an OAuth form", "POST", "/oauth/token", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 408, "took longer than 300ms"},
		{"a registration", "POST", "/oauth/register", map[string]string{"Content-Type": "application/json"}, 408, "took longer than 300ms"},
		{"a signed-in MCP request", "POST", "/mcp", map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + testToken}, 408, `"code":-32600`},
	} {
		t.Run(tc.name, inBubble(func(t *testing.T) {
			ts := newBubbleServer(t, func(d *Deps) { d.BodyTimeout, d.MCPBodyTimeout = timeout, timeout })
			c := slowRequest(t, ts, tc.method, tc.path, tc.headers, 1000, "grant_type=")
			a := awaitAnswer(c, 5*time.Second)
			if a.err != nil || a.status != tc.status || !strings.Contains(a.body, tc.body) {
				t.Fatalf("got %d %q, closed after %v (%v); want %d with %q and the connection closed", a.status, a.body, a.closed, a.err, tc.status, tc.body)
			}
			if a.closed < timeout-50*time.Millisecond || a.closed > timeout+2*time.Second {
				t.Errorf("closed after %v, want about %v", a.closed, timeout)
			}
		}))
	}
}

// A body's deadline ends with the body: a send that runs far longer than
// the deadline, on a connection that stays open, is not cancelled by it.
func TestTheBodyDeadlineEndsWithTheBody(t *testing.T) {
	synctest.Test(t, testTheBodyDeadlineEndsWithTheBody)
}

func testTheBodyDeadlineEndsWithTheBody(t *testing.T) {
	const timeout = 200 * time.Millisecond
	mail := &fakeMail{release: make(chan struct{})}
	ts := newBubbleServer(t, func(d *Deps) {
		d.BodyTimeout, d.MCPBodyTimeout = timeout, timeout
		d.Tools.Mail = mail
	})
	// Gmail answers well after the deadline would have passed.
	release := time.AfterFunc(5*timeout, func() { close(mail.release) })
	defer release.Stop()
	resp, body := rawPost(t, ts, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"send_email","arguments":{"to":"a@example.com","subject":"s","body_text":"b"}}}`,
		map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	if resp.StatusCode != 200 || !strings.Contains(body, `"id":"msg-1"`) || mail.count() != 1 {
		t.Fatalf("a send outliving the body deadline: %d %s (sent %d)", resp.StatusCode, body, mail.count())
	}
}

// A client that never finishes its headers is dropped after the header
// timeout.
func TestSlowHeadersAreCut(t *testing.T) {
	const timeout = 200 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("http://" + ln.Addr().String())
	s := NewServer(Deps{BaseURL: base, Auth: fakeAuth{base: base.String()}, Tools: tools.Deps{Drive: fakeDrive{}, Mail: &fakeMail{}}, Store: fakeStore{}})
	srv := newHTTPServer(s, timeouts{readHeader: timeout, idle: timeout}, slog.New(slog.DiscardHandler))
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST /oauth/token HTTP/1.1\r\nHost: x\r\n")
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(5 * time.Second))
	_, err = io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the server kept a connection whose headers never ended")
	}
	if took := time.Since(start); took > timeout+2*time.Second {
		t.Errorf("closed after %v, want about %v", took, timeout)
	}
}

// A body's memory follows the bytes that arrived, not the length it
// announced: a request that announces 4 MiB and brings 1 KiB before its
// connection breaks costs about that KiB. Before, readAtMost allocated
// the announced length first, and a hundred such requests held 400 MiB.
func TestBodyMemoryFollowsTheBytes(t *testing.T) {
	const limit = 4 << 20
	for _, tc := range []struct {
		name      string
		announced int64
		sent      int
		maxAlloc  uint64
	}{
		{"4 MiB announced, 1 KiB sent", limit, 1 << 10, 64 << 10},
		{"no length announced, 1 KiB sent", -1, 1 << 10, 64 << 10},
		{"4 MiB announced and sent", limit, limit, 2*limit + 64<<10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent := bytes.Repeat([]byte{' '}, tc.sent)
			broken := errors.New("connection reset")
			body := io.MultiReader(bytes.NewReader(sent), errReader{broken})
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			got, err := readAtMost(body, tc.announced, limit)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > tc.maxAlloc {
				t.Errorf("reading %d bytes allocated %d bytes, want at most %d", tc.sent, alloc, tc.maxAlloc)
			}
			if tc.sent < limit && !errors.Is(err, broken) || tc.sent == limit && (err != nil || len(got) != limit) {
				t.Errorf("got %d bytes, %v", len(got), err)
			}
		})
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// A client that writes its whole body before it reads the answer (as any
// client without "Expect: 100-continue" does) reads the refusal, rather
// than a connection reset under its write: the server answers at once,
// then reads and drops what remains of a small body before it closes.
// A body too large to wait for is not read: the connection ends at once.
func TestRefusalsReachClientsThatWriteTheirWholeBodyFirst(t *testing.T) {
	for _, tc := range []struct {
		name   string
		length int
		reads  bool // the client can write it all and read the answer
	}{
		{"a small body", 100_000, true},
		{"a body at the linger limit", lingerBytes, true},
		{"a body past the linger limit", lingerBytes + 64<<10, false},
	} {
		t.Run(tc.name, inBubble(func(t *testing.T) {
			ts := newBubbleServer(t, func(d *Deps) { d.BodyTimeout, d.MCPBodyTimeout = time.Minute, time.Minute })
			c := slowRequest(t, ts, "POST", "/upload", nil, tc.length, "")
			time.Sleep(100 * time.Millisecond) // the 401 is written, and (before the fix) the connection closed
			_, werr := c.Write(bytes.Repeat([]byte("x"), tc.length))
			a := awaitAnswer(c, 5*time.Second)
			if !tc.reads {
				if werr == nil && a.err == nil {
					t.Fatalf("the whole %d-byte body was taken in: want the connection ended", tc.length)
				}
				return
			}
			if werr != nil || a.err != nil || a.status != http.StatusUnauthorized {
				t.Fatalf("write: %v; answer %d (%v), want 401 read after the whole body", werr, a.status, a.err)
			}
			if a.closed > lingerTime {
				t.Errorf("the connection closed after %v, past the %v linger", a.closed, lingerTime)
			}
		}))
	}
}
