package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/account/accounttest"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/upload"
)

// fakeDrive records what the tools asked and answers with canned data.
type fakeDrive struct {
	query  drive.Query
	gotID  string    // the id of gotRef
	gotRef drive.Ref // the file Get was asked for
	page   drive.Page
	file   drive.File
	err    error
	called int
}

func (f *fakeDrive) Search(ctx context.Context, _ *account.Account, q drive.Query) (drive.Page, error) {
	f.called++
	f.query = q
	return f.page, f.err
}

func (f *fakeDrive) Get(ctx context.Context, _ *account.Account, ref drive.Ref) (drive.File, error) {
	f.called++
	f.gotRef, f.gotID = ref, ref.ID
	return f.file, f.err
}

// fakeMail records the request and answers with res or err (draft, for
// SendDraft).
type fakeMail struct {
	mu      sync.Mutex
	req     compose.Request
	opts    SendOptions
	res     compose.Result
	err     error
	called  int
	draftID string
	draft   compose.DraftSent
}

func (f *fakeMail) SendDraft(ctx context.Context, _ *account.Account, id string, _ func(context.Context, compose.Summary) error) (compose.DraftSent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.called++
	f.draftID = id
	return f.draft, f.err
}

func (f *fakeMail) Send(ctx context.Context, _ *account.Account, req compose.Request, opts SendOptions) (compose.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.called++
	f.req, f.opts = req, opts
	return f.res, f.err
}

type fakeUploads struct {
	req    upload.Request
	ticket upload.Ticket
	err    error
	called int
}

func (f *fakeUploads) RequestUpload(ctx context.Context, _ *account.Account, req upload.Request) (upload.Ticket, error) {
	f.called++
	f.req = req
	return f.ticket, f.err
}

// harness is an MCP server with the tools over fakes, called the way a
// client would: JSON-RPC messages in, JSON out. Each call's account is
// user's, its Google calls through hc with google's options (an
// emulator's, for the tests that send through the real compose).
type harness struct {
	t       *testing.T
	srv     *server.MCPServer
	drive   *fakeDrive
	mail    *fakeMail
	uploads *fakeUploads
	logs    *bytes.Buffer
	user    identity.User
	hc      *http.Client
	google  account.Options
	deps    Deps // as the tools were given them
	// ctx is every request's context: what the transport would have put
	// in it (views.WithRenders, for a client that renders views).
	ctx context.Context
}

func newHarness(t *testing.T, mutate func(*Deps)) *harness {
	t.Helper()
	h := &harness{
		t:       t,
		ctx:     context.Background(),
		drive:   &fakeDrive{},
		mail:    &fakeMail{},
		uploads: &fakeUploads{},
		logs:    &bytes.Buffer{},
		user: identity.User{ID: "u1", Email: "demo@example.com", GoogleScopes: []string{
			"https://www.googleapis.com/auth/gmail.send", "https://www.googleapis.com/auth/drive.readonly"}},
	}
	d := Deps{
		Account:   func(context.Context) (*account.Account, error) { return accounttest.Over(h.user, h.hc, h.google), nil },
		Drive:     h.drive,
		Mail:      h.mail,
		Uploads:   h.uploads,
		Logger:    slog.New(slog.NewTextHandler(h.logs, nil)),
		RequestID: func(context.Context) string { return "req-42" },
	}
	if mutate != nil {
		mutate(&d)
	}
	h.deps = d
	h.rebuild()
	return h
}

// rebuild makes the MCP server again from h.deps, after a test changed them.
func (h *harness) rebuild() {
	h.srv = server.NewMCPServer("drivemail", "test", server.WithToolCapabilities(false), server.WithToolFilter(Filter(h.deps)))
	h.srv.AddTools(Tools(h.deps)...)
}

// rpc sends one JSON-RPC request and returns the raw result.
func (h *harness) rpc(method string, params any) json.RawMessage {
	h.t.Helper()
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		h.t.Fatal(err)
	}
	resp := h.srv.HandleMessage(h.ctx, msg)
	out, err := json.Marshal(resp)
	if err != nil {
		h.t.Fatal(err)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(out, &env); err != nil {
		h.t.Fatal(err)
	}
	if env.Error != nil {
		h.t.Fatalf("%s: JSON-RPC error %s", method, env.Error)
	}
	return env.Result
}

// callResult is a tools/call result as a client decodes it.
type callResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func (c callResult) text() string {
	var parts []string
	for _, p := range c.Content {
		parts = append(parts, p.Text)
	}
	return strings.Join(parts, "\n")
}

// call invokes a tool with args (any JSON value, or a raw string of JSON).
func (h *harness) call(tool string, args any) callResult {
	h.t.Helper()
	if s, ok := args.(string); ok {
		args = json.RawMessage(s)
	}
	raw := h.rpc("tools/call", map[string]any{"name": tool, "arguments": args})
	var res callResult
	if err := json.Unmarshal(raw, &res); err != nil {
		h.t.Fatalf("decode result: %v\n%s", err, raw)
	}
	if !res.IsError {
		h.checkOutput(tool, res.StructuredContent)
	}
	return res
}

// mustRefuse calls a tool and asserts an isError result containing every
// one of wants.
func (h *harness) mustRefuse(tool string, args any, wants ...string) callResult {
	h.t.Helper()
	res := h.call(tool, args)
	if !res.IsError {
		h.t.Fatalf("%s(%v): want a refusal, got success: %s", tool, args, res.text())
	}
	for _, w := range wants {
		if !strings.Contains(res.text(), w) {
			h.t.Errorf("%s(%v): refusal %q lacks %q", tool, args, res.text(), w)
		}
	}
	if !startsLikeASentence(res.text()) {
		h.t.Errorf("%s(%v): refusal %q does not start like a sentence (a capital letter, or a quoted name)", tool, args, res.text())
	}
	return res
}

// startsLikeASentence reports whether text begins with a capital letter,
// with a quoted field name or value ("page_token" …), or with the
// product's own lower-case name; never with a lower-case word, nor an
// identifier whose first letter was capitalised ("Page_token").
func startsLikeASentence(text string) bool {
	if strings.HasPrefix(text, "drivemail ") {
		return true
	}
	word, _, _ := strings.Cut(text, " ")
	r, _ := utf8.DecodeRuneInString(word)
	return r == '"' || unicode.IsUpper(r) && !strings.Contains(word, "_")
}

// checkOutput validates structuredContent against the outputSchema the
// caller was listed for the tool, as a strict client would.
func (h *harness) checkOutput(tool string, structured json.RawMessage) {
	h.t.Helper()
	if len(structured) == 0 {
		h.t.Fatalf("%s: success without structuredContent", tool)
	}
	var list struct {
		Tools []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(h.rpc("tools/list", map[string]any{}), &list); err != nil {
		h.t.Fatal(err)
	}
	var output json.RawMessage
	for _, t := range list.Tools {
		if t.Name == tool {
			output = t.OutputSchema
		}
	}
	sch := compileSchema(h.t, tool+" output", output)
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(structured))
	if err != nil {
		h.t.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		h.t.Errorf("%s: structuredContent does not match its outputSchema: %v\n%s", tool, err, structured)
	}
}

func compileSchema(t *testing.T, name string, raw json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	url := "mem://" + strings.ReplaceAll(name, " ", "/") + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: schema does not compile: %v", name, err)
	}
	return sch
}
