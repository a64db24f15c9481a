package oauth

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/google/uuid"

	"github.com/drivemail/drivemail/oauth/googleauth"
	"github.com/drivemail/drivemail/store"
)

// callback is where Google sends the browser back. It checks that the
// state is one we issued (once) to this same browser, takes the Google
// tokens, and sends the browser on to the MCP client with our own code.
func (s *Server) callback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		s.errorPage(w, r, http.StatusBadRequest, "Google's answer has no state.", "Start connecting again from your application.")
		return
	}
	req, err := s.cfg.Store.TakeAuthRequestByState(ctx, state)
	if errors.Is(err, store.ErrNotFound) {
		s.errorPage(w, r, http.StatusBadRequest, "This sign-in link was already used or has expired.", "Start connecting again from your application.")
		return
	}
	if err != nil {
		s.logger.ErrorContext(ctx, "take authorization request", "err", err)
		s.errorPage(w, r, http.StatusInternalServerError, "drivemail could not finish the sign-in.", "Start connecting again from your application.")
		return
	}
	if !s.sameBrowser(r, req.BrowserHash) {
		s.errorPage(w, r, http.StatusForbidden, "This sign-in finished in a different browser from the one that approved it.",
			"Start connecting again, and finish in the same browser.")
		return
	}
	if e := q.Get("error"); e != "" {
		if e == "access_denied" {
			s.redirectError(w, r, req.RedirectURI, req.ClientState, "access_denied", "The user did not grant access at Google.")
		} else {
			s.logger.WarnContext(ctx, "Google refused the authorization", "google_error", googleErrorCode(e))
			s.redirectError(w, r, req.RedirectURI, req.ClientState, "server_error", "Google refused the sign-in; try again.")
		}
		return
	}
	code := q.Get("code")
	if code == "" {
		s.redirectError(w, r, req.RedirectURI, req.ClientState, "server_error", "Google's answer had no authorization code; try again.")
		return
	}
	grant, err := s.cfg.Google.Exchange(ctx, code, req.GoogleVerifier)
	if err != nil {
		s.logger.WarnContext(ctx, "Google sign-in failed", "err", err) // googleauth errors carry no token or body
		s.redirectError(w, r, req.RedirectURI, req.ClientState, "server_error", "Signing in with Google failed; try again.")
		return
	}
	user, err := s.cfg.Google.SaveGrant(ctx, grant)
	if err != nil {
		s.logger.ErrorContext(ctx, "save Google grant", "err", err)
		s.redirectError(w, r, req.RedirectURI, req.ClientState, "server_error", "drivemail could not save the sign-in; try again.")
		return
	}
	ourCode, err := s.issueCode(r, req, user.ID)
	if err != nil {
		s.logger.ErrorContext(ctx, "issue authorization code", "err", err)
		s.redirectError(w, r, req.RedirectURI, req.ClientState, "server_error", "drivemail could not finish the sign-in; try again.")
		return
	}
	missing := missingScopes(grant.Scopes, s.cfg.Google.Scopes())
	s.logger.InfoContext(ctx, "user authorized a client", "user", user.ID, "client_id", req.ClientID, "google_scopes_missing", missing)
	params := url.Values{"code": {ourCode}}
	if req.ClientState != "" {
		params.Set("state", req.ClientState)
	}
	s.redirectTo(w, r, req.RedirectURI, params)
}

// issueCode creates the grant and its single-use authorization code.
func (s *Server) issueCode(r *http.Request, req store.AuthRequest, userID string) (string, error) {
	ctx := r.Context()
	now := s.now()
	g := store.Grant{ID: uuid.NewString(), UserID: userID, ClientID: req.ClientID, Resource: req.Resource, Scope: req.Scope, CreatedAt: now}
	if err := s.cfg.Store.CreateGrant(ctx, g); err != nil {
		return "", err
	}
	code := newSecret(codePrefix)
	err := s.cfg.Store.PutCode(ctx, code, store.Code{
		GrantID:       g.ID,
		ClientID:      req.ClientID,
		UserID:        userID,
		RedirectURI:   req.RedirectURI,
		CodeChallenge: req.CodeChallenge,
		Resource:      req.Resource,
		Scope:         req.Scope,
		ExpiresAt:     now.Add(s.cfg.CodeTTL),
	})
	return code, err
}

// missingScopes lists the asked-for Google scopes the user did not grant.
func missingScopes(granted, asked []string) []string {
	have := map[string]bool{}
	for _, g := range granted {
		have[g] = true
	}
	var out []string
	for _, a := range asked {
		if !have[a] && !(a == googleauth.ScopeEmail && have[googleauth.ScopeUserinfoEmail]) {
			out = append(out, a)
		}
	}
	return out
}

// googleErrorCode is the error Google's redirect named, if it is one of the
// codes OAuth and Google define, else "other": anyone can call the
// callback, and the log keeps no text a caller chose.
func googleErrorCode(e string) string {
	switch e {
	case "invalid_request", "unauthorized_client", "access_denied", "unsupported_response_type",
		"invalid_scope", "server_error", "temporarily_unavailable", // RFC 6749 §4.1.2.1
		"admin_policy_enforced", "disallowed_useragent", "org_internal", "invalid_client",
		"invalid_grant", "redirect_uri_mismatch", "policy_enforced": // Google's own
		return e
	}
	return "other"
}
