package oauth_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/oauth/cimd"
)

// mountMCP serves a stateless go-sdk MCP server at /mcp behind the bearer
// middleware; its one tool answers with the caller's email.
func (h *harness) mountMCP() {
	handler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		user, _ := identity.FromContext(r.Context())
		s := mcp.NewServer(&mcp.Implementation{Name: "drivemail-test", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: user.Email}}}, nil
			})
		return s
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	h.mux.Handle("/mcp", h.as.RequireBearer(handler))
}

// tokenLog records what the SDK client sends to and gets from /oauth/token.
type tokenLog struct {
	mu        sync.Mutex
	grants    []string // grant_type of each request
	statuses  []int
	responses []map[string]any
	clientID  string // as the client sent it
	base      http.RoundTripper
}

func (l *tokenLog) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(r.URL.Path, "/oauth/token") {
		return l.base.RoundTrip(r)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	form, _ := url.ParseQuery(string(body))
	resp, err := l.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(out))
	var m map[string]any
	json.Unmarshal(out, &m)
	l.mu.Lock()
	defer l.mu.Unlock()
	if id := form.Get("client_id"); id != "" {
		l.clientID = id
	} else if id, _, ok := r.BasicAuth(); ok {
		l.clientID, _ = url.QueryUnescape(id)
	}
	l.grants = append(l.grants, form.Get("grant_type"))
	l.statuses = append(l.statuses, resp.StatusCode)
	l.responses = append(l.responses, m)
	return resp, nil
}

func (l *tokenLog) count(grant string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for i, g := range l.grants {
		if g == grant && l.statuses[i] == http.StatusOK {
			n++
		}
	}
	return n
}

func (l *tokenLog) firstRefreshToken() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.responses {
		if rt, _ := r["refresh_token"].(string); rt != "" {
			return rt
		}
	}
	return ""
}

// fetcher is the SDK's AuthorizationCodeFetcher: a browser that consents.
func (h *harness) fetcher(t *testing.T) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		back := newBrowser(t).signIn(h, args.URL)
		q := back.Query()
		if q.Get("error") != "" {
			return nil, fmt.Errorf("authorization refused: %s: %s", q.Get("error"), q.Get("error_description"))
		}
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
}

// runSDKClient drives the official go-sdk client through 401 → discovery →
// registration → authorization → token → tools/list and a call → refresh →
// another call, and checks what went over the wire.
func runSDKClient(t *testing.T, h *harness, cfg *auth.AuthorizationCodeHandlerConfig, log *tokenLog) {
	t.Helper()
	ctx := context.Background()
	cfg.AuthorizationCodeFetcher = h.fetcher(t)
	cfg.Client = &http.Client{Transport: log, Timeout: 10 * time.Second}
	oh, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-test-client", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: h.base + "/mcp", OAuthHandler: oh, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		t.Fatalf("connect (with authorization): %v", err)
	}
	defer session.Close()

	tools, err := session.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "whoami" {
		t.Fatalf("tools/list: %v %+v", err, tools)
	}
	whoami := func() string {
		t.Helper()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
		if err != nil || res.IsError || len(res.Content) != 1 {
			t.Fatalf("tools/call: %v %+v", err, res)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	if got := whoami(); got != "demo@example.com" {
		t.Fatalf("whoami = %q", got)
	}
	if log.count("authorization_code") != 1 {
		t.Fatalf("token requests %v, want one authorization_code exchange", log.grants)
	}

	// The access token lives 11 s, and oauth2 renews 10 s before expiry:
	// after a second the client must refresh before its next call. A sleep,
	// because the time passing is what is tested: oauth2 reads the wall clock.
	time.Sleep(1100 * time.Millisecond)
	if got := whoami(); got != "demo@example.com" {
		t.Fatalf("whoami after refresh = %q", got)
	}
	if log.count("refresh_token") < 1 {
		t.Fatalf("token requests %v: the client never refreshed", log.grants)
	}

	// Rotation: the first refresh token was spent by that refresh. Replayed
	// (as a thief would), it is refused and revokes the whole grant, so the
	// client's current token stops working too.
	first := log.firstRefreshToken()
	status, body := h.refresh(clientIDOf(t, log), first)
	if status != http.StatusBadRequest || str(body, "error") != "invalid_grant" {
		t.Fatalf("replayed refresh token: %d %v", status, body)
	}
	last := log.responses[len(log.responses)-1]
	if code, _, _ := h.call(str(last, "access_token")); code != http.StatusUnauthorized {
		t.Fatalf("after refresh-token reuse, the newest access token answers %d, want 401", code)
	}
}

// clientIDOf is the client id the SDK used at the token endpoint.
func clientIDOf(t *testing.T, log *tokenLog) string {
	t.Helper()
	log.mu.Lock()
	defer log.mu.Unlock()
	return log.clientID
}

func TestSDKClientWithDynamicRegistration(t *testing.T) {
	t.Parallel() // its own server, store and Google: the SDK tests wait out their real second together
	h := newHarness(t, options{accessTTL: 11 * time.Second})
	h.mountMCP()

	// Without a token: 401 and a pointer to the metadata.
	resp, err := http.Post(h.base+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != `Bearer resource_metadata="`+h.base+`/.well-known/oauth-protected-resource/mcp", scope="drivemail"` {
		t.Fatalf("unauthenticated /mcp: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}

	log := &tokenLog{base: http.DefaultTransport}
	runSDKClient(t, h, &auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName:              "go-sdk client",
			RedirectURIs:            []string{"http://127.0.0.1:8765/callback"},
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			TokenEndpointAuthMethod: "none",
		}},
	}, log)
}

func TestSDKClientWithClientIDMetadataDocument(t *testing.T) {
	t.Parallel() // its own server, store and Google: the SDK tests wait out their real second together
	// The client publishes its metadata over https on loopback; the
	// authorization server runs its fetcher in test mode to reach it.
	var docURL string
	docSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"client_id": docURL, "client_name": "Metadata Document Client",
			"redirect_uris": []string{"http://127.0.0.1:8766/callback"},
			"grant_types":   []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none",
		})
	}))
	defer docSrv.Close()
	docURL = docSrv.URL + "/oauth/client.json"
	roots := x509.NewCertPool()
	roots.AddCert(docSrv.Certificate())

	h := newHarness(t, options{accessTTL: 11 * time.Second, cimd: cimd.New(cimd.Config{AllowLoopback: true, RootCAs: roots})})
	h.mountMCP()
	log := &tokenLog{base: http.DefaultTransport}
	runSDKClient(t, h, &auth.AuthorizationCodeHandlerConfig{
		ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: docURL},
		RedirectURL:                    "http://127.0.0.1:8766/callback",
	}, log)
}
