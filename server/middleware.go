package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/internal/metrics"
)

// requestInfo is what the outer middleware learns about a request from the
// handlers inside it.
type requestInfo struct {
	id     string
	userID string
}

type requestInfoKey struct{}

// RequestID returns the id given to the request ctx belongs to, or "".
func RequestID(ctx context.Context) string {
	if ri, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return ri.id
	}
	return ""
}

// newRequestID returns 16 random hex characters.
func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// logRequests gives each request an id (also in the X-Request-Id response
// header) and logs one line when it ends, with the client clientIP names.
// The line carries the path but never the query string, headers or body,
// where codes and tokens travel.
func logRequests(logger *slog.Logger, clientIP func(*http.Request) string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ri := &requestInfo{id: newRequestID()}
			w.Header().Set("X-Request-Id", ri.id)
			sw := &metrics.StatusWriter{ResponseWriter: w}
			next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, ri)))
			level := slog.LevelInfo
			if sw.Code() >= 500 {
				level = slog.LevelError
			}
			attrs := []slog.Attr{
				slog.String("request_id", ri.id),
				slog.String("method", r.Method),
				slog.String("path", logPath(r)),
				slog.Int("status", sw.Code()),
				slog.Int64("bytes", sw.Bytes()),
				slog.Duration("duration", time.Since(start)),
				slog.String("remote", clientIP(r)),
			}
			if ri.userID != "" {
				attrs = append(attrs, slog.String("user", ri.userID))
			}
			logger.LogAttrs(r.Context(), level, "http request", attrs...)
		})
	}
}

// logPath is the request path fit for a log line: a ticket in
// /upload/<ticket> or /pick/<ticket> is a credential until used, so it
// is left out.
func logPath(r *http.Request) string {
	for _, route := range []string{"/upload/", "/pick/"} {
		if strings.HasPrefix(r.URL.Path, route) {
			return route + "{ticket}"
		}
	}
	return r.URL.Path
}

// noteUser records the authenticated user for the request log line. It
// sits inside the bearer check, where the user is known.
func noteUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, ok := identity.FromContext(r.Context()); ok {
			if ri, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
				ri.userID = u.ID
			}
		}
		next.ServeHTTP(w, r)
	})
}

func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// recoverPanics turns a panic into a 500 with the request id, and logs it
// with its stack; the client learns nothing else.
func recoverPanics(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				p := recover()
				if p == nil {
					return
				}
				if p == http.ErrAbortHandler {
					panic(p) // net/http's own way to abort a response
				}
				id := RequestID(r.Context())
				logger.ErrorContext(r.Context(), "handler panicked", "request_id", id, "path", logPath(r),
					"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				http.Error(w, "drivemail hit an internal error (request id "+id+"). Try again; if it keeps failing, give the request id to whoever runs this server.", http.StatusInternalServerError)
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// securityHeaders sets headers every response should carry. Handlers that
// need other values (the consent page's CSP) set their own.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

func tooLarge(w http.ResponseWriter, limit int64) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error": map[string]any{
			"code": -32600,
			"message": fmt.Sprintf("The request is larger than %d bytes. Do not put file contents in tool arguments: "+
				"attach Drive files by id (find them with drive_search), or upload the file first with request_upload.", limit),
		},
	})
}

// originGuard protects against DNS rebinding, in a way that also works
// behind a reverse proxy. A rebinding attack needs a DNS name of the
// attacker's that resolves to this server, so the guard refuses:
//   - a Host that is a DNS name other than the public base URL's host or
//     localhost (IP literals cannot be rebound, and a proxy that rewrites
//     Host to the upstream address sends one);
//   - an Origin (sent by browsers) other than the base URL's origin, or a
//     loopback origin when the base URL is itself loopback (local tools).
//
// Requests without Origin (every non-browser client) pass the Origin check.
// On /mcp, the guard also admits the origins of browser-based MCP clients
// (withBrowserClients).
type originGuard struct {
	baseScheme string
	baseHost   string // host[:port] of the base URL, lower case, default port dropped
	baseOrigin string // scheme://host[:port]
	loopback   bool   // the base URL is on a loopback host: loopback origins are local tools
	// clients are further origins admitted exactly; clientsLoopback admits
	// any loopback origin (the MCP Inspector's page, on any port).
	clients         map[string]bool
	clientsLoopback bool
}

// browserClientOrigins are the web MCP clients that call /mcp from a page
// (docs/clients.md, checklist E9): Claude, ChatGPT, VS Code for the web.
// Their requests carry a bearer token and no cookie, so admitting them lets
// no page ride on a user's ambient credentials; DNS rebinding still meets
// the Host check and an attacker's own origin.
var browserClientOrigins = []string{
	"https://claude.ai",
	"https://claude.com",
	"https://chatgpt.com",
	"https://vscode.dev",
	"https://insiders.vscode.dev",
}

// withBrowserClients returns the guard for /mcp: it also admits the
// browser MCP clients' origins and any loopback origin (the Inspector).
func (g originGuard) withBrowserClients() originGuard {
	g.clients = make(map[string]bool, len(browserClientOrigins))
	for _, o := range browserClientOrigins {
		g.clients[o] = true
	}
	g.clientsLoopback = true
	return g
}

func newOriginGuard(base *url.URL) originGuard {
	host := canonicalHost(base.Scheme, base.Host)
	return originGuard{
		baseScheme: base.Scheme,
		baseHost:   host,
		baseOrigin: base.Scheme + "://" + host,
		loopback:   isLoopbackHost(base.Hostname()),
	}
}

func (g originGuard) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.hostAllowed(r) {
			http.Error(w, "Forbidden: this server does not answer to host "+quoteHeader(r.Host)+". Use its public URL.", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin) {
			http.Error(w, "Forbidden: requests from origin "+quoteHeader(origin)+" are not accepted.", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (g originGuard) hostAllowed(r *http.Request) bool {
	// Behind a TLS-terminating proxy the request arrives over plain HTTP
	// with the public Host, so the base URL's scheme decides the default port.
	host := canonicalHost(g.baseScheme, r.Host)
	if host == g.baseHost {
		return true
	}
	name := hostname(host)
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	return strings.EqualFold(name, "localhost")
}

func (g originGuard) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	origin = u.Scheme + "://" + canonicalHost(u.Scheme, u.Host)
	if origin == g.baseOrigin || g.clients[origin] {
		return true
	}
	return (g.loopback || g.clientsLoopback) && isLoopbackHost(u.Hostname())
}

// canonicalHost lower-cases host[:port] and drops the scheme's default port.
func canonicalHost(scheme, host string) string {
	host = strings.ToLower(host)
	if scheme == "https" {
		return strings.TrimSuffix(host, ":443")
	}
	return strings.TrimSuffix(host, ":80")
}

// hostname strips the port and IPv6 brackets from host[:port].
func hostname(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.Trim(host, "[]")
}

func isLoopbackHost(name string) bool {
	name = strings.Trim(name, "[]")
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.IsLoopback()
}

// quoteHeader quotes a header value for an error text, bounded.
func quoteHeader(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return fmt.Sprintf("%q", s)
}
