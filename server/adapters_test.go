package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/oauth/googleauth"
	"github.com/drivemail/drivemail/tools"
)

// brokenClients fails every request for a user's Google client.
type brokenClients struct{ err error }

func (c brokenClients) Client(ctx context.Context, userID string) (*http.Client, error) {
	return nil, c.err
}

// tokenlessClients give a client whose every request fails as one whose
// token refresh Google refused does: before it leaves.
type tokenlessClients struct{}

func (tokenlessClients) Client(ctx context.Context, userID string) (*http.Client, error) {
	return &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, fmt.Errorf("refresh Google token: %w: %w", googleauth.ErrReconnect, google.ErrNoToken)
	})}, nil
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// behindDoor is deps whose tool calls open their caller's account over
// tokens, as NewServer's do.
func behindDoor(deps tools.Deps, tokens account.Tokens) tools.Deps {
	door := account.NewDoor(tokens, account.Options{Endpoints: google.Endpoints{Base: "http://127.0.0.1:1"}})
	deps.Account = func(ctx context.Context) (*account.Account, error) { return callerAccount(ctx, door) }
	return deps
}

// A send that meets the refused refresh mid-way (the grant was revoked at
// Google after the bearer check) tells the user to reconnect and that
// nothing went out.
func TestSendThatFindsTheGrantRevokedSaysReconnect(t *testing.T) {
	signedIn := identity.User{ID: "user-1", Email: "demo@example.com", GoogleScopes: []string{
		"https://www.googleapis.com/auth/gmail.send", "https://www.googleapis.com/auth/gmail.compose"}}
	for tool, nothing := range map[string]string{"send_email": "Nothing was sent.", "create_draft": "Nothing was saved."} {
		mail := accountMail{compose: compose.New(compose.Config{})}
		srv := mcpserver.NewMCPServer("drivemail", "test", mcpserver.WithToolCapabilities(false))
		srv.AddTools(tools.Tools(behindDoor(tools.Deps{Drive: fakeDrive{}, Mail: mail, DraftsEnabled: true}, tokenlessClients{}))...)
		text, isError := callTool(t, srv, identity.WithUser(context.Background(), signedIn), tool,
			map[string]any{"to": "bob@example.com", "subject": "hi", "body_text": "hello"})
		if !isError || text != googleauth.ErrReconnect.Error()+" "+nothing {
			t.Errorf("%s: %v %q, want the reconnect sentence and %q", tool, isError, text, nothing)
		}
	}
}

// TestSendWithoutGoogleClientSaysNothingWasSent: when the user's Google
// client cannot be had (the store down, a token that does not decrypt),
// compose never runs, so the tool's answer says nothing was sent (or
// saved) instead of asking to check Sent and Drafts; a lost grant keeps
// its sentence asking to reconnect. Called through the tools, as a model's
// tools/call is.
func TestSendWithoutGoogleClientSaysNothingWasSent(t *testing.T) {
	signedIn := identity.User{ID: "user-1", Email: "demo@example.com", GoogleScopes: []string{
		"https://www.googleapis.com/auth/gmail.send", "https://www.googleapis.com/auth/gmail.compose"}}
	storeDown := errors.New("store: connection refused")
	tests := []struct {
		name     string
		tool     string
		err      error
		user     bool
		want     string
		wantNot  string
		internal bool
	}{
		{"send, store down", "send_email", storeDown, true, "Nothing was sent, so trying again cannot send it twice.", "check the Sent", true},
		{"draft, store down", "create_draft", storeDown, true, "Nothing was saved, so trying again cannot make a second draft.", "check the Sent", true},
		{"send, no user in the context", "send_email", storeDown, false, "Nothing was sent", "check the Sent", true},
		{"send, grant lost", "send_email", googleauth.ErrReconnect, true, googleauth.ErrReconnect.Error(), "internal error", false},
		{"draft, grant lost", "create_draft", googleauth.ErrReconnect, true, googleauth.ErrReconnect.Error(), "internal error", false},
		{"send, grant lost, wrapped", "send_email", errors.Join(errors.New("refresh"), googleauth.ErrReconnect), true, googleauth.ErrReconnect.Error(), "internal error", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mail := accountMail{compose: compose.New(compose.Config{})}
			srv := mcpserver.NewMCPServer("drivemail", "test", mcpserver.WithToolCapabilities(false))
			srv.AddTools(tools.Tools(behindDoor(tools.Deps{Drive: fakeDrive{}, Mail: mail}, brokenClients{err: tt.err}))...)
			ctx := context.Background()
			if tt.user {
				ctx = identity.WithUser(ctx, signedIn)
			}
			text, isError := callTool(t, srv, ctx, tt.tool, map[string]any{"to": "bob@example.com", "subject": "hi", "body_text": "hello"})
			if !isError {
				t.Fatalf("%s succeeded: %q", tt.tool, text)
			}
			if !strings.Contains(text, tt.want) || strings.Contains(text, tt.wantNot) {
				t.Errorf("text = %q, want it to say %q and not %q", text, tt.want, tt.wantNot)
			}
			if strings.Contains(text, "connection refused") {
				t.Errorf("text %q quotes the internal error", text)
			}
			if got := strings.Contains(text, "internal error"); got != tt.internal {
				t.Errorf("text = %q: internal error = %v, want %v", text, got, tt.internal)
			}
		})
	}
}

// callTool calls one tool over JSON-RPC and returns its text and isError.
func callTool(t *testing.T, srv *mcpserver.MCPServer, ctx context.Context, name string, args map[string]any) (string, bool) {
	t.Helper()
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(srv.HandleMessage(ctx, msg))
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || resp.Error != nil || len(resp.Result.Content) == 0 {
		t.Fatalf("tools/call %s: %s (%v)", name, out, err)
	}
	return resp.Result.Content[0].Text, resp.Result.IsError
}

// TestDriveToolsThatFindTheGrantLostSayReconnect: a lost Google grant is
// a refusal where googleauth finds it, before the Drive request or while
// it is sent, and reaches the model as that sentence with no conversion
// on the way.
func TestDriveToolsThatFindTheGrantLostSayReconnect(t *testing.T) {
	signedIn := identity.User{ID: "user-1", Email: "demo@example.com"}
	for name, clients := range map[string]account.Tokens{
		"no client":       brokenClients{err: fmt.Errorf("load: %w", googleauth.ErrReconnect)},
		"refresh refused": tokenlessClients{},
	} {
		for tool, args := range map[string]map[string]any{
			"drive_search":   {"query": "q3"},
			"drive_get_file": {"file_id": "1AbCdEfGhIjKlMnOpQrStUvWxYz012345"},
		} {
			srv := mcpserver.NewMCPServer("drivemail", "test", mcpserver.WithToolCapabilities(false))
			srv.AddTools(tools.Tools(behindDoor(tools.Deps{Drive: accountDrive{}, Mail: accountMail{}}, clients))...)
			text, isError := callTool(t, srv, identity.WithUser(context.Background(), signedIn), tool, args)
			if !isError || text != googleauth.ErrReconnect.Error() {
				t.Errorf("%s, %s: %v %q, want the reconnect sentence", name, tool, isError, text)
			}
		}
	}
}
