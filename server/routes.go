package server

import (
	"net/http"

	mcpserver "github.com/mark3labs/mcp-go/server"
)

// addRoutes is the whole HTTP surface (CONTRACT.md, "HTTP routes").
func addRoutes(mux *http.ServeMux, d Deps, mcp *mcpserver.StreamableHTTPServer) {
	guard := newOriginGuard(d.BaseURL)
	bearer := d.Auth.RequireBearer
	form := limitBody(maxFormBodyBytes)

	// Metadata answers GET, HEAD and a browser's preflight itself.
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
		"/mcp/.well-known/oauth-protected-resource"} {
		mux.Handle(path, d.Auth.ProtectedResourceMetadata())
	}
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		mux.Handle(path, d.Auth.AuthorizationServerMetadata())
	}
	mux.Handle("/oauth/", form(d.Auth.Endpoints()))
	// The legacy defaults clients fall back to without metadata.
	for _, path := range []string{"/authorize", "/token", "/register"} {
		mux.Handle(path, form(d.Auth.Endpoints()))
	}

	mux.Handle("POST /mcp", guard.middleware(limitMCPBody(d.MaxMCPBodyBytes)(bearer(noteUser(mcp)))))
	mux.Handle("GET /mcp", guard.middleware(bearer(noteUser(mcp))))
	// Sessions are stateless (ids are checked for shape only), so none can
	// be ended: DELETE says so with 405, as the transport spec allows,
	// instead of a 200 after which the session id would still work.
	mux.Handle("DELETE /mcp", guard.middleware(bearer(sessionsNotEnded())))

	direct, ticket := uploadHandlers(d.Uploads)
	direct, ticket = d.Metrics.InstrumentUpload("direct", direct), d.Metrics.InstrumentUpload("ticket", ticket)
	mux.Handle("POST /upload", guard.middleware(bearer(noteUser(direct))))
	mux.Handle("PUT /upload/{ticket}", guard.middleware(ticket))
	mux.Handle("POST /upload/{ticket}", guard.middleware(ticket))

	mux.Handle("GET /healthz", healthHandler(d.Store, d.Version, d.Logger))
	mux.Handle("GET /metrics", d.Metrics.Handler())
	mux.Handle("/", notFound())
}

// uploadHandlers returns the upload routes, or handlers that say uploads
// are not offered when there is no upload service.
func uploadHandlers(u Uploads) (direct, ticket http.Handler) {
	if u != nil {
		return u.Direct(), u.Ticket()
	}
	off := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "This drivemail server does not accept uploads. Put the file in Google Drive and attach it by id.", http.StatusNotImplemented)
	})
	return off, off
}

// sessionsNotEnded answers a session DELETE: there is nothing to end.
func sessionsNotEnded() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "drivemail keeps no session state, so there is no session to end; just stop using the session id.", http.StatusMethodNotAllowed)
	})
}

func notFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Not found. The MCP endpoint is /mcp.", http.StatusNotFound)
	})
}
