package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/drivemail/drivemail/internal/logtest"
	"github.com/drivemail/drivemail/internal/memnet"
	"github.com/drivemail/drivemail/internal/metrics"
	"github.com/drivemail/drivemail/tools"
)

// testServer is NewServer over fakes, served on a loopback listener.
type testServer struct {
	*httptest.Server
	mail  *fakeMail
	logs  *logtest.Buffer
	srv   *Server
	meter *metrics.Metrics
	net   *memnet.Network // nil: loopback
	hc    *http.Client    // reaches the server
}

func newTestServer(t *testing.T, mutate func(*Deps)) *testServer {
	t.Helper()
	return startTestServer(t, nil, mutate)
}

// newBubbleServer is newTestServer for a test inside a testing/synctest
// bubble (call it there): served on an in-memory network, reached through
// ts.hc and ts.dial, so the bubble's clock runs the server's deadlines.
func newBubbleServer(t *testing.T, mutate func(*Deps)) *testServer {
	t.Helper()
	return startTestServer(t, memnet.New(), mutate)
}

// inBubble is test run inside a testing/synctest bubble, for t.Run or as
// a test's whole body: its server comes from newBubbleServer.
func inBubble(test func(t *testing.T)) func(t *testing.T) {
	return func(t *testing.T) { synctest.Test(t, test) }
}

// startTestServer is newTestServer on network n, or on loopback when n is
// nil.
func startTestServer(t *testing.T, n *memnet.Network, mutate func(*Deps)) *testServer {
	t.Helper()
	ts := &testServer{mail: &fakeMail{}, logs: &logtest.Buffer{}, net: n, hc: http.DefaultClient}
	if n != nil {
		ts.Server = n.NewUnstartedServer(nil)
		ts.hc = n.Client(t)
	} else {
		ts.Server = httptest.NewUnstartedServer(nil)
	}
	base, err := url.Parse("http://" + ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	d := Deps{
		Logger:  slog.New(slog.NewTextHandler(ts.logs, nil)),
		BaseURL: base,
		Version: "test",
		Auth:    fakeAuth{base: base.String()},
		Tools:   tools.Deps{Drive: fakeDrive{}, Mail: ts.mail},
		Store:   fakeStore{},
	}
	if mutate != nil {
		mutate(&d)
	}
	ts.srv = NewServer(d)
	ts.meter = d.Metrics
	ts.Config.Handler = ts.srv
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

// dial opens a connection to the server, for a request written by hand.
func (ts *testServer) dial(t *testing.T) net.Conn {
	t.Helper()
	addr := ts.Listener.Addr().String()
	var c net.Conn
	var err error
	if ts.net != nil {
		c, err = ts.net.DialContext(context.Background(), "tcp", addr)
	} else {
		c, err = net.Dial("tcp", addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// bearerTransport adds the test token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an official go-sdk client session at the given protocol
// version; progress notifications land in progress.
func connect(t *testing.T, ts *testServer, version string, progress chan<- *sdk.ProgressNotificationParams) *sdk.ClientSession {
	t.Helper()
	opts := &sdk.ClientOptions{}
	if progress != nil {
		opts.ProgressNotificationHandler = func(ctx context.Context, req *sdk.ProgressNotificationClientRequest) {
			progress <- req.Params
		}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "server-test", Version: "1"}, opts)
	tr := &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{testToken}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestMCPWithBothProtocolVersions(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ts := newTestServer(t, nil)
			progress := make(chan *sdk.ProgressNotificationParams, 16)
			cs := connect(t, ts, version, progress)
			ctx := context.Background()
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			if got := strings.Join(names, ","); got != "create_draft,drive_get_file,drive_search,request_upload,save_to_drive,send_email" {
				t.Fatalf("tools = %s", got)
			}
			params := &sdk.CallToolParams{Name: "send_email", Arguments: map[string]any{
				"to": "ana@example.com", "subject": "Q3", "body_text": "Attached.", "attachments": "1AbCdEfGhIjKlMnOpQrStUvWxYz012345"}}
			params.SetProgressToken("p-1")
			res, err := cs.CallTool(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("send_email refused: %v", res.Content)
			}
			sc, _ := json.Marshal(res.StructuredContent)
			if !strings.Contains(string(sc), `"id":"msg-1"`) {
				t.Errorf("structuredContent = %s", sc)
			}
			var got []*sdk.ProgressNotificationParams
			for len(got) < 3 {
				select {
				case p := <-progress:
					got = append(got, p)
				case <-time.After(5 * time.Second):
					t.Fatalf("got %d progress notifications, want 3", len(got))
				}
			}
			// The client may run notification handlers concurrently, so
			// order is not asserted; the server sends them in order.
			var maxDone float64
			for _, p := range got {
				if p.ProgressToken != "p-1" || p.Total != 3<<20 {
					t.Errorf("progress = %+v", *p)
				}
				maxDone = max(maxDone, p.Progress)
			}
			if maxDone != 3<<20 {
				t.Errorf("final progress %v, want %d", maxDone, 3<<20)
			}

			// A refusal is a result the model reads, not a protocol error.
			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "drive_get_file", Arguments: map[string]any{"file_id": "1AbCdEfGhIjKlMnOpQrStUvWxYz012345"}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "No Drive file with id") {
				t.Errorf("drive_get_file of a missing file = %+v", res.Content)
			}
		})
	}
}

// TestTwoReplicasNeedNoStickySessions starts a session on one server and
// continues it on another, as a load balancer without affinity would.
func TestTwoReplicasNeedNoStickySessions(t *testing.T) {
	a := newTestServer(t, nil)
	b := newTestServer(t, nil)
	post := func(ts *testServer, session, body string) *http.Response {
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := post(a, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lb","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || session == "" {
		t.Fatalf("initialize on a: %d, session %q", resp.StatusCode, session)
	}
	resp = post(b, session, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "send_email") {
		t.Fatalf("tools/list on b with a's session: %d %s", resp.StatusCode, body)
	}
}

func TestMCPNeedsABearerToken(t *testing.T) {
	ts := newTestServer(t, nil)
	resp, err := http.Post(ts.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("status %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

// rawPost sends one JSON-RPC body to /mcp as the test user.
func rawPost(t *testing.T, ts *testServer, body string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	return post(t, ts, testToken, body, headers)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func TestOriginGuard(t *testing.T) {
	ts := newTestServer(t, nil)
	addr := ts.Listener.Addr().String()
	port := addr[strings.LastIndex(addr, ":"):]
	cases := []struct {
		name    string
		headers map[string]string
		status  int
	}{
		{"rebound DNS name", map[string]string{"Host": "evil.example.com" + port, "Origin": "http://evil.example.com" + port}, 403},
		{"rebound name without origin", map[string]string{"Host": "evil.example.com" + port}, 403},
		{"foreign origin", map[string]string{"Origin": "https://evil.example.com"}, 403},
		{"null origin", map[string]string{"Origin": "null"}, 403},
		{"localhost with its origin", map[string]string{"Host": "localhost" + port, "Origin": "http://localhost" + port}, 200},
		{"base origin", map[string]string{"Origin": ts.URL}, 200},
		{"other loopback origin (local tools) on a loopback server", map[string]string{"Origin": "http://localhost:6274"}, 200},
		{"no origin (any non-browser client)", nil, 200},
	}
	for _, c := range cases {
		resp, body := rawPost(t, ts, initBody, c.headers)
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d (%s)", c.name, resp.StatusCode, c.status, body)
		}
	}
}

func TestOriginGuardBehindAReverseProxy(t *testing.T) {
	base, _ := url.Parse("https://mail.example.com")
	g := newOriginGuard(base)
	h := g.middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	cases := []struct {
		host, origin string
		status       int
	}{
		{"mail.example.com", "https://mail.example.com", 200},         // proxy keeps the public Host
		{"MAIL.example.com:443", "https://mail.example.com:443", 200}, // default port and case
		{"127.0.0.1:8080", "", 200},                                   // proxy rewrites Host to the upstream
		{"10.0.0.5:8080", "", 200},                                    // an IP literal cannot be rebound
		{"[::1]:8080", "", 200},
		{"evil.example.com", "", 403},
		{"mail.example.com", "https://evil.example.com", 403},
		{"mail.example.com", "http://mail.example.com", 403}, // scheme differs
		{"mail.example.com", "http://localhost:6274", 403},   // loopback origins only for a loopback base
		{"mail.example.com.evil.com", "", 403},
	}
	for _, c := range cases {
		req := httptest.NewRequest("POST", "http://x/mcp", nil)
		req.Host = c.host
		req.TLS = nil
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.status {
			t.Errorf("Host %q Origin %q: %d, want %d", c.host, c.origin, rec.Code, c.status)
		}
	}
}

func TestMCPBodyLimit(t *testing.T) {
	const limit = 2000
	ts := newTestServer(t, func(d *Deps) { d.MaxMCPBodyBytes = limit })
	pad := func(n int) string {
		// A valid initialize request padded with spaces to exactly n bytes.
		return initBody[:len(initBody)-1] + strings.Repeat(" ", n-len(initBody)) + "}"
	}
	resp, body := rawPost(t, ts, pad(limit), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("body of exactly %d bytes: %d %s", limit, resp.StatusCode, body)
	}
	resp, body = rawPost(t, ts, pad(limit+1), nil)
	if resp.StatusCode != 413 || !strings.Contains(body, "drive_search") || !strings.Contains(body, `"jsonrpc":"2.0"`) {
		t.Fatalf("body of %d bytes: %d %s", limit+1, resp.StatusCode, body)
	}
	// Without Content-Length (chunked), the cap holds too.
	req, _ := http.NewRequest("POST", ts.URL+"/mcp", io.MultiReader(strings.NewReader(pad(limit+1))))
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != 413 {
		t.Fatalf("chunked body over the limit: %d", r2.StatusCode)
	}
}

func TestInternalErrorsShowTheRequestIDAndLeakNothing(t *testing.T) {
	ts := newTestServer(t, nil)
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"send_email","arguments":{"to":"a@example.com","subject":"please fail","body_text":"x"}}}`
	resp, out := rawPost(t, ts, body, map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "mcp-session-" + "0b9b4ec8-7f36-4c57-a7b9-5d2a2c8e6d3f"})
	id := resp.Header.Get("X-Request-Id")
	if id == "" || !strings.Contains(out, "request id "+id) || !strings.Contains(out, `"isError":true`) {
		t.Fatalf("X-Request-Id %q, body %s", id, out)
	}
	if strings.Contains(out, "ya29") || strings.Contains(out, "HTTP 500") {
		t.Errorf("result leaks the internal error: %s", out)
	}
	logs := ts.logs.String()
	if !strings.Contains(logs, "request_id="+id) || !strings.Contains(logs, "user=user-1") {
		t.Errorf("log lacks the request id or user:\n%s", logs)
	}
	if strings.Contains(logs, testToken) {
		t.Errorf("log contains the bearer token:\n%s", logs)
	}
}

func TestLogsCarryNoQueryString(t *testing.T) {
	ts := newTestServer(t, nil)
	resp, err := http.Get(ts.URL + "/oauth/callback?code=SECRETCODE&state=s1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if logs := ts.logs.String(); strings.Contains(logs, "SECRETCODE") || !strings.Contains(logs, "path=/oauth/callback") {
		t.Errorf("log:\n%s", logs)
	}
}

func TestOAuthBodyLimit(t *testing.T) {
	ts := newTestServer(t, nil)
	for n, want := range map[int]int{maxFormBodyBytes: 200, maxFormBodyBytes + 1: 413} {
		resp, err := http.Post(ts.URL+"/oauth/register", "application/json", strings.NewReader(strings.Repeat("x", n)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%d-byte body: %d, want %d", n, resp.StatusCode, want)
		}
	}
}

func TestRoutesAndHeaders(t *testing.T) {
	ts := newTestServer(t, nil)
	for path, want := range map[string]int{
		"/.well-known/oauth-protected-resource":     200,
		"/.well-known/oauth-protected-resource/mcp": 200,
		"/.well-known/oauth-authorization-server":   200,
		"/healthz":   200,
		"/elsewhere": 404,
	} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
		for _, h := range []string{"X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy", "X-Request-Id"} {
			if resp.Header.Get(h) == "" {
				t.Errorf("GET %s lacks %s", path, h)
			}
		}
	}
	// Uploads are not wired: the routes say so instead of 404.
	req, _ := http.NewRequest("PUT", ts.URL+"/upload/some-ticket", strings.NewReader("x"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 501 || !strings.Contains(string(b), "does not accept uploads") {
		t.Errorf("PUT /upload/x: %d %s", resp.StatusCode, b)
	}
}

func TestHealthz(t *testing.T) {
	for _, c := range []struct {
		store  Pinger
		status int
		want   string
	}{
		{fakeStore{}, 200, `"store":"ok"`},
		{fakeStore{err: io.ErrUnexpectedEOF}, 503, `"store":"unreachable"`},
	} {
		ts := newTestServer(t, func(d *Deps) { d.Store = c.store })
		resp, err := http.Get(ts.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.want) || strings.Contains(string(b), "EOF") {
			t.Errorf("healthz: %d %s", resp.StatusCode, b)
		}
	}
}

func TestPanicsBecome500WithTheRequestID(t *testing.T) {
	logs := &logtest.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	h := logRequests(logger, remoteIP)(recoverPanics(logger)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic("secret detail")
	})))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	id := rec.Header().Get("X-Request-Id")
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), id) || strings.Contains(rec.Body.String(), "secret detail") {
		t.Fatalf("%d %q", rec.Code, rec.Body.String())
	}
	if !strings.Contains(logs.String(), "handler panicked") {
		t.Errorf("panic not logged: %s", logs)
	}
}
