package server

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/internal/metrics"
	"github.com/drivemail/drivemail/tools"
)

// Auth is drivemail's authorization server and bearer check (package oauth).
type Auth interface {
	// ProtectedResourceMetadata serves RFC 9728 metadata for BASE/mcp.
	ProtectedResourceMetadata() http.Handler
	// AuthorizationServerMetadata serves RFC 8414 metadata.
	AuthorizationServerMetadata() http.Handler
	// Endpoints serves /oauth/register, authorize, callback, token, revoke.
	Endpoints() http.Handler
	// RequireBearer lets through only requests with a valid access token
	// for BASE/mcp, with the identity.User in their context; others get
	// 401 and WWW-Authenticate.
	RequireBearer(next http.Handler) http.Handler
}

// Uploads serves the upload endpoints (package upload).
type Uploads interface {
	// Direct serves POST /upload for acct, the caller the bearer check
	// let in (nil: no one).
	Direct(w http.ResponseWriter, r *http.Request, acct *account.Account)
	// Ticket serves PUT and POST /upload/<ticket>, which need no bearer.
	Ticket() http.Handler
}

// Pinger reports whether a dependency (the store) is reachable.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Deps is everything NewServer wires together.
type Deps struct {
	Logger  *slog.Logger
	BaseURL *url.URL // public origin; the MCP endpoint is BaseURL + /mcp
	Version string
	Auth    Auth
	// Accounts opens the account of the caller of each tool call and
	// direct upload, once the bearer check has said who calls; nil opens
	// accounts with no Google clients.
	Accounts *account.Door
	Tools    tools.Deps // Account, RequestID and Logger are filled in by NewServer
	Uploads  Uploads    // nil: the upload routes say uploads are unavailable
	Store    Pinger
	// MaxMCPBodyBytes caps one MCP request (default DefaultMaxMCPBodyBytes).
	MaxMCPBodyBytes int64
	// BodyTimeout and MCPBodyTimeout bound how long a request body may
	// take to arrive (defaults DefaultBodyTimeout, DefaultMCPBodyTimeout).
	BodyTimeout    time.Duration
	MCPBodyTimeout time.Duration
	// SessionSecrets key the MCP session ids (--secret: the first mints,
	// all check); replicas given the same secrets accept each other's ids.
	// None: a key for this process only.
	SessionSecrets [][]byte
	// Metrics records requests, tool calls and uploads; nil records
	// nothing. It is served on its own listener (Run), not by Server.
	Metrics *metrics.Metrics
	// ClientIP names a request's client in the request log (default: the
	// TCP peer); Run gives the one that reads trusted proxies' headers.
	ClientIP func(*http.Request) string
	// FileTransfer answers the MCP file-transfer draft's methods (serve
	// --file-transfer); nil leaves them unknown, as the draft says a
	// server without it answers (-32601).
	FileTransfer Transfers
	// MaxMCPRequestsPerUser caps one user's /mcp requests in flight on
	// this replica (default DefaultMaxMCPRequestsPerUser); the bytes their
	// bodies hold are capped at twice MaxMCPBodyBytes.
	MaxMCPRequestsPerUser int
	// UseOnce records a single-use key until it expires and fails for one
	// already used (the store's): it holds a 2026-07-28 client's answer to
	// one use across replicas. nil: not enforced (tests).
	UseOnce func(ctx context.Context, key string, expires time.Time) error
	// Resources are served by resources/list and resources/read (an MCP
	// App's ui:// views); none: no resources capability is declared.
	Resources []mcpserver.ServerResource
	// Picks serves /pick/{ticket}, the page drive_pick's links open
	// (serve --drive-scope file); nil: the route says there is none.
	Picks http.Handler

	// testTools are registered beside the product's tools (tests only).
	testTools []mcpserver.ServerTool
}

// DefaultMaxMCPBodyBytes caps an MCP request: tool arguments carry ids, not
// files; the 1 MiB of model-written bytes compose accepts fits with room.
const DefaultMaxMCPBodyBytes = 4 << 20

// maxFormBodyBytes caps the OAuth endpoints' bodies, which are read whole
// before the handler runs: the largest any of them takes (a registration,
// 32 KiB), so a stranger holds at most this much for DefaultBodyTimeout.
const maxFormBodyBytes = 32 << 10

// Server is drivemail's HTTP surface.
type Server struct {
	http.Handler
	mcp *mcpEndpoint // for the tests to look into
}

// NewServer builds the HTTP handler for every route.
func NewServer(d Deps) *Server {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.MaxMCPBodyBytes <= 0 {
		d.MaxMCPBodyBytes = DefaultMaxMCPBodyBytes
	}
	if d.ClientIP == nil {
		d.ClientIP = remoteIP
	}
	if d.BodyTimeout <= 0 {
		d.BodyTimeout = DefaultBodyTimeout
	}
	if d.MCPBodyTimeout <= 0 {
		d.MCPBodyTimeout = DefaultMCPBodyTimeout
	}
	if d.Accounts == nil {
		d.Accounts = account.NewDoor(nil, account.Options{})
	}
	d.Tools.Account = func(ctx context.Context) (*account.Account, error) { return callerAccount(ctx, d.Accounts) }
	d.Tools.Logger = d.Logger
	d.Tools.RequestID = RequestID
	d.Tools.FileTransfer = d.FileTransfer != nil
	if d.MaxMCPRequestsPerUser <= 0 {
		d.MaxMCPRequestsPerUser = DefaultMaxMCPRequestsPerUser
	}
	endpoint := newMCPEndpoint(d)
	mux := http.NewServeMux()
	addRoutes(mux, d, endpoint)
	h := d.Metrics.InstrumentHTTP(mux) // innermost: it reads the pattern the mux matched
	h = bodyDeadline(d.BodyTimeout)(h)
	h = securityHeaders(h)
	h = recoverPanics(d.Logger)(h)
	h = logRequests(d.Logger, d.ClientIP)(h)
	return &Server{Handler: h, mcp: endpoint}
}
