package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/internal/ask"
	"github.com/drivemail/drivemail/tools"
)

// confirmGoogle is an emulated Google for the confirmation tests, made
// outside any synctest bubble, with the test user's Drive holding a PDF
// and eleven small files.
type confirmGoogle struct {
	env     *emutest.Env
	handler http.Handler // the emulator, served in-process
	token   string
	pdf     drivesvc.File
	pdfData []byte
	eleven  []any

	mu      sync.Mutex
	answers []string // Deps.Confirmed's, in order
}

func (g *confirmGoogle) confirmed(answer string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.answers = append(g.answers, answer)
}

// lastAnswer is how the last question ended, as Deps.Confirmed heard it.
func (g *confirmGoogle) lastAnswer() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.answers) == 0 {
		return ""
	}
	return g.answers[len(g.answers)-1]
}

const confirmUser = "demo@example.com" // testToken's user

func newConfirmGoogle(t *testing.T) *confirmGoogle {
	t.Helper()
	env := emutest.Start(t)
	g := &confirmGoogle{env: env, handler: env.Emu.Handler(), pdfData: bytes.Repeat([]byte("%PDF-1.7 Q3 "), 400)}
	g.token = env.Token(confirmUser, emutest.ScopeDriveReadonly, emutest.ScopeGmailSend, emutest.ScopeGmailCompose)
	g.pdf = env.Put(confirmUser, drivesvc.FileSpec{Name: "Q3 Report.pdf", Content: g.pdfData})
	for i := range 11 {
		f := env.Put(confirmUser, drivesvc.FileSpec{Name: fmt.Sprintf("f%02d.pdf", i), Content: []byte("%PDF")})
		g.eleven = append(g.eleven, f.ID)
	}
	return g
}

// Client is account.Tokens: the test user's Google client, served by the
// emulator in this process (so a synctest bubble holds every goroutine).
func (g *confirmGoogle) Client(_ context.Context, userID string) (*http.Client, error) {
	return &http.Client{Transport: withBearer{g.token, inProcess{g.handler}}}, nil
}

// server is drivemail with a real compose over g, confirming sends as
// mode says. Made inside the bubble that uses it.
func (g *confirmGoogle) server(mode tools.ConfirmSends) http.Handler {
	return bubbleServer(func(d *Deps) {
		d.Accounts = account.NewDoor(g, account.Options{Endpoints: g.env.Endpoints})
		d.Tools = tools.Deps{Drive: fakeDrive{}, Mail: accountMail{compose: compose.New(compose.Config{})}, ConfirmSends: mode, DraftsEnabled: true,
			Confirmed: g.confirmed}
		d.UseOnce = singleUse()
	})
}

// sent is the number of messages in the emulated outbox.
func (g *confirmGoogle) sent() int64 { return g.env.Emu.Stats().MessagesSent }

// checkSent reads message id back from the emulated Gmail: the PDF must
// be in it as Drive holds it. Call it outside any bubble.
func (g *confirmGoogle) checkSent(t *testing.T, id string) {
	t.Helper()
	raw := g.env.Message(confirmUser, id)
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if to, err := m.Header.AddressList("To"); err != nil || len(to) != 1 || to[0].Address != "ana@example.com" {
		t.Errorf("the message went to %q", m.Header.Get("To"))
	}
	if !bytes.Contains(raw, []byte(`filename="Q3 Report.pdf"`)) {
		t.Errorf("the message has no Q3 Report.pdf:\n%s", raw[:min(len(raw), 2000)])
	}
	if !bytes.Contains(bytes.ReplaceAll(raw, []byte("\r\n"), nil), []byte(base64.StdEncoding.EncodeToString(g.pdfData))) {
		t.Error("the PDF sent is not the bytes Drive holds")
	}
}

func sendArgs(g *confirmGoogle) map[string]any {
	return map[string]any{"to": "ana@example.com", "subject": "Q3 figures", "body_text": "Hi Ana,\nthe Q3 report is attached.", "attachments": []any{g.pdf.ID}}
}

// callSend calls send_email with args and returns its text, whether it
// is an error, and the message id when one was sent.
func callSend(t *testing.T, cs *sdk.ClientSession, args map[string]any) (text string, isError bool, id string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "send_email", Arguments: args})
	if err != nil {
		t.Fatalf("send_email: %v", err)
	}
	var sc struct {
		ID string `json:"id"`
	}
	if b, err := json.Marshal(res.StructuredContent); err == nil {
		_ = json.Unmarshal(b, &sc)
	}
	return res.Content[0].(*sdk.TextContent).Text, res.IsError, sc.ID
}

// send_email asks its user through the official go-sdk client (2025-06-18
// and 2025-11-25, on the call's own event stream), with the summary of
// what will go: accepted, it sends; declined or dismissed, nothing is
// sent and the result says so and what to do. Nothing is downloaded
// before the answer.
func TestSendEmailAsksItsUser(t *testing.T) {
	g := newConfirmGoogle(t)
	for _, version := range []string{"2025-06-18", "2025-11-25"} {
		for _, tc := range []struct {
			name    string
			action  string
			content map[string]any
			sends   bool
			says    string
			counted string
		}{
			{"accept", "accept", map[string]any{"send": true}, true, "Sent to ana@example.com", "accepted"},
			{"accept, unticked", "accept", map[string]any{"send": false}, false, "did not confirm sending this email", "declined"},
			{"decline", "decline", nil, false, "The user declined to send this email, so nothing was sent. Do not send it again unless the user asks you to. To keep the message, offer create_draft", "declined"},
			{"cancel", "cancel", nil, false, "closed the question whether to send this email without answering, so nothing was sent", "cancelled"},
		} {
			t.Run(version+"/"+tc.name, func(t *testing.T) {
				var id string
				before := g.env.Emu.Stats()
				synctest.Test(t, func(t *testing.T) {
					var asked string
					cs := askingClient(t, g.server(tools.ConfirmAuto), version, func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
						asked = req.Params.Message
						if st := g.env.Emu.Stats(); st.Downloads != before.Downloads || st.UploadsStarted != before.UploadsStarted {
							return nil, fmt.Errorf("asked after a download (%d→%d) or a Gmail upload (%d→%d)", before.Downloads, st.Downloads, before.UploadsStarted, st.UploadsStarted)
						}
						return &sdk.ElicitResult{Action: tc.action, Content: tc.content}, nil
					})
					defer cs.Close()
					var text string
					var isError bool
					text, isError, id = callSend(t, cs, sendArgs(g))
					if isError == tc.sends || !strings.Contains(text, tc.says) {
						t.Errorf("result (error %v): %s\nwant it to say %q", isError, text, tc.says)
					}
					for _, want := range []string{"Send this email?", "From: demo@example.com", "To: ana@example.com", "Subject: Q3 figures",
						"- Q3 Report.pdf (4.7 KiB, application/pdf)", "> Hi Ana,", "> the Q3 report is attached."} {
						if !strings.Contains(asked, want) {
							t.Errorf("the question lacks %q:\n%s", want, asked)
						}
					}
				})
				if got := g.sent() - before.MessagesSent; tc.sends != (got == 1) || got > 1 {
					t.Fatalf("%d messages sent", got)
				}
				if tc.sends {
					g.checkSent(t, id)
				}
				if got := g.lastAnswer(); got != tc.counted {
					t.Errorf("counted as %q, want %q", got, tc.counted)
				}
			})
		}
	}
}

// A user who never answers: after ask.DefaultWait the call ends, nothing
// sent, and says so; a client without the capability is sent to unasked
// under auto and refused under always; a send a check refuses (eleven
// files) never asks.
func TestSendEmailWithoutAnAnswer(t *testing.T) {
	g := newConfirmGoogle(t)
	before := g.sent()
	synctest.Test(t, func(t *testing.T) {
		never := make(chan struct{})
		cs := askingClient(t, g.server(tools.ConfirmAuto), "2025-11-25", func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			<-never
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"send": true}}, nil
		})
		defer cs.Close()
		start := time.Now()
		text, isError, _ := callSend(t, cs, sendArgs(g))
		if waited := time.Since(start); waited != ask.DefaultWait || !isError || !strings.Contains(text, "No answer came from the user to the question whether to send this email (drivemail waits 2 minutes), so nothing was sent") {
			t.Errorf("after %v: %v %s", waited, isError, text)
		}
		close(never)
		synctest.Wait()
	})
	if n := g.sent() - before; n != 0 || g.lastAnswer() != "unanswered" {
		t.Fatalf("%d messages sent without an answer (counted as %q)", n, g.lastAnswer())
	}

	for _, tc := range []struct {
		mode    tools.ConfirmSends
		sends   bool
		says    string
		counted string
	}{
		{tools.ConfirmAuto, true, "Sent to ana@example.com", "unaskable"},
		{tools.ConfirmOff, true, "Sent to ana@example.com", ""},
		{tools.ConfirmAlways, false, "sends an email only once its user has confirmed it, and this client cannot ask its user", "unaskable"},
	} {
		before := g.sent()
		g.answers = nil
		synctest.Test(t, func(t *testing.T) {
			cs := askingClient(t, g.server(tc.mode), "2025-11-25", nil)
			defer cs.Close()
			if text, isError, _ := callSend(t, cs, sendArgs(g)); isError == tc.sends || !strings.Contains(text, tc.says) {
				t.Errorf("%s, a client that cannot ask: %v %s", tc.mode, isError, text)
			}
		})
		if n := g.sent() - before; tc.sends != (n == 1) || g.lastAnswer() != tc.counted {
			t.Errorf("%s, a client that cannot ask: %d sent, counted as %q", tc.mode, n, g.lastAnswer())
		}
	}

	synctest.Test(t, func(t *testing.T) {
		cs := askingClient(t, g.server(tools.ConfirmAlways), "2025-11-25", func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return nil, fmt.Errorf("asked about a refused send: %s", req.Params.Message)
		})
		defer cs.Close()
		args := sendArgs(g)
		args["attachments"] = g.eleven
		if text, isError, _ := callSend(t, cs, args); !isError || !strings.Contains(text, "11 files") {
			t.Errorf("eleven files: %v %s", isError, text)
		}
	})
}

// A 2026-07-28 client, raw JSON-RPC over HTTP: its send_email gets
// input_required with the summary; the retry carrying the state and the
// answer sends (accept) or sends nothing (decline); a file renamed in
// between makes another summary, which is asked again rather than sent.
func TestSendEmailAsksA2026Client(t *testing.T) {
	g := newConfirmGoogle(t)
	base, _ := url.Parse("http://drivemail.test")
	h := NewServer(Deps{Logger: slog.New(slog.DiscardHandler), BaseURL: base, Version: "test", Auth: fakeAuth{base: base.String()}, Store: fakeStore{},
		Accounts: account.NewDoor(g, account.Options{Endpoints: g.env.Endpoints}), UseOnce: singleUse(),
		Tools: tools.Deps{Drive: fakeDrive{}, Mail: accountMail{compose: compose.New(compose.Config{})}, DraftsEnabled: true}})
	hc := &http.Client{Transport: inProcess{h}}
	call := func(args map[string]any, answer string) map[string]any {
		t.Helper()
		a, _ := json.Marshal(args)
		body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"send_email","arguments":` + string(a) + `,` + answer +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`
		req, _ := http.NewRequest("POST", "http://drivemail.test/mcp", strings.NewReader(body))
		for k, v := range map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "send_email"} {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Result map[string]any `json:"result"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Result == nil {
			t.Fatalf("%d: %v", resp.StatusCode, err)
		}
		return out.Result
	}
	// asked returns the state and the question of an input_required result.
	asked := func(r map[string]any) (string, string) {
		t.Helper()
		state, _ := r["requestState"].(string)
		q, _ := r["inputRequests"].(map[string]any)["send"].(map[string]any)
		params, _ := q["params"].(map[string]any)
		msg, _ := params["message"].(string)
		if r["resultType"] != "input_required" || state == "" || q["method"] != "elicitation/create" {
			t.Fatalf("want input_required asking \"send\": %v", r)
		}
		return state, msg
	}
	answer := func(state, action string) string {
		return `"inputResponses":{"send":{"action":"` + action + `","content":{"send":true}}},"requestState":"` + state + `",`
	}
	text := func(r map[string]any) string {
		content, _ := r["content"].([]any)
		if len(content) == 0 {
			return fmt.Sprint(r)
		}
		s, _ := content[0].(map[string]any)["text"].(string)
		return s
	}

	args := sendArgs(g)
	before := g.sent()
	state, question := asked(call(args, ""))
	if !strings.Contains(question, "- Q3 Report.pdf (4.7 KiB, application/pdf)") || g.sent() != before {
		t.Fatalf("the question: %s (sent %d)", question, g.sent()-before)
	}
	done := call(args, answer(state, "accept"))
	if done["isError"] == true || !strings.Contains(text(done), "Sent to ana@example.com") || g.sent() != before+1 {
		t.Fatalf("the accepted retry: %v", done)
	}
	id, _ := done["structuredContent"].(map[string]any)["id"].(string)
	g.checkSent(t, id)

	state, _ = asked(call(args, ""))
	declined := call(args, answer(state, "decline"))
	if declined["isError"] != true || !strings.Contains(text(declined), "The user declined to send this email, so nothing was sent") || g.sent() != before+1 {
		t.Fatalf("the declined retry: %v", declined)
	}

	state, _ = asked(call(args, ""))
	rename(t, g, g.pdf.ID, "Q3 Report (final).pdf")
	_, again := asked(call(args, answer(state, "accept")))
	if !strings.Contains(again, "Q3 Report (final).pdf") || g.sent() != before+1 {
		t.Fatalf("a retry whose summary changed: sent %d, asked %s", g.sent()-before-1, again)
	}
}

// send_draft asks too, or create_draft and send_draft would send what no
// one confirmed: the question names the draft's From, To and subject;
// declined, the draft stays and nothing is sent; accepted, it goes.
// create_draft itself never asks.
func TestSendDraftAsksItsUser(t *testing.T) {
	g := newConfirmGoogle(t)
	before := g.sent()
	synctest.Test(t, func(t *testing.T) {
		var asked []string
		answer := "decline"
		cs := askingClientAs(t, g.server(tools.ConfirmAuto), draftsToken, "2025-11-25", func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			return &sdk.ElicitResult{Action: answer, Content: map[string]any{"send": true}}, nil
		})
		defer cs.Close()
		call := func(tool string, args map[string]any) (string, bool, map[string]any) {
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				t.Fatalf("%s: %v", tool, err)
			}
			sc, _ := res.StructuredContent.(map[string]any)
			return res.Content[0].(*sdk.TextContent).Text, res.IsError, sc
		}
		text, isError, draft := call("create_draft", sendArgs(g))
		if isError || len(asked) != 0 {
			t.Fatalf("create_draft (asked %d): %s", len(asked), text)
		}
		id, _ := draft["draft_id"].(string)
		text, isError, _ = call("send_draft", map[string]any{"draft_id": id})
		if !isError || !strings.Contains(text, "The user declined to send this email, so nothing was sent") || len(asked) != 1 {
			t.Fatalf("send_draft declined: %v %s", isError, text)
		}
		for _, want := range []string{"Send this Gmail draft as it is saved now?", "From: demo@example.com", "To: ana@example.com", "Subject: Q3 figures", "(id " + id + ")"} {
			if !strings.Contains(asked[0], want) {
				t.Errorf("the question lacks %q:\n%s", want, asked[0])
			}
		}
		answer = "accept"
		if text, isError, _ = call("send_draft", map[string]any{"draft_id": id}); isError || !strings.Contains(text, "Sent the draft to ana@example.com") {
			t.Errorf("send_draft accepted: %s", text)
		}
	})
	if n := g.sent() - before; n != 1 {
		t.Errorf("%d messages sent, want the accepted draft alone", n)
	}
}

// rename renames a Drive file through Drive's files.update, as its owner.
func rename(t *testing.T, g *confirmGoogle, id, name string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"name": name})
	req, _ := http.NewRequest(http.MethodPatch, g.env.URL+"/drive/v3/files/"+id, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.env.Client(confirmUser, emutest.ScopeDrive).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("rename: %s", resp.Status)
	}
}
