package server

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// held is what userID holds in /mcp now.
func (l *userLoad) held(userID string) (int, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h := l.users[userID]; h != nil {
		return h.requests, h.bytes
	}
	return 0, 0
}

// awaitHeld waits until userID holds requests on ts's /mcp.
func awaitHeld(t *testing.T, ts *testServer, userID string, requests int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if n, _ := ts.srv.mcp.load.held(userID); n == requests {
			return
		}
		if time.Now().After(deadline) {
			n, b := ts.srv.mcp.load.held(userID)
			t.Fatalf("%s holds %d requests (%d bytes), want %d", userID, n, b, requests)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// holdSlowly opens a request of user-1 announcing length bytes that never
// arrive, and waits until /mcp holds it.
func holdSlowly(t *testing.T, ts *testServer, length int) net.Conn {
	t.Helper()
	n, _ := ts.srv.mcp.load.held("user-1")
	c := slowRequest(t, ts, "POST", "/mcp",
		map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/json"}, length, `{"jsonrpc":`)
	awaitHeld(t, ts, "user-1", n+1)
	return c
}

// One user has at most --max-mcp-requests-per-user requests in flight:
// the next is refused at once with 429, Retry-After and a sentence, while
// another user is served; once one ends, the user is served again.
func TestOneUsersRequestsInFlightAreCapped(t *testing.T) {
	const cap = 3
	ts := newTestServer(t, func(d *Deps) {
		d.MaxMCPRequestsPerUser = cap
		d.BodyTimeout, d.MCPBodyTimeout = time.Minute, time.Minute
	})
	var slow []net.Conn
	for range cap {
		slow = append(slow, holdSlowly(t, ts, 1000))
	}
	resp, body := post(t, ts, testToken, toolsList, nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "2" ||
		!strings.Contains(body, `"code":-32000`) || !strings.Contains(body, "3 requests to this drivemail server running at once") {
		t.Fatalf("request %d in flight: %d Retry-After %q %s, want 429 with Retry-After and a sentence", cap+1, resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if resp, body := post(t, ts, otherToken, toolsList, nil); resp.StatusCode != 200 || !strings.Contains(body, "send_email") {
		t.Fatalf("another user meanwhile: %d %s", resp.StatusCode, body)
	}
	slow[0].Close()
	awaitHeld(t, ts, "user-1", cap-1)
	if resp, body := post(t, ts, testToken, toolsList, nil); resp.StatusCode != 200 {
		t.Fatalf("after one ended: %d %s", resp.StatusCode, body)
	}
}

// One user's requests in flight hold at most twice the largest body: a
// request that fits exactly is served, one byte past it is refused with
// 429 before its body is read.
func TestOneUsersBodyBytesAreCapped(t *testing.T) {
	const maxBody = 1000
	ts := newTestServer(t, func(d *Deps) {
		d.MaxMCPBodyBytes = maxBody
		d.BodyTimeout, d.MCPBodyTimeout = time.Minute, time.Minute
	})
	holdSlowly(t, ts, maxBody)
	holdSlowly(t, ts, maxBody-len(toolsList))
	if resp, body := post(t, ts, testToken, toolsList, nil); resp.StatusCode != 200 {
		t.Fatalf("a request that fills the budget exactly: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(t, ts, testToken, toolsList+" ", nil); resp.StatusCode != http.StatusTooManyRequests ||
		!strings.Contains(body, "already carry") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("one byte past the budget: %d %s, want 429", resp.StatusCode, body)
	}
	if resp, _ := post(t, ts, otherToken, toolsList, nil); resp.StatusCode != 200 {
		t.Fatalf("another user meanwhile: %d", resp.StatusCode)
	}
}
