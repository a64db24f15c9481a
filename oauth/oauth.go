// Package oauth is drivemail's OAuth 2.1 authorization server toward MCP
// clients, federated to Google: metadata (RFC 9728, RFC 8414), client
// registration (RFC 7591) and client ID metadata documents, authorization
// with PKCE and a per-client consent page, the Google round trip, the token
// and revocation endpoints, and the bearer middleware for /mcp and /upload.
//
// MCP clients only ever hold drivemail's own opaque tokens; Google's
// tokens stay sealed in the store (see googleauth).
package oauth

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/drivemail/drivemail/oauth/cimd"
	"github.com/drivemail/drivemail/oauth/googleauth"
	"github.com/drivemail/drivemail/oauth/keyring"
	"github.com/drivemail/drivemail/store"
)

// Scope is the one scope drivemail issues: use of its tools as the user.
// It is granted whatever scope a client asks for. Clients ask for what they
// find in metadata, for everything at once, or for what they were built
// with ("read write", "mcp.read mcp.write", "openid email profile",
// " offline_access" with a stray space, nothing at all); RFC 6749 §3.3
// lets the server grant other than asked and say so in the token response,
// which beats refusing the sign-in with invalid_scope. offline_access is
// implied: every client that registered the refresh_token grant gets a
// refresh token. The same goes for the scope of a registration and of a
// refresh (which can then never ask for more than the grant has).
const Scope = "drivemail"

// Default lifetimes and limits.
const (
	DefaultAccessTTL         = time.Hour
	DefaultRefreshTTL        = 30 * 24 * time.Hour
	DefaultCodeTTL           = 5 * time.Minute
	DefaultAuthRequestTTL    = 15 * time.Minute
	DefaultRegistrationLimit = 30  // per client address (IPv6: /64) per hour
	DefaultAuthorizeLimit    = 300 // per client address (IPv6: /64) per hour
	// DefaultMetadataFetchLimit bounds the client metadata documents the
	// token and revocation endpoints fetch (cache misses) per client
	// address (IPv6: /64) per minute.
	DefaultMetadataFetchLimit = 30
	// DemoRegistrationLimit replaces DefaultRegistrationLimit in demo mode,
	// where one developer re-runs SDK examples that register every time.
	DemoRegistrationLimit = 1000
)

// Config configures the authorization server.
type Config struct {
	// BaseURL is the public origin (https, or http on a loopback host for
	// demos and tests). The protected resource is BaseURL + "/mcp".
	BaseURL string
	Store   store.Store
	Google  *googleauth.Service
	// CIMD fetches client ID metadata documents (default: the guarded
	// fetcher with production settings).
	CIMD   *cimd.Fetcher
	Logger *slog.Logger
	Now    func() time.Time
	// Lifetimes; zero means the default.
	AccessTTL, RefreshTTL, CodeTTL, AuthRequestTTL time.Duration
	// RegistrationLimit is how many registrations one client IP may make
	// per hour (default 30).
	RegistrationLimit int
	// AuthorizeLimit is how many authorization requests one client IP may
	// start per hour (default 300): each one stores a pending request.
	AuthorizeLimit int
	// MetadataFetchLimit is how many client metadata documents the token
	// and revocation endpoints may fetch for one client IP a minute
	// (default 30); documents served from the cache are not counted.
	MetadataFetchLimit int
	// ClientIP names the caller for rate limits (default: the connection's
	// address; behind a proxy, supply one that trusts its header). The
	// limits count an IPv6 caller by its /64 (see limitKey).
	ClientIP func(*http.Request) string
	// RefreshGrace is how long a spent refresh token still gets the pair
	// it was exchanged for (0: never; at most store.MaxRefreshGrace).
	// That pair is kept sealed under Keys meanwhile.
	RefreshGrace time.Duration
	// Keys seals the pairs kept for the grace window; build it with
	// keyring.New(secrets, RefreshKeyPurpose). Required with RefreshGrace.
	Keys *keyring.Ring
	// Demo loosens what only gets in the way of trying drivemail out on
	// one machine: RegistrationLimit defaults to DemoRegistrationLimit,
	// and the default CIMD fetcher accepts client metadata documents on
	// loopback addresses (http://localhost:PORT/client.json too).
	Demo bool
}

// Server is the authorization server and the bearer middleware.
type Server struct {
	cfg      Config
	base     string // origin without a trailing slash
	resource string // base + "/mcp"
	secure   bool   // https: __Host- cookies with Secure
	logger   *slog.Logger
	now      func() time.Time
}

// New checks cfg and returns the server.
func New(cfg Config) (*Server, error) {
	base, secure, err := checkBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.Store == nil || cfg.Google == nil {
		return nil, errors.New("oauth: a store and the Google service are required")
	}
	switch {
	case cfg.RefreshGrace < 0 || cfg.RefreshGrace > store.MaxRefreshGrace:
		return nil, fmt.Errorf("oauth: refresh grace %v: use 0 (off) up to %v", cfg.RefreshGrace, store.MaxRefreshGrace)
	case cfg.RefreshGrace > 0 && cfg.Keys == nil:
		return nil, errors.New("oauth: a refresh grace window needs a keyring to seal the pairs it keeps")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.CIMD == nil {
		cfg.CIMD = cimd.New(cimd.Config{AllowLoopback: cfg.Demo, Logger: cfg.Logger})
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.AccessTTL = orDefault(cfg.AccessTTL, DefaultAccessTTL)
	cfg.RefreshTTL = orDefault(cfg.RefreshTTL, DefaultRefreshTTL)
	cfg.CodeTTL = orDefault(cfg.CodeTTL, DefaultCodeTTL)
	cfg.AuthRequestTTL = orDefault(cfg.AuthRequestTTL, DefaultAuthRequestTTL)
	if cfg.RegistrationLimit <= 0 {
		cfg.RegistrationLimit = DefaultRegistrationLimit
		if cfg.Demo {
			cfg.RegistrationLimit = DemoRegistrationLimit
		}
	}
	if cfg.AuthorizeLimit <= 0 {
		cfg.AuthorizeLimit = DefaultAuthorizeLimit
	}
	if cfg.MetadataFetchLimit <= 0 {
		cfg.MetadataFetchLimit = DefaultMetadataFetchLimit
	}
	if cfg.ClientIP == nil {
		cfg.ClientIP = remoteIP
	}
	return &Server{
		cfg:      cfg,
		base:     base,
		resource: base + "/mcp",
		secure:   secure,
		logger:   cfg.Logger,
		now:      cfg.Now,
	}, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// checkBaseURL accepts an https origin, or an http origin on a loopback
// host (demo and tests): anything else would send tokens in the clear. It
// returns the origin in canonical form, which the consent form's Origin
// check compares with.
func checkBaseURL(raw string) (base string, secure bool, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", false, fmt.Errorf("oauth: base URL %q: want an origin such as https://mail.example.com", raw)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", false, fmt.Errorf("oauth: base URL %q: want an origin only, without path, query or credentials", raw)
	}
	if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) {
		return "", false, fmt.Errorf("oauth: base URL %q: plain http is allowed only on localhost or 127.0.0.1; use https (a TLS-terminating proxy is fine)", raw)
	}
	return u.Scheme + "://" + canonicalHost(u), u.Scheme == "https", nil
}

// canonicalHost is u's host as browsers put it in an Origin header and
// clients compare it: lower case, without the scheme's default port.
func canonicalHost(u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		return net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// canonicalResource returns a resource indicator (RFC 8707) as drivemail
// writes its own, for comparison: RFC 3986's case and scheme-based
// normalization (§6.2.2.1, §6.2.3), so the scheme and host in any case and
// the scheme's default port, written or not, name the same resource. The
// path is kept as sent: /mcp/, /MCP, /./mcp and percent-encoded letters
// are other spellings no client uses for drivemail's resource, and /mcp/
// is another resource altogether. ok is false for anything but an absolute
// http(s) URL without credentials, query or fragment (RFC 8707 §2).
func canonicalResource(raw string) (resource string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.ForceQuery || strings.Contains(raw, "#") {
		return "", false
	}
	return u.Scheme + "://" + canonicalHost(u) + u.EscapedPath(), true
}

// resourceFor returns the resource a client's resource indicator names,
// which is drivemail's one resource or nothing (ok false). Besides its
// canonical form it accepts that form with a trailing slash (Claude Code
// appends one, anthropics/claude-code#52871) and the bare origin, with or
// without the slash (clients that name the server rather than /mcp): none
// of them can mean another resource of this server. An absent indicator is
// the caller's to default.
func (s *Server) resourceFor(raw string) (string, bool) {
	c, ok := canonicalResource(raw)
	if !ok {
		return "", false
	}
	switch c {
	case s.resource, s.resource + "/", s.base, s.base + "/":
		return s.resource, true
	}
	return "", false
}

// Resource is the protected resource's identifier, BASE/mcp.
func (s *Server) Resource() string { return s.resource }

// Issuer is the authorization server's identifier, BASE.
func (s *Server) Issuer() string { return s.base }

// ResourceMetadataURL is where the protected-resource metadata lives.
func (s *Server) ResourceMetadataURL() string {
	return s.base + "/.well-known/oauth-protected-resource/mcp"
}

// Endpoints serves /oauth/register, /oauth/authorize (GET: the request;
// POST: the consent form), /oauth/callback, /oauth/token and /oauth/revoke,
// and the root aliases /register, /authorize (GET) and /token: clients
// that find no metadata fall back to those (the 2025-03-26 defaults), and
// Claude has been seen using them whatever the metadata says.
func (s *Server) Endpoints() http.Handler {
	mux := http.NewServeMux()
	for _, prefix := range []string{"/oauth", ""} {
		mux.Handle(prefix+"/register", cors(http.MethodPost, http.HandlerFunc(s.register)))
		mux.HandleFunc("GET "+prefix+"/authorize", s.authorize)
		mux.Handle(prefix+"/token", cors(http.MethodPost, http.HandlerFunc(s.token)))
	}
	mux.HandleFunc("POST /oauth/authorize", s.consent)
	mux.HandleFunc("GET /oauth/callback", s.callback)
	mux.Handle("/oauth/revoke", cors(http.MethodPost, http.HandlerFunc(s.revoke)))
	mux.HandleFunc("/oauth/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Not found. The authorization endpoints are listed at /.well-known/oauth-authorization-server.", http.StatusNotFound)
	})
	// A client metadata document on this machine (accepted in demo mode)
	// is fetched only for a caller on this machine, so a demo that listens
	// beyond loopback cannot be made to fetch from it for strangers.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isLoopbackHost(remoteIP(r)) || !isLoopbackHost(s.cfg.ClientIP(r)) {
			r = r.WithContext(cimd.FromRemoteCaller(r.Context()))
		}
		mux.ServeHTTP(w, r)
	})
}

// corsAllowHeaders are the request headers browser-based MCP clients (the
// MCP Inspector) send to the authorization server and its metadata.
const corsAllowHeaders = "Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Session-Id, Last-Event-ID"

// cors lets browser-based MCP clients (the MCP Inspector) call an
// endpoint that uses no cookies, and answers their preflight requests.
func cors(method string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", "WWW-Authenticate, Retry-After")
		switch r.Method {
		case http.MethodOptions:
			h.Set("Access-Control-Allow-Methods", method+", OPTIONS")
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
		case method:
			next.ServeHTTP(w, r)
		default:
			h.Set("Allow", method+", OPTIONS")
			writeOAuthError(w, http.StatusMethodNotAllowed, "invalid_request", "Use "+method+" for this endpoint.")
		}
	})
}

// newSecret returns 256 random bits, base64url, with a prefix that says
// what it is (and lets secret scanners spot a leaked one).
func newSecret(prefix string) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// Prefixes of the secrets drivemail issues.
const (
	accessPrefix  = "dm_at_"
	refreshPrefix = "dm_rt_"
	codePrefix    = "dm_ac_"
	clientPrefix  = "dmc_"
	secretPrefix  = "dm_cs_"
)

func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
