package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// post sends one JSON-RPC body to /mcp as token's user, with the usual
// client headers plus extra (an empty value removes a header; "Host" sets
// the request's Host).
func post(t *testing.T, ts *testServer, token, body string, extra map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range extra {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := ts.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const (
	toolsList   = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	searchCall  = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"drive_search","arguments":{"query":"q3"}}}`
	modernMeta  = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	modernCall  = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"drive_search","arguments":{"query":"q3"},` + modernMeta + `}}`
	claudeProbe = `{"jsonrpc":"2.0","id":"server-discover-probe-1","method":"server/discover","params":{` + modernMeta + `}}`
)

func initialize(version string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
}

// Claude.ai never echoes Mcp-Session-Id, and its calls come from several
// backend nodes: no request needs an id, and no id the server cannot
// place is a 404 (checklist E1; before, all of these were 404).
func TestRequestsNeedNoSession(t *testing.T) {
	ts := newTestServer(t, nil)
	retired := newSessionIDs([][]byte{[]byte("a secret this server no longer has")}).mint("user-1", 0)
	for _, tc := range []struct {
		name, session, body, want string
	}{
		{"tools/list without an id", "", toolsList, "send_email"},
		{"tools/call without an id", "", searchCall, "Q3 report.pdf"},
		{"an id of another server's making", "mcp-session-0b9b4ec8-7f36-4c57-a7b9-5d2a2c8e6d3f", toolsList, "send_email"},
		{"an id that is just a word", "abc", searchCall, "Q3 report.pdf"},
		{"an id from before a key was retired", retired, toolsList, "send_email"},
		{"initialize again on a session", "", initialize("2025-11-25"), `"protocolVersion":"2025-11-25"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := post(t, ts, testToken, tc.body, map[string]string{"Mcp-Session-Id": tc.session, "Mcp-Protocol-Version": "2025-11-25"})
			if resp.StatusCode != 200 || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
		})
	}
	first, _ := post(t, ts, testToken, initialize("2025-11-25"), nil)
	again, _ := post(t, ts, testToken, initialize("2025-11-25"), map[string]string{"Mcp-Session-Id": first.Header.Get("Mcp-Session-Id")})
	if again.StatusCode != 200 || again.Header.Get("Mcp-Session-Id") == "" || again.Header.Get("Mcp-Session-Id") == first.Header.Get("Mcp-Session-Id") {
		t.Errorf("initialize on an existing session: %d, ids %q then %q", again.StatusCode, first.Header.Get("Mcp-Session-Id"), again.Header.Get("Mcp-Session-Id"))
	}
}

// Every version a client may ask for at initialize is served; the version
// header may be missing or disagree with the session the way clients were
// seen to during the 2026-07-28 rollout; the 2026-07-28 discovery probe is
// answered (checklist E6, E7).
func TestProtocolVersions(t *testing.T) {
	ts := newTestServer(t, nil)
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		resp, body := post(t, ts, testToken, initialize(v), map[string]string{"Mcp-Protocol-Version": ""})
		if resp.StatusCode != 200 || !strings.Contains(body, `"protocolVersion":"`+v+`"`) || resp.Header.Get("Mcp-Session-Id") == "" {
			t.Errorf("initialize at %s: %d %s", v, resp.StatusCode, body)
		}
	}
	modernHeaders := func(version, method, name string) map[string]string {
		return map[string]string{"Mcp-Protocol-Version": version, "Mcp-Method": method, "Mcp-Name": name}
	}
	for _, tc := range []struct {
		name    string
		body    string
		headers map[string]string
		status  int
		want    []string
	}{
		{"no version header (claude-ai-mcp #70)", toolsList, map[string]string{"Mcp-Protocol-Version": ""}, 200, []string{"send_email"}},
		{"an older version than negotiated", toolsList, map[string]string{"Mcp-Protocol-Version": "2025-06-18"}, 200, []string{"send_email"}},
		{"2026-07-28 on a legacy request (SparkyFitness #2155)", searchCall, map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, 200, []string{"Q3 report.pdf"}},
		{"2025-11-25 on a 2026-07-28 request (claude-code #93290)", modernCall, modernHeaders("2025-11-25", "tools/call", "drive_search"), 200, []string{"Q3 report.pdf"}},
		{"a 2026-07-28 request", modernCall, modernHeaders("2026-07-28", "tools/call", "drive_search"), 200, []string{"Q3 report.pdf"}},
		{"Claude's discovery probe", claudeProbe, modernHeaders("2026-07-28", "server/discover", ""), 200, []string{`"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]`, `"id":"server-discover-probe-1"`}},
		{"a version from the future", strings.ReplaceAll(claudeProbe, "2026-07-28", "2027-01-01"), modernHeaders("2027-01-01", "server/discover", ""), 400, []string{`"code":-32022`, `"supported":["2026-07-28"`}},
		{"two modern versions that disagree", strings.ReplaceAll(claudeProbe, `"2026-07-28"`, `"2027-01-01"`), modernHeaders("2026-07-28", "server/discover", ""), 400, []string{`"code":-32020`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := post(t, ts, testToken, tc.body, tc.headers)
			if resp.StatusCode != tc.status {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tc.status)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("answer lacks %s: %s", w, body)
				}
			}
		})
	}
}

// Only POST carries MCP. A request of any other method meets the bearer
// check first (rmcp probes with GET, Gemini with HEAD, ChatGPT sends GET
// after idle: checklist A1), then a 405 with Allow (E3): 405 is what every
// client reads as "no listening stream" or "no session to end"; a 404
// made Claude Code think its session expired.
func TestOtherMethodsAre405AfterTheBearerCheck(t *testing.T) {
	ts := newTestServer(t, nil)
	for _, method := range []string{"GET", "HEAD", "DELETE", "OPTIONS", "PUT", "PATCH"} {
		for _, token := range []string{"", testToken} {
			req, _ := http.NewRequest(method, ts.URL+"/mcp", nil)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			switch {
			case token == "" && (resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == ""):
				t.Errorf("%s /mcp without a token: %d, WWW-Authenticate %q; want 401 with a challenge", method, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			case token != "" && (resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST"):
				t.Errorf("%s /mcp: %d, Allow %q; want 405 with Allow: POST", method, resp.StatusCode, resp.Header.Get("Allow"))
			}
		}
	}
}

// A client whose Accept names only JSON gets one JSON answer, even for a
// call that reports progress; one that accepts an event stream, in either
// order, gets the progress (checklist E4).
func TestAcceptDecidesTheAnswer(t *testing.T) {
	ts := newTestServer(t, nil)
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"send_email","_meta":{"progressToken":"p"},"arguments":{"to":"a@example.com","subject":"s","body_text":"b"}}}`
	for _, tc := range []struct {
		accept, contentType string
		progress            bool
	}{
		{"application/json", "application/json", false},
		{"application/json, text/event-stream", "text/event-stream", true},
		{"text/event-stream, application/json", "text/event-stream", true},
	} {
		resp, body := post(t, ts, testToken, call, map[string]string{"Accept": tc.accept, "Mcp-Protocol-Version": "2025-11-25"})
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.contentType) ||
			strings.Contains(body, "notifications/progress") != tc.progress || !strings.Contains(body, `"id":"msg-1"`) {
			t.Errorf("Accept %q: %d %s %s", tc.accept, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		if tc.contentType == "application/json" && !json.Valid([]byte(body)) {
			t.Errorf("Accept %q: not one JSON body: %s", tc.accept, body)
		}
	}
}

// A cancellation ends only its own user's call. The MCP library keys
// cancellations by session id, empty for every request without one (and
// for every 2026-07-28 request), so before, any user could end another's
// send by guessing its JSON-RPC id.
func TestCancellationsStayWithTheirUser(t *testing.T) {
	for _, tc := range []struct {
		name, call, cancel string
		headers            map[string]string
	}{
		{"without a session id", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_email","arguments":{"to":"a@example.com","subject":"s","body_text":"b"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"}},
		{"at 2026-07-28", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_email","arguments":{"to":"a@example.com","subject":"s","body_text":"b"},` + modernMeta + `}}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,` + modernMeta + `}}`, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "send_email"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mail := &fakeMail{release: make(chan struct{}), ctxs: make(chan context.Context, 1)}
			defer close(mail.release)
			ts := newTestServer(t, func(d *Deps) { d.Tools.Mail = mail })
			done := make(chan string, 1)
			go func() {
				_, body := post(t, ts, testToken, tc.call, tc.headers)
				done <- body
			}()
			var sendCtx context.Context
			select {
			case sendCtx = <-mail.ctxs:
			case <-time.After(5 * time.Second):
				t.Fatal("the send did not start")
			}
			cancelHeaders := map[string]string{"Mcp-Method": "notifications/cancelled", "Mcp-Name": ""}
			for k, v := range tc.headers {
				if k == "Mcp-Protocol-Version" {
					cancelHeaders[k] = v
				}
			}
			if resp, body := post(t, ts, otherToken, tc.cancel, cancelHeaders); resp.StatusCode != http.StatusAccepted {
				t.Fatalf("another user's cancellation: %d %s", resp.StatusCode, body)
			}
			if sendCtx.Err() != nil {
				t.Fatal("another user's cancellation ended the send")
			}
			if resp, body := post(t, ts, testToken, tc.cancel, cancelHeaders); resp.StatusCode != http.StatusAccepted {
				t.Fatalf("the user's own cancellation: %d %s", resp.StatusCode, body)
			}
			if sendCtx.Err() == nil {
				t.Fatal("the user's own cancellation did not end the send")
			}
			<-done
		})
	}
}
