package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/drivemail/drivemail/oauth/cimd"
	"github.com/drivemail/drivemail/store"
)

// maxTokenFormLen caps a token or revocation request body.
const maxTokenFormLen = 16 << 10

// verifierShape is RFC 7636's code_verifier: 43–128 unreserved characters.
var verifierShape = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// tokenResponse is RFC 6749 §5.1's answer.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`
}

// tokenError is an RFC 6749 §5.2 error.
type tokenError struct {
	status      int
	code        string
	description string
}

func (e *tokenError) Error() string { return e.code + ": " + e.description }

func invalidGrant(description string) *tokenError {
	return &tokenError{http.StatusBadRequest, "invalid_grant", description}
}

func invalidRequest(description string) *tokenError {
	return &tokenError{http.StatusBadRequest, "invalid_request", description}
}

// token is the token endpoint: authorization_code and refresh_token.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	resp, terr := s.grant(w, r)
	if terr != nil {
		if terr.code == "invalid_client" && r.Header.Get("Authorization") != "" {
			w.Header().Set("WWW-Authenticate", `Basic realm="drivemail"`)
		}
		writeOAuthError(w, terr.status, terr.code, terr.description)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// grant reads a token request, authenticates the client and runs the grant.
func (s *Server) grant(w http.ResponseWriter, r *http.Request) (tokenResponse, *tokenError) {
	form, terr := readForm(w, r)
	if terr != nil {
		return tokenResponse{}, terr
	}
	c, terr := s.authenticateClient(r.Context(), r, form)
	if terr != nil {
		return tokenResponse{}, terr
	}
	switch form.Get("grant_type") {
	case "authorization_code":
		return s.exchangeCode(r.Context(), c, form)
	case "refresh_token":
		return s.refresh(r.Context(), c, form)
	case "":
		return tokenResponse{}, invalidRequest("grant_type is required: authorization_code or refresh_token.")
	default:
		return tokenResponse{}, &tokenError{http.StatusBadRequest, "unsupported_grant_type", "Use grant_type authorization_code or refresh_token."}
	}
}

// readForm parses a bounded form body, refusing repeated parameters.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, *tokenError) {
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenFormLen)
	if err := r.ParseForm(); err != nil {
		return nil, invalidRequest("The request body must be a form (application/x-www-form-urlencoded) of at most 16 KiB.")
	}
	if r.URL.RawQuery != "" {
		return nil, invalidRequest("Send the parameters in the request body, not the URL.")
	}
	for k, v := range r.PostForm {
		if len(v) > 1 {
			return nil, invalidRequest("The parameter " + clip(k) + " is repeated.")
		}
	}
	return r.PostForm, nil
}

// authenticateClient identifies the client by HTTP Basic or the form, and
// checks its secret when it has one. Unknown clients get invalid_client,
// which tells MCP clients such as Claude to register again.
func (s *Server) authenticateClient(ctx context.Context, r *http.Request, form url.Values) (client, *tokenError) {
	if form.Get("client_assertion") != "" || form.Get("client_assertion_type") != "" {
		return s.authenticateAssertion(ctx, r, form)
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			return client{}, &tokenError{http.StatusUnauthorized, "invalid_client", "The Basic credentials are not form-encoded."}
		}
		if f := form.Get("client_id"); f != "" && f != id {
			return client{}, invalidRequest("client_id in the body differs from the Basic credentials.")
		}
	} else {
		id, secret = form.Get("client_id"), form.Get("client_secret")
	}
	if id == "" {
		return client{}, &tokenError{http.StatusUnauthorized, "invalid_client", "Identify the client with client_id."}
	}
	c, terr := s.clientByID(ctx, r, id)
	if terr != nil {
		return client{}, terr
	}
	if c.AuthMethod == authPrivateKeyJWT {
		return client{}, invalidClient("This client authenticates with private_key_jwt: send client_assertion_type %s and a client_assertion signed with a key of its jwks_uri.", jwtBearer)
	}
	if c.AuthMethod != "none" {
		if secret == "" || !hashEqual(store.Hash(secret), c.SecretHash) {
			return client{}, &tokenError{http.StatusUnauthorized, "invalid_client", "The client secret is missing or wrong."}
		}
	}
	return c, nil
}

// clientByID finds the client a token or revocation request names, and
// words a client that cannot be found or used.
func (s *Server) clientByID(ctx context.Context, r *http.Request, id string) (client, *tokenError) {
	c, err := s.lookupClient(ctx, id, s.metadataFetchAllowed(r))
	var refusal *cimd.Error
	var meta *metadataError
	switch {
	case errors.Is(err, errUnknownClient):
		return client{}, &tokenError{http.StatusUnauthorized, "invalid_client", "Unknown client; register again."}
	case errors.As(err, &refusal) && refusal.Server():
		return client{}, &tokenError{http.StatusServiceUnavailable, "temporarily_unavailable", "drivemail could not fetch the client metadata document just now (" + err.Error() + "); try again in a minute."}
	case errors.As(err, &refusal), errors.As(err, &meta):
		return client{}, &tokenError{http.StatusUnauthorized, "invalid_client", "The client metadata document at " + clip(id) + " cannot be used: " + err.Error() + ". Its publisher must fix it."}
	case err != nil:
		s.logger.ErrorContext(ctx, "token endpoint: client lookup", "err", err)
		return client{}, serverError()
	}
	return c, nil
}

// metadataFetchAllowed counts a client metadata document fetch that the
// token or revocation endpoint would make for r's caller: anyone may send
// any https client_id there, and each fetch is a request drivemail makes.
func (s *Server) metadataFetchAllowed(r *http.Request) func(context.Context) error {
	return func(ctx context.Context) error {
		n, err := s.cfg.Store.Hit(ctx, limitKey("cimd-fetch", s.cfg.ClientIP(r)), time.Minute)
		if err != nil {
			return fmt.Errorf("drivemail cannot count metadata fetches right now: %w", err)
		}
		if n > int64(s.cfg.MetadataFetchLimit) {
			return fmt.Errorf("too many client metadata documents fetched for this address (at most %d a minute)", s.cfg.MetadataFetchLimit)
		}
		return nil
	}
}

// exchangeCode redeems an authorization code (once).
func (s *Server) exchangeCode(ctx context.Context, c client, form url.Values) (tokenResponse, *tokenError) {
	code, verifier, redirectURI := form.Get("code"), form.Get("code_verifier"), form.Get("redirect_uri")
	switch {
	case code == "":
		return tokenResponse{}, invalidRequest("code is required.")
	case verifier == "":
		return tokenResponse{}, invalidRequest("code_verifier is required (PKCE).")
	case !verifierShape.MatchString(verifier):
		return tokenResponse{}, invalidRequest("code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~.")
	case redirectURI == "":
		return tokenResponse{}, invalidRequest("redirect_uri is required and must equal the one sent to /oauth/authorize.")
	}
	stored, err := s.cfg.Store.TakeCode(ctx, code)
	switch {
	case errors.Is(err, store.ErrUsed):
		// A code presented twice was intercepted or replayed: everything
		// issued with it goes (RFC 6749 §4.1.2, OAuth 2.1 §4.1.3).
		if err := s.cfg.Store.RevokeGrant(ctx, stored.GrantID); err != nil {
			s.logger.ErrorContext(ctx, "revoke grant of a reused code", "err", err)
		}
		s.logger.WarnContext(ctx, "authorization code reused; grant revoked", "client_id", stored.ClientID, "grant", stored.GrantID)
		return tokenResponse{}, invalidGrant("This authorization code was already used; the tokens issued with it are revoked. Authorize again.")
	case errors.Is(err, store.ErrNotFound):
		return tokenResponse{}, invalidGrant("The authorization code is unknown or expired. Authorize again.")
	case err != nil:
		s.logger.ErrorContext(ctx, "take authorization code", "err", err)
		return tokenResponse{}, serverError()
	}
	switch {
	case !s.now().Before(stored.ExpiresAt):
		return tokenResponse{}, invalidGrant("The authorization code expired. Authorize again.")
	case stored.ClientID != c.ID:
		return tokenResponse{}, invalidGrant("The authorization code was issued to another client.")
	case stored.RedirectURI != redirectURI:
		return tokenResponse{}, invalidGrant("redirect_uri differs from the one sent to /oauth/authorize.")
	case !pkceMatches(verifier, stored.CodeChallenge):
		return tokenResponse{}, invalidGrant("code_verifier does not match the code_challenge (PKCE).")
	}
	if res := form.Get("resource"); res != "" {
		if r, ok := s.resourceFor(res); !ok || r != stored.Resource {
			return tokenResponse{}, &tokenError{http.StatusBadRequest, "invalid_target", "resource differs from the one authorized: " + stored.Resource + "."}
		}
	}
	return s.issueTokens(ctx, c, stored.GrantID, stored.UserID, stored.Resource, stored.Scope)
}

func pkceMatches(verifier, challenge string) bool {
	sum := sha256.Sum256([]byte(verifier))
	return hashEqual(base64.RawURLEncoding.EncodeToString(sum[:]), challenge)
}

// refresh rotates a refresh token: the old one is spent, a new pair is
// issued. A spent token presented again means it leaked, so the whole
// grant is revoked (OAuth 2.1 §4.3.1); but within the grace window
// (--refresh-grace) it gets the pair its first use got, because clients
// with several processes or backend nodes refresh with one token at once.
func (s *Server) refresh(ctx context.Context, c client, form url.Values) (tokenResponse, *tokenError) {
	raw := form.Get("refresh_token")
	if raw == "" {
		return tokenResponse{}, invalidRequest("refresh_token is required.")
	}
	if !c.allowsRefresh() {
		return tokenResponse{}, &tokenError{http.StatusBadRequest, "unauthorized_client", "This client did not register the refresh_token grant."}
	}
	// Check the request and the token before spending it: a refused
	// request leaves the client holding it, and spent, its retry would
	// count as a reuse and revoke the grant. A scope parameter is read
	// as at authorization: drivemail's one scope is all it can name, so
	// it is never more than the grant's (RFC 6749 §6).
	if res := form.Get("resource"); res != "" {
		if _, ok := s.resourceFor(res); !ok {
			return tokenResponse{}, &tokenError{http.StatusBadRequest, "invalid_target", "resource differs from the one authorized: " + s.resource + "."}
		}
	}
	t, err := s.cfg.Store.GetToken(ctx, raw)
	switch {
	case errors.Is(err, store.ErrNotFound), err == nil && t.Kind != store.RefreshToken:
		return tokenResponse{}, invalidGrant("The refresh token is unknown, expired or revoked. Authorize again.")
	case err != nil:
		s.logger.ErrorContext(ctx, "read refresh token", "err", err)
		return tokenResponse{}, serverError()
	case !s.now().Before(t.ExpiresAt):
		return tokenResponse{}, invalidGrant("The refresh token expired. Authorize again.")
	case t.ClientID != c.ID:
		return tokenResponse{}, invalidGrant("The refresh token was issued to another client.")
	}
	if terr := s.googleGrantAlive(ctx, t.UserID); terr != nil {
		return tokenResponse{}, terr
	}
	resp, next := s.mint(c, t.Scope)
	rot := store.Rotation{Tokens: next}
	if s.cfg.RefreshGrace > 0 {
		sealed, err := s.sealSuccessor(raw, resp)
		if err != nil {
			s.logger.ErrorContext(ctx, "seal refresh successor", "err", err)
			return tokenResponse{}, serverError()
		}
		rot.Successor, rot.Grace, rot.MaxReuses = sealed, s.cfg.RefreshGrace, maxRefreshReuses
	}
	// One transaction spends the old token and stores the new ones: if
	// storing fails, the client's retry with the old token still works
	// instead of counting as a replay.
	t, err = s.cfg.Store.RotateRefreshToken(ctx, raw, rot)
	switch {
	case errors.Is(err, store.ErrUsed): // spent before, outside the grace window
		return tokenResponse{}, s.revokeReplayedRefresh(ctx, t)
	case errors.Is(err, store.ErrNotFound): // revoked meanwhile
		return tokenResponse{}, invalidGrant("The refresh token is unknown, expired or revoked. Authorize again.")
	case err != nil:
		s.logger.ErrorContext(ctx, "rotate refresh token", "err", err)
		return tokenResponse{}, serverError()
	case t.Used: // spent moments ago: the same pair again
		again, err := s.openSuccessor(raw, t.Successor)
		if err != nil {
			s.logger.ErrorContext(ctx, "open refresh successor", "err", err)
			return tokenResponse{}, serverError()
		}
		// By design (the grace window), but a thief's replay inside the
		// window looks the same: each one is a warning an operator can
		// count per client and grant.
		s.logger.WarnContext(ctx, "refresh token reused within the grace window; answered with the pair its first use got",
			"client_id", t.ClientID, "grant", t.GrantID, "reuses", t.Reuses)
		return again, nil
	}
	return resp, nil
}

func serverError() *tokenError {
	return &tokenError{http.StatusInternalServerError, "server_error", "Try again shortly."}
}

// googleGrantAlive refuses to renew tokens of a user whose Google grant is
// known dead: a client that gets invalid_grant signs the user in again,
// which is the only cure.
func (s *Server) googleGrantAlive(ctx context.Context, userID string) *tokenError {
	u, err := s.cfg.Store.GetUser(ctx, userID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return invalidGrant("The refresh token's user no longer exists. Authorize again.")
	case err != nil:
		s.logger.ErrorContext(ctx, "read user", "err", err)
		return serverError()
	case u.GoogleGrantDead:
		return invalidGrant(googleGrantDeadText)
	}
	return nil
}

// googleGrantDeadText tells a client (and through it the user) why a live
// drivemail token no longer works.
const googleGrantDeadText = "Google no longer accepts this account's authorization for drivemail (it was revoked or expired). Authorize again: sign in with Google."

// revokeReplayedRefresh revokes the grant of a spent refresh token that
// was presented again, and says so.
func (s *Server) revokeReplayedRefresh(ctx context.Context, t store.Token) *tokenError {
	if err := s.cfg.Store.RevokeGrant(ctx, t.GrantID); err != nil {
		s.logger.ErrorContext(ctx, "revoke grant of a reused refresh token", "err", err)
	}
	s.logger.WarnContext(ctx, "refresh token reused; grant revoked", "client_id", t.ClientID, "grant", t.GrantID)
	return invalidGrant("This refresh token was already used; for safety its authorization is revoked. Authorize again.")
}

// mint makes a new access token, and a refresh token when the client
// registered that grant: the response, and the tokens to store for it.
func (s *Server) mint(c client, scope string) (tokenResponse, []store.NewToken) {
	now := s.now()
	resp := tokenResponse{AccessToken: newSecret(accessPrefix), TokenType: "Bearer", ExpiresIn: int64(s.cfg.AccessTTL / time.Second), Scope: scope}
	next := []store.NewToken{{Raw: resp.AccessToken, Kind: store.AccessToken, ExpiresAt: now.Add(s.cfg.AccessTTL)}}
	if c.allowsRefresh() {
		resp.RefreshToken = newSecret(refreshPrefix)
		next = append(next, store.NewToken{Raw: resp.RefreshToken, Kind: store.RefreshToken, ExpiresAt: now.Add(s.cfg.RefreshTTL)})
	}
	return resp, next
}

// issueTokens stores and returns the tokens for a redeemed code.
func (s *Server) issueTokens(ctx context.Context, c client, grantID, userID, resource, scope string) (tokenResponse, *tokenError) {
	resp, next := s.mint(c, scope)
	for _, nt := range next {
		err := s.cfg.Store.PutToken(ctx, nt.Raw, store.Token{Kind: nt.Kind, GrantID: grantID, ClientID: c.ID, UserID: userID,
			Resource: resource, Scope: scope, ExpiresAt: nt.ExpiresAt})
		if errors.Is(err, store.ErrNotFound) {
			return tokenResponse{}, invalidGrant("The authorization was revoked. Authorize again.")
		}
		if err != nil {
			s.logger.ErrorContext(ctx, "store tokens", "err", err)
			return tokenResponse{}, serverError()
		}
	}
	return resp, nil
}

// revoke is RFC 7009: revoking a refresh token ends its whole grant;
// revoking an access token ends that token. Unknown tokens are no error.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	terr := s.revocation(w, r)
	if terr != nil {
		writeOAuthError(w, terr.status, terr.code, terr.description)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

func (s *Server) revocation(w http.ResponseWriter, r *http.Request) *tokenError {
	form, terr := readForm(w, r)
	if terr != nil {
		return terr
	}
	c, terr := s.authenticateClient(r.Context(), r, form)
	if terr != nil {
		return terr
	}
	return s.revokeToken(r.Context(), c, form.Get("token"))
}

func (s *Server) revokeToken(ctx context.Context, c client, raw string) *tokenError {
	if raw == "" {
		return invalidRequest("token is required.")
	}
	t, err := s.cfg.Store.GetToken(ctx, raw)
	if errors.Is(err, store.ErrNotFound) || (err == nil && t.ClientID != c.ID) {
		return nil // RFC 7009 §2.2: nothing to say about tokens that are not the caller's
	}
	if err == nil {
		if t.Kind == store.RefreshToken {
			err = s.cfg.Store.RevokeGrant(ctx, t.GrantID)
		} else {
			err = s.cfg.Store.DeleteToken(ctx, raw)
		}
	}
	if err != nil {
		s.logger.ErrorContext(ctx, "revoke token", "err", err)
		return &tokenError{http.StatusServiceUnavailable, "temporarily_unavailable", "Try again shortly."}
	}
	if t.Kind == store.RefreshToken {
		s.revokeGoogleIfLast(ctx, t.UserID)
	}
	return nil
}

// revokeGoogleIfLast ends the user's Google grant when the grant just
// revoked was their last one: disconnecting drivemail from the last client
// should leave no access behind at Google either. Failures are logged,
// not answered: the client's revocation itself succeeded.
func (s *Server) revokeGoogleIfLast(ctx context.Context, userID string) {
	n, err := s.cfg.Store.LiveGrants(ctx, userID)
	if err != nil {
		s.logger.WarnContext(ctx, "count live grants after a revocation", "user", userID, "err", err)
		return
	}
	if n > 0 {
		return
	}
	if err := s.cfg.Google.Revoke(ctx, userID); err != nil {
		s.logger.WarnContext(ctx, "could not revoke the Google grant of a user with no grant left", "user", userID, "err", err)
		return
	}
	s.logger.InfoContext(ctx, "the user's last grant was revoked; their Google grant is revoked too", "user", userID)
}
