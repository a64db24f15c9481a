package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/drivemail/drivemail/internal/ask"
	"github.com/drivemail/drivemail/tools"
)

// askTool is a tool registered only in these tests: it asks its user
// whether to send, and says how the question ended.
func askTool() mcpserver.ServerTool {
	return mcpserver.ServerTool{
		Tool: mcp.NewTool("ask_test", mcp.WithDescription("Asks its user, for tests."), mcp.WithString("subject")),
		Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			answer, retry := ask.Form(ctx, req, ask.Question{
				Key:     "confirm",
				Message: "Send " + req.GetString("subject", "") + "?",
				Schema: map[string]any{"type": "object", "required": []string{"send"},
					"properties": map[string]any{"send": map[string]any{"type": "boolean", "title": "Send now"}}},
			})
			if retry != nil {
				return retry, nil
			}
			return mcp.NewToolResultText(fmt.Sprintf("%s %v possible=%v", answer.Outcome, answer.Content, ask.Possible(ctx))), nil
		},
	}
}

// withAskTool registers askTool, and a single-use store for answers.
func withAskTool(d *Deps) {
	d.testTools = append(d.testTools, askTool())
	d.UseOnce = singleUse()
}

// singleUse is a store's UseOnce, in memory.
func singleUse() func(ctx context.Context, key string, expires time.Time) error {
	var mu sync.Mutex
	used := map[string]bool{}
	return func(ctx context.Context, key string, expires time.Time) error {
		mu.Lock()
		defer mu.Unlock()
		if used[key] {
			return errors.New("used")
		}
		used[key] = true
		return nil
	}
}

// bubbleServer is a server for a synctest bubble: no listener.
func bubbleServer(mutate func(*Deps)) http.Handler {
	base, _ := url.Parse("http://drivemail.test")
	d := Deps{Logger: slog.New(slog.DiscardHandler), BaseURL: base, Version: "test", Auth: fakeAuth{base: base.String()},
		Tools: tools.Deps{Drive: fakeDrive{}, Mail: &fakeMail{}}, Store: fakeStore{}}
	mutate(&d)
	return NewServer(d)
}

// withBearer adds token to every request.
type withBearer struct {
	token string
	next  http.RoundTripper
}

func (b withBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// askingClient connects the official go-sdk client at version as the
// test user, answering questions with answer (nil: it declares no
// elicitation).
func askingClient(t *testing.T, h http.Handler, version string, answer func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error)) *sdk.ClientSession {
	t.Helper()
	return askingClientAs(t, h, testToken, version, answer)
}

// askingClientAs is askingClient with the bearer token of another user.
func askingClientAs(t *testing.T, h http.Handler, token, version string, answer func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error)) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "ask-test", Version: "1"}, &sdk.ClientOptions{ElicitationHandler: answer})
	tr := &sdk.StreamableClientTransport{Endpoint: "http://drivemail.test/mcp", HTTPClient: &http.Client{Transport: withBearer{token, inProcess{h}}}}
	cs, err := client.Connect(context.Background(), tr, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect at %s: %v", version, err)
	}
	return cs
}

func callAsk(t *testing.T, cs *sdk.ClientSession) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ask_test", Arguments: map[string]any{"subject": "Q3"}})
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	return res.Content[0].(*sdk.TextContent).Text
}

// A tool asks its user through the official go-sdk client, whichever
// protocol it speaks: on the call's event stream at 2025-06-18 and
// 2025-11-25, by input_required and a retry at 2026-07-28. Each answer
// reaches the call; a client that declared nothing is not asked.
func TestToolsAskTheirUser(t *testing.T) {
	reply := func(action string, content map[string]any) func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		return func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			if req.Params.Message != "Send Q3?" {
				return nil, fmt.Errorf("asked %q", req.Params.Message)
			}
			return &sdk.ElicitResult{Action: action, Content: content}, nil
		}
	}
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		for _, tc := range []struct {
			name   string
			answer func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error)
			want   string
		}{
			{"accept", reply("accept", map[string]any{"send": true}), "accepted map[send:true] possible=true"},
			{"decline", reply("decline", nil), "declined map[] possible=true"},
			{"cancel", reply("cancel", nil), "cancelled map[] possible=true"},
			{"a client that declared no elicitation", nil, "unaskable map[] possible=false"},
		} {
			t.Run(version+"/"+tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					cs := askingClient(t, bubbleServer(withAskTool), version, tc.answer)
					defer cs.Close()
					if got := callAsk(t, cs); got != tc.want {
						t.Errorf("got %q, want %q", got, tc.want)
					}
				})
			})
		}
	}
}

// A 2025 client that never answers: the call ends after ask.DefaultWait
// with the question unanswered, and nothing of it is left running (the
// bubble ends only when every goroutine has). The answer that comes at
// last finds no call, and the session goes on: the next question is
// answered.
func TestAnUnansweredQuestionEndsTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late := make(chan struct{})
		cs := askingClient(t, bubbleServer(withAskTool), "2025-11-25", func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			<-late
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"send": true}}, nil
		})
		defer cs.Close()
		start := time.Now()
		got := callAsk(t, cs)
		if waited := time.Since(start); got != "unanswered map[] possible=true" || waited != ask.DefaultWait {
			t.Errorf("got %q after %v, want unanswered after %v", got, waited, ask.DefaultWait)
		}
		close(late)
		synctest.Wait()
		if got := callAsk(t, cs); got != "accepted map[send:true] possible=true" {
			t.Errorf("a second call after the late answer: %q", got)
		}
	})
}

// startSession initializes a 2025-11-25 session of the test user that
// declares caps, and returns its id.
func startSession(t *testing.T, ts *testServer, caps string) string {
	t.Helper()
	resp, body := post(t, ts, testToken, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"t","version":"1"}}}`,
		map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	if resp.StatusCode != 200 {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	return resp.Header.Get("Mcp-Session-Id")
}

const askCall = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ask_test","arguments":{"subject":"Q3"}}}`

// askOnStream calls ask_test in session and reads the question off the
// call's event stream: it returns the answer that accepts it, and what
// reads the call's next event.
func askOnStream(t *testing.T, ts *testServer, session string) (accept string, next func() string) {
	t.Helper()
	req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(askCall))
	for k, val := range map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": session} {
		req.Header.Set(k, val)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	events := bufio.NewScanner(resp.Body)
	next = func() string {
		for events.Scan() {
			if data, ok := strings.CutPrefix(events.Text(), "data: "); ok {
				return data
			}
		}
		t.Fatalf("the stream ended: %v", events.Err())
		return ""
	}
	var question struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Message string `json:"message"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(next()), &question); err != nil || question.Method != "elicitation/create" || question.Params.Message != "Send Q3?" {
		t.Fatalf("first event: %+v (%v), want the question", question, err)
	}
	return `{"jsonrpc":"2.0","id":` + string(question.ID) + `,"result":{"action":"accept","content":{"send":true}}}`, next
}

// The answer to a question reaches its call only from the user and the
// session it was asked in: an answer from the user's other session, or
// with another user's token, is refused and the call keeps waiting for
// the right one. A call that cannot carry a question (no session id, an
// answer that may not be a stream) is not asked.
func TestAnswersReachOnlyTheirCall(t *testing.T) {
	ts := newTestServer(t, withAskTool)
	asking, other, mute := startSession(t, ts, `{"elicitation":{}}`), startSession(t, ts, `{"elicitation":{}}`), startSession(t, ts, `{}`)
	for _, tc := range []struct{ name, session, accept string }{
		{"no session id", "", "application/json, text/event-stream"},
		{"a session that declared no elicitation", mute, "application/json, text/event-stream"},
		{"an answer that may not be a stream", asking, "application/json"},
	} {
		_, body := post(t, ts, testToken, askCall, map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": tc.session, "Accept": tc.accept})
		if !strings.Contains(body, "unaskable") {
			t.Errorf("%s: %s, want the call not to ask", tc.name, body)
		}
	}

	answer, next := askOnStream(t, ts, asking)
	var id struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal([]byte(answer), &id)
	for _, tc := range []struct {
		name, token, session string
		status               int
	}{
		{"from the user's other session", testToken, other, 400},
		{"without the session", testToken, "", 400},
		{"with another user's token", otherToken, asking, 404},
		{"from its session", testToken, asking, 202},
		{"again, once taken", testToken, asking, 400},
	} {
		resp, body := post(t, ts, tc.token, answer, map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": tc.session})
		if resp.StatusCode != tc.status {
			t.Fatalf("an answer %s: %d %s, want %d", tc.name, resp.StatusCode, body, tc.status)
		}
		if tc.status == 400 && !strings.Contains(body, `"id":`+string(id.ID)) {
			t.Errorf("an answer %s: %s, want an error carrying the answer's id", tc.name, body)
		}
	}
	if final := next(); !strings.Contains(final, "accepted map[send:true]") || !strings.Contains(final, `"id":9`) {
		t.Errorf("the call's result: %s", final)
	}
}

// A user at their limit of requests in flight can still answer the call
// that waits: one small request more is read for it, and let through only
// when it is the answer.
func TestAnAnswerPassesTheUsersLimit(t *testing.T) {
	ts := newTestServer(t, func(d *Deps) {
		withAskTool(d)
		d.MaxMCPRequestsPerUser = 1
	})
	session := startSession(t, ts, `{"elicitation":{}}`)
	answer, next := askOnStream(t, ts, session)
	if resp, body := post(t, ts, testToken, toolsList, map[string]string{"Mcp-Session-Id": session}); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("another request at the limit: %d %s, want 429", resp.StatusCode, body)
	}
	if resp, body := post(t, ts, testToken, answer, map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": session}); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("the answer at the limit: %d %s, want 202", resp.StatusCode, body)
	}
	if final := next(); !strings.Contains(final, "accepted map[send:true]") {
		t.Errorf("the call's result: %s", final)
	}
}

// A 2026-07-28 client is asked by input_required; its retry's answer is
// believed only with the state it was given, for the same user, tool and
// arguments, once. Anything else is asked again, never an error.
func TestRetriesCarryTheirOwnAnswer(t *testing.T) {
	ts := newTestServer(t, withAskTool)
	meta := func(caps string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	}
	headers := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "ask_test"}
	call := func(token, subject, extra, caps string) map[string]any {
		t.Helper()
		resp, body := post(t, ts, token, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask_test","arguments":{"subject":"`+subject+`"},`+extra+meta(caps)+`}}`, headers)
		var out struct {
			Result map[string]any `json:"result"`
		}
		if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &out) != nil || out.Result == nil {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		return out.Result
	}
	asked := call(testToken, "Q3", "", `{"elicitation":{}}`)
	state, _ := asked["requestState"].(string)
	q, _ := asked["inputRequests"].(map[string]any)["confirm"].(map[string]any)
	if asked["resultType"] != "input_required" || state == "" || q["method"] != "elicitation/create" {
		t.Fatalf("first call: %v, want input_required with a state and the question", asked)
	}
	if msg, _ := q["params"].(map[string]any)["message"].(string); msg != "Send Q3?" {
		t.Errorf("the question: %v", q)
	}
	retry := func(s string) string {
		return `"inputResponses":{"confirm":{"action":"accept","content":{"send":true}}},"requestState":"` + s + `",`
	}
	text := func(r map[string]any) string {
		if r["resultType"] == "input_required" {
			return "asked again"
		}
		content, _ := r["content"].([]any)
		if len(content) == 0 {
			return fmt.Sprint(r)
		}
		s, _ := content[0].(map[string]any)["text"].(string)
		return s
	}
	tampered := []byte(state)
	tampered[len(tampered)-1] ^= 1
	for _, tc := range []struct {
		name, token, subject, extra string
		want                        string
	}{
		{"another user with the state", otherToken, "Q3", retry(state), "asked again"},
		{"other arguments with the state", testToken, "Q4", retry(state), "asked again"},
		{"a forged state", testToken, "Q3", retry(string(tampered)), "asked again"},
		{"an answer without a state", testToken, "Q3", retry(""), "asked again"},
		{"the retry", testToken, "Q3", retry(state), "accepted map[send:true] possible=true"},
		{"the same retry again", testToken, "Q3", retry(state), "asked again"},
	} {
		if got := text(call(tc.token, tc.subject, tc.extra, `{"elicitation":{}}`)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := text(call(testToken, "Q3", "", `{}`)); got != "unaskable map[] possible=false" {
		t.Errorf("a client without elicitation: %q", got)
	}
	if got := text(call(testToken, "Q3", "", `{"elicitation":{"url":{}}}`)); got != "unaskable map[] possible=false" {
		t.Errorf("a client with URL elicitation only: %q", got)
	}
}

// ui:// resources (an MCP App's views) pass through /mcp in both eras;
// a server without any declares no resources capability.
func TestResourcesPassThrough(t *testing.T) {
	view := mcp.NewResource("ui://drivemail/test", "test view", mcp.WithMIMEType("text/html;profile=mcp-app"))
	ts := newTestServer(t, func(d *Deps) {
		d.Resources = []mcpserver.ServerResource{{Resource: view, Handler: func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: view.URI, MIMEType: view.MIMEType, Text: "<!doctype html><p>hi</p>"}}, nil
		}}}
	})
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		cs := connect(t, ts, version, nil)
		list, err := cs.ListResources(context.Background(), nil)
		if err != nil || len(list.Resources) != 1 || list.Resources[0].URI != view.URI {
			t.Fatalf("%s resources/list: %+v %v", version, list, err)
		}
		read, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: view.URI})
		if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "<!doctype html><p>hi</p>" || read.Contents[0].MIMEType != "text/html;profile=mcp-app" {
			t.Fatalf("%s resources/read: %+v %v", version, read, err)
		}
	}
	_, body := post(t, newTestServer(t, nil), testToken, initialize("2025-11-25"), nil)
	if strings.Contains(body, `"resources"`) {
		t.Errorf("a server without resources declares them: %s", body)
	}
}
