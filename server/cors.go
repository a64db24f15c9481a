package server

import (
	"net/http"
	"strings"
)

// CORS for /mcp, so an MCP client running in a browser page (the MCP
// Inspector, web clients) can call it. It sits inside the Origin guard,
// so only origins the guard admits get here; it answers their preflight
// and lets their scripts read what the client needs (the session id, the
// 401's WWW-Authenticate). No credentials mode: /mcp takes a bearer
// token, never a cookie.
const (
	corsAllowMethods  = "POST, GET, DELETE"
	corsExposeHeaders = "Mcp-Session-Id, WWW-Authenticate, X-Request-Id"
	// corsAllowHeaders is the answer when a preflight names no headers, or
	// names them unreadably.
	corsAllowHeaders = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID"
	corsMaxAge       = "600"
	// maxCORSRequestHeaders bounds the header list a preflight may ask for.
	maxCORSRequestHeaders = 2048
)

func mcpCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", corsAllowMethods)
			h.Set("Access-Control-Allow-Headers", allowedRequestHeaders(r.Header.Get("Access-Control-Request-Headers")))
			h.Set("Access-Control-Max-Age", corsMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		next.ServeHTTP(w, r)
	})
}

// allowedRequestHeaders admits the headers a preflight asks for (a user
// may give the Inspector custom headers), when they are a readable list
// of header names; otherwise the headers MCP uses.
func allowedRequestHeaders(requested string) string {
	if requested == "" || len(requested) > maxCORSRequestHeaders {
		return corsAllowHeaders
	}
	for name := range strings.SplitSeq(requested, ",") {
		if !isToken(strings.TrimSpace(name)) {
			return corsAllowHeaders
		}
	}
	return requested
}

// isToken reports whether s is an HTTP token (RFC 9110 §5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
