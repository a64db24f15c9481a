package oauth

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/oauth/googleauth"
	"github.com/drivemail/drivemail/store"
)

// RequireBearer lets through only requests that carry, in the
// Authorization header, a live drivemail access token issued for BASE/mcp;
// it puts the token's identity.User in the request context. Other requests
// get 401 with a WWW-Authenticate challenge that points at the
// protected-resource metadata (with error="invalid_token" when a token was
// given), or 400 for a token in the URL. Google's own tokens are just
// unknown tokens here: they are never accepted or passed through.
func (s *Server) RequireBearer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("access_token") {
			s.challenge(w, http.StatusBadRequest, "invalid_request", "Send the access token in the Authorization header, never in the URL.")
			return
		}
		raw, present := bearerToken(r)
		if !present {
			s.challenge(w, http.StatusUnauthorized, "", "This endpoint needs an access token: sign in through the authorization server named in the protected-resource metadata.")
			return
		}
		if raw == "" {
			s.challenge(w, http.StatusUnauthorized, "invalid_token", "The Authorization header must be: Bearer <access token>.")
			return
		}
		t, err := s.cfg.Store.GetToken(r.Context(), raw)
		var problem string
		switch {
		case errors.Is(err, store.ErrNotFound):
			problem = "The access token is unknown, expired or revoked."
		case err != nil:
			s.logger.ErrorContext(r.Context(), "bearer: look up token", "err", err)
			writeOAuthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "drivemail cannot check tokens right now; try again shortly.")
			return
		case t.Kind != store.AccessToken:
			problem = "That is a refresh token; send an access token."
		case !s.now().Before(t.ExpiresAt):
			problem = "The access token expired; use the refresh token to get a new one."
		case t.Resource != s.resource:
			problem = "The access token was issued for another resource; get one for " + s.resource + "."
		}
		if problem != "" {
			s.challenge(w, http.StatusUnauthorized, "invalid_token", problem)
			return
		}
		u, err := s.cfg.Store.GetUser(r.Context(), t.UserID)
		if errors.Is(err, store.ErrNotFound) {
			s.challenge(w, http.StatusUnauthorized, "invalid_token", "The access token's user no longer exists; sign in again.")
			return
		}
		if err != nil {
			s.logger.ErrorContext(r.Context(), "bearer: look up user", "err", err)
			writeOAuthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "drivemail cannot check tokens right now; try again shortly.")
			return
		}
		if u.GoogleGrantDead {
			// Every tool would fail the same way; a 401 makes the MCP
			// client refresh (refused too) and then sign the user in again.
			s.challenge(w, http.StatusUnauthorized, "invalid_token", googleGrantDeadText)
			return
		}
		ctx := identity.WithUser(r.Context(), identity.User{ID: u.ID, Email: u.Email, GoogleScopes: u.GoogleScopes})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// bearerToken extracts the token of an "Authorization: Bearer" header.
// present is false when no Authorization header was sent at all.
func bearerToken(r *http.Request) (token string, present bool) {
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		return "", false
	}
	if len(values) > 1 {
		return "", true
	}
	scheme, tok, ok := strings.Cut(strings.TrimSpace(values[0]), " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || !token68(tok) {
		return "", true
	}
	return tok, true
}

// token68 reports whether s has RFC 6750's b64token shape.
func token68(s string) bool {
	if s == "" || len(s) > 4096 {
		return false
	}
	for i, c := range s {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		case c == '=' && i > 0:
		default:
			return false
		}
	}
	return true
}

// challenge writes a Bearer challenge (RFC 6750 §3, RFC 9728 §5.1). It
// names the scope to ask for (the MCP authorization spec's scope
// selection; Claude.ai reads it before the metadata's scopes_supported).
func (s *Server) challenge(w http.ResponseWriter, status int, code, description string) {
	v := `Bearer resource_metadata="` + s.ResourceMetadataURL() + `", scope="` + Scope + `"`
	if code != "" {
		v += `, error="` + code + `", error_description="` + quotable(description) + `"`
	}
	w.Header().Set("WWW-Authenticate", v)
	body := code
	if body == "" {
		body = "unauthorized"
	}
	writeOAuthError(w, status, body, description)
}

// InsufficientScope answers 403 for an HTTP route whose work needs a
// Google scope the user has not granted; the challenge asks the client to
// authorize again (step-up), and the body says what to do.
func (s *Server) InsufficientScope(w http.ResponseWriter, googleScope string) {
	description := MissingScopeMessage(googleScope, slices.Contains(s.cfg.Google.Scopes(), googleScope))
	w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+s.ResourceMetadataURL()+`", error="insufficient_scope", scope="`+Scope+`", error_description="`+quotable(description)+`"`)
	writeOAuthError(w, http.StatusForbidden, "insufficient_scope", description)
}

// MissingScopeMessage is the sentence for a user who lacks a Google scope
// (for example gmail.compose for drafts). requested says whether this
// server asks Google for that scope at all (drafts: started with --drafts).
func MissingScopeMessage(googleScope string, requested bool) string {
	what := scopeWords(googleScope)
	if !requested {
		return "This needs permission to " + what + ", which this drivemail server does not ask Google for. " +
			"Ask its operator to enable it (for drafts: start drivemail with --drafts; for reading mail: --read-mail), then reconnect drivemail (sign in again) and approve it."
	}
	return "This needs permission to " + what + ", which your Google account has not granted to drivemail. " +
		"Reconnect drivemail (sign in again) and allow it on Google's consent screen."
}

func scopeWords(scope string) string {
	switch scope {
	case googleauth.ScopeGmailCompose:
		return "create Gmail drafts (gmail.compose)"
	case googleauth.ScopeGmailReadonly:
		return "read your Gmail (gmail.readonly)"
	case googleauth.ScopeGmailSend:
		return "send email from your Gmail (gmail.send)"
	case googleauth.ScopeDriveReadonly:
		return "read your Google Drive files (drive.readonly)"
	case googleauth.ScopeDriveFile:
		return "add files to your Google Drive (drive.file)"
	default:
		return "use " + scope
	}
}

// quotable makes s safe inside a quoted header parameter.
func quotable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '\\' || r < 0x20 || r > 0x7e {
			return '\''
		}
		return r
	}, s)
}
