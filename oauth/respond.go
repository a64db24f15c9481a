package oauth

import (
	"encoding/json"
	"net/http"
	"net/url"
)

// oauthError is an RFC 6749 error body.
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// writeJSON writes v with the headers every token-bearing answer needs.
func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeOAuthError(w http.ResponseWriter, status int, code, description string) {
	writeJSON(w, status, oauthError{Error: code, Description: description})
}

// redirectTo sends the browser to the client's redirect URI with params
// added to its query (RFC 6749 §4.1.2), plus iss (RFC 9207).
func (s *Server) redirectTo(w http.ResponseWriter, r *http.Request, redirectURI string, params url.Values) {
	u, err := url.Parse(redirectURI)
	if err != nil {
		// Stored redirect URIs were validated; this cannot happen.
		s.errorPage(w, r, http.StatusInternalServerError, "The application's redirect address is invalid.", "Register the application again.")
		return
	}
	// The registered URI's own query stays byte for byte as registered
	// (RFC 6749 §3.1.2); ours is added after it, the client's state
	// percent-encoded so it comes back exactly as sent (RFC 6749 §4.1.2).
	params.Set("iss", s.base)
	if u.RawQuery != "" {
		u.RawQuery += "&" + params.Encode()
	} else {
		u.RawQuery = params.Encode()
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

// redirectError reports an authorization error to a trusted redirect URI.
func (s *Server) redirectError(w http.ResponseWriter, r *http.Request, redirectURI, state, code, description string) {
	params := url.Values{"error": {code}, "error_description": {description}}
	if state != "" {
		params.Set("state", state)
	}
	s.redirectTo(w, r, redirectURI, params)
}
