package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// A session DELETE is refused with 405 (the transport spec's answer for a
// server that does not let clients end sessions), and the session id keeps
// working, so the refusal tells the truth.
func TestSessionDeleteIsRefused(t *testing.T) {
	ts := newTestServer(t, nil)
	resp, body := rawPost(t, ts, initBody, nil)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d, session %q: %s", resp.StatusCode, session, body)
	}

	for _, tc := range []struct {
		name     string
		token    string
		want     int
		wantBody string
	}{
		{"with a token", testToken, http.StatusMethodNotAllowed, "no session to end"},
		{"without a token", "", http.StatusUnauthorized, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodDelete, ts.URL+"/mcp", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want || !strings.Contains(string(b), tc.wantBody) {
				t.Fatalf("DELETE /mcp: %d %q, want %d with %q", resp.StatusCode, b, tc.want, tc.wantBody)
			}
			if tc.want == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != "GET, POST" {
				t.Errorf("Allow %q, want \"GET, POST\"", resp.Header.Get("Allow"))
			}
		})
	}

	resp, body = rawPost(t, ts, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "send_email") {
		t.Fatalf("tools/list after the refused DELETE: %d %s", resp.StatusCode, body)
	}
}

// The official go-sdk client ends a session with DELETE on Close; the 405
// must not turn into an error there.
func TestClientCloseAcceptsTheRefusal(t *testing.T) {
	ts := newTestServer(t, nil)
	cs := connect(t, ts, "2025-11-25", nil)
	if err := cs.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
