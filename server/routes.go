package server

import (
	"net/http"

	"github.com/drivemail/drivemail/account"
)

// router is where addRoutes registers: an *http.ServeMux, or a test's
// recorder of the patterns.
type router interface {
	Handle(pattern string, handler http.Handler)
}

// addRoutes is the whole HTTP surface, as docs/reference.md lists it
// ("HTTP routes"; TestReferenceRoutes holds the two together).
func addRoutes(mux router, d Deps, mcp http.Handler) {
	guard := newOriginGuard(d.BaseURL)
	// signedIn lets a request in only behind the bearer check, which reads
	// headers only: a stranger's body is never read (bodyDeadline).
	signedIn := func(next http.Handler) http.Handler { return d.Auth.RequireBearer(noteUser(next)) }
	form := readSmallBody(maxFormBodyBytes, d.BodyTimeout)

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

	// Every method meets the bearer check first (a 401 before any 405);
	// the endpoint then answers all but POST with 405.
	mux.Handle("/mcp", guard.withBrowserClients().middleware(mcpCORS(signedIn(mcp))))

	direct, ticket := uploadHandlers(d.Uploads, d.Accounts)
	direct, ticket = d.Metrics.InstrumentUpload("direct", direct), d.Metrics.InstrumentUpload("ticket", ticket)
	mux.Handle("POST /upload", guard.middleware(signedIn(direct)))
	mux.Handle("PUT /upload/{ticket}", guard.middleware(ticket))
	mux.Handle("POST /upload/{ticket}", guard.middleware(ticket))

	// The page drive_pick's links open: no bearer (a browser opens it),
	// the ticket in its path is the capability.
	mux.Handle("/pick/{ticket}", guard.middleware(pickPage(d.Picks)))

	mux.Handle("GET /healthz", healthHandler(d.Store, d.Version, d.Logger))
	mux.Handle("/", notFound())
}

// uploadHandlers returns the upload routes, a direct upload handed its
// caller's account, or handlers that say uploads are not offered when
// there is no upload service.
func uploadHandlers(u Uploads, door *account.Door) (direct, ticket http.Handler) {
	if u != nil {
		direct = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			acct, _ := callerAccount(r.Context(), door) // nil: Direct refuses
			u.Direct(w, r, acct)
		})
		return direct, u.Ticket()
	}
	off := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "This drivemail server does not accept uploads. Put the file in Google Drive and attach it by id.", http.StatusNotImplemented)
	})
	return off, off
}

// pickPage is the pick page, or one that says this server has none.
func pickPage(page http.Handler) http.Handler {
	if page != nil {
		return page
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "This drivemail server does not pick files with Google's file picker: it reads the files in your Drive itself. Ask your assistant to find the file with drive_search.", http.StatusNotFound)
	})
}

func notFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Not found. The MCP endpoint is /mcp.", http.StatusNotFound)
	})
}
