package server

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// A session id belongs to the user it was given to. Any
// replica with the same secret honours it, with no shared table; another
// user's token with it is refused with 404 (the spec's "start a new
// session", which is what a client that switched accounts needs); a
// replica whose keys never made it serves the request as if there were no
// id. Before, ids were checked for shape only and anyone's worked.
func TestSessionIDsBelongToTheirUser(t *testing.T) {
	secret := []byte("the deployment's secret, 32 bytes")
	a := newTestServer(t, func(d *Deps) { d.SessionSecrets = [][]byte{secret} })
	b := newTestServer(t, func(d *Deps) { d.SessionSecrets = [][]byte{[]byte("a newer secret"), secret} })
	other := newTestServer(t, func(d *Deps) { d.SessionSecrets = [][]byte{[]byte("another deployment's secret")} })

	resp, body := post(t, a, testToken, initialize("2025-11-25"), nil)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || !strings.HasPrefix(id, sessionIDPrefix) || !wellFormedSessionID(id) {
		t.Fatalf("initialize: %d, session id %q: %s", resp.StatusCode, id, body)
	}
	for _, tc := range []struct {
		name   string
		ts     *testServer
		token  string
		body   string
		status int
		want   string
	}{
		{"its user, on the replica that made it", a, testToken, toolsList, 200, "send_email"},
		{"its user, on a replica that lists the secret second", b, testToken, toolsList, 200, "send_email"},
		{"its user, on a server that never had the key", other, testToken, toolsList, 200, "send_email"},
		{"another user", a, otherToken, toolsList, 404, "belongs to another sign-in"},
		{"another user, on another replica", b, otherToken, searchCall, 404, "belongs to another sign-in"},
		{"another user starting a session (a client that switched accounts)", a, otherToken, initialize("2025-11-25"), 200, `"protocolVersion":"2025-11-25"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := post(t, tc.ts, tc.token, tc.body, map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"})
			if resp.StatusCode != tc.status || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %s, want %d with %q", resp.StatusCode, body, tc.status, tc.want)
			}
			if strings.Contains(body, "user-1") || strings.Contains(body, "demo@example.com") {
				t.Errorf("the refusal names the session's owner: %s", body)
			}
		})
	}
}

// Absurd ids are refused before the body is read; two ids are refused.
func TestMalformedSessionIDsAreRefusedEarly(t *testing.T) {
	ts := newTestServer(t, func(d *Deps) { d.BodyTimeout, d.MCPBodyTimeout = time.Minute, time.Minute })
	c := slowRequest(t, ts, "POST", "/mcp", map[string]string{
		"Authorization": "Bearer " + testToken, "Content-Type": "application/json",
		"Mcp-Session-Id": strings.Repeat("x", 5000)}, 1000, "")
	if a := awaitAnswer(c, 5*time.Second); a.err != nil || a.status != 400 || !strings.Contains(a.body, "without it") {
		t.Fatalf("a 5,000-character id: %d %q (%v); want 400 at once, the body unread", a.status, a.body, a.err)
	}
	for _, id := range []string{strings.Repeat("x", maxSessionIDLen+1), "dm_ms_a b", "dm_ms_é"} {
		resp, body := post(t, ts, testToken, toolsList, map[string]string{"Mcp-Session-Id": id})
		if resp.StatusCode != 400 {
			t.Errorf("id %.20q: %d %s, want 400", id, resp.StatusCode, body)
		}
	}
	req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(toolsList))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Add("Mcp-Session-Id", "one")
	req.Header.Add("Mcp-Session-Id", "two")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("two session ids: %d, want 400", resp.StatusCode)
	}
	if resp, body := post(t, ts, testToken, toolsList, map[string]string{"Mcp-Session-Id": strings.Repeat("x", maxSessionIDLen)}); resp.StatusCode != 200 {
		t.Errorf("an id of exactly %d characters: %d %s", maxSessionIDLen, resp.StatusCode, body)
	}
}

// Nobody can listen to another user's session: there is no listening
// stream (GET is 405 for everyone), and a call's progress travels only on
// its own response. Before, a second user's GET on the first user's id
// was given a stream that took the first user's progress notifications.
func TestProgressReachesOnlyItsCaller(t *testing.T) {
	ts := newTestServer(t, nil)
	resp, _ := post(t, ts, testToken, initialize("2025-11-25"), nil)
	id := resp.Header.Get("Mcp-Session-Id")

	req, _ := http.NewRequest("GET", ts.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+otherToken)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	stream.Body.Close()
	if stream.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("another user's GET on the session: %d, want 405 (no stream)", stream.StatusCode)
	}
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"send_email","_meta":{"progressToken":"p"},"arguments":{"to":"a@example.com","subject":"s","body_text":"b"}}}`
	_, body := post(t, ts, testToken, call, map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"})
	if n := strings.Count(body, "notifications/progress"); n != 3 {
		t.Errorf("the caller got %d of 3 progress notifications: %s", n, body)
	}
}

// The go-sdk client ends a session with DELETE on Close; the 405 must not
// be an error there.
func TestClientCloseAcceptsTheRefusal(t *testing.T) {
	ts := newTestServer(t, nil)
	cs := connect(t, ts, "2025-11-25", nil)
	if err := cs.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
