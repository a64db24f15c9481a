package authsvc

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// tokenResponse is Google's token endpoint answer.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`
	TokenType    string `json:"token_type"`
}

// oauthError writes an OAuth error the way Google's token endpoint does:
// {"error": "invalid_grant", "error_description": "Bad Request"}.
func oauthError(w http.ResponseWriter, status int, code, description string) {
	writeNoStore(w, status, map[string]string{"error": code, "error_description": description})
}

func writeNoStore(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// token serves POST /token.
func (s *Service) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "The request body must be a form (application/x-www-form-urlencoded) under 64 KiB.")
		return
	}
	f := r.PostForm
	clientID, secret := f.Get("client_id"), f.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok {
		// x/oauth2 query-escapes Basic credentials (RFC 6749 §2.3.1).
		u, _ = url.QueryUnescape(u)
		p, _ = url.QueryUnescape(p)
		if clientID != "" && clientID != u {
			oauthError(w, http.StatusBadRequest, "invalid_request", "The client id in the Authorization header and in the form differ: send it once.")
			return
		}
		clientID, secret = u, p
	}
	switch {
	case f.Get("grant_type") != "authorization_code" && f.Get("grant_type") != "refresh_token":
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "Invalid grant_type: "+truncate(f.Get("grant_type")))
	case clientID == "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "Could not determine client ID from request.")
	case secret == "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "client_secret is missing.")
	case f.Get("grant_type") == "authorization_code":
		s.exchange(w, f, clientID)
	default:
		s.refresh(w, f, clientID)
	}
}

// exchange trades an authorization code for tokens.
func (s *Service) exchange(w http.ResponseWriter, f url.Values, clientID string) {
	code := f.Get("code")
	if code == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "Missing required parameter: code")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.codes[code]
	switch {
	case g == nil || s.deps.Now().After(g.expires) || g.req.clientID != clientID:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "Bad Request")
		return
	case g.used:
		// A replayed code revokes what it bought (RFC 6749 §4.1.2).
		for _, t := range g.issued {
			s.deps.Accounts.Revoke(t)
		}
		oauthError(w, http.StatusBadRequest, "invalid_grant", "Bad Request")
		return
	case f.Get("redirect_uri") != g.req.redirectURI:
		oauthError(w, http.StatusBadRequest, "redirect_uri_mismatch", "Bad Request")
		return
	}
	if g.req.challenge != "" {
		v := f.Get("code_verifier")
		if v == "" {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "Missing code verifier.")
			return
		}
		if !verifierMatches(v, g.req.challenge, g.req.method) {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "Invalid code verifier.")
			return
		}
	}
	g.used = true
	resp := tokenResponse{
		AccessToken: s.deps.Accounts.IssueAccess(g.email, clientID, g.scopes),
		ExpiresIn:   s.expiresIn(),
		Scope:       strings.Join(g.scopes, " "),
		TokenType:   "Bearer",
	}
	g.issued = append(g.issued, resp.AccessToken)
	if g.req.offline {
		resp.RefreshToken = s.deps.Accounts.IssueRefresh(g.email, clientID, g.scopes)
		g.issued = append(g.issued, resp.RefreshToken)
	}
	writeNoStore(w, http.StatusOK, resp)
}

// verifierMatches checks a PKCE verifier against the stored challenge.
func verifierMatches(verifier, challenge, method string) bool {
	if !validVerifier(verifier) {
		return false
	}
	got := verifier
	if method == "S256" {
		sum := sha256.Sum256([]byte(verifier))
		got = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(challenge)) == 1
}

// refresh trades a refresh token for a new access token.
func (s *Service) refresh(w http.ResponseWriter, f url.Values, clientID string) {
	rt := f.Get("refresh_token")
	if rt == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "Missing required parameter: refresh_token")
		return
	}
	var scopes []string
	for _, sc := range strings.Fields(f.Get("scope")) {
		if alias, ok := scopeAliases[sc]; ok {
			sc = alias
		}
		if !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	access, tok, err := s.deps.Accounts.RefreshWithin(rt, clientID, scopes)
	switch {
	case errors.Is(err, core.ErrInvalidScope):
		oauthError(w, http.StatusBadRequest, "invalid_scope", "Bad Request")
		return
	case err != nil:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "Token has been expired or revoked.")
		return
	}
	writeNoStore(w, http.StatusOK, tokenResponse{
		AccessToken: access,
		ExpiresIn:   s.expiresIn(),
		Scope:       strings.Join(tok.Scopes, " "),
		TokenType:   "Bearer",
	})
}

// expiresIn is the access token lifetime in whole seconds, at least one.
func (s *Service) expiresIn() int64 {
	return max(int64(s.deps.Accounts.AccessTTL().Seconds()), 1)
}

// revoke serves POST /revoke with token=… in the form or the query.
func (s *Service) revoke(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "The request body must be a form (application/x-www-form-urlencoded) under 64 KiB.")
		return
	}
	tok := r.Form.Get("token")
	if tok == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "Missing required parameter: token")
		return
	}
	email := s.deps.Accounts.Revoke(tok)
	if email == "" {
		oauthError(w, http.StatusBadRequest, "invalid_token", "Token expired or revoked")
		return
	}
	s.deps.Stats.TokenRevoked(email)
	writeNoStore(w, http.StatusOK, struct{}{})
}

// userinfo serves the OpenID userinfo endpoint: sub always, email with the
// email scope, name with the profile scope, as Google does.
func (s *Service) userinfo(w http.ResponseWriter, r *http.Request) {
	tok := ""
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		tok = strings.TrimSpace(h[7:])
	} else {
		tok = r.URL.Query().Get("access_token")
	}
	t, ok := s.deps.Accounts.Lookup(tok)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="invalid_token"`)
		oauthError(w, http.StatusUnauthorized, "invalid_request", "Invalid Credentials")
		return
	}
	info := map[string]any{"sub": Subject(t.Email)}
	if slices.Contains(t.Scopes, scopeAliases["email"]) {
		info["email"] = t.Email
		info["email_verified"] = true
	}
	if slices.Contains(t.Scopes, scopeAliases["profile"]) {
		name := displayName(t.Email)
		info["name"] = name
		info["given_name"], _, _ = strings.Cut(name, " ")
	}
	writeNoStore(w, http.StatusOK, info)
}

// Subject is the stable numeric Google account id ("sub") of an email.
func Subject(email string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(email)))
	return "1" + fmt.Sprintf("%020d", binary.BigEndian.Uint64(sum[:8]))
}

// displayName makes "Ann Lee" of "ann.lee@example.com".
func displayName(email string) string {
	local, _, _ := strings.Cut(email, "@")
	words := strings.FieldsFunc(local, func(r rune) bool { return r == '.' || r == '_' || r == '-' || r == '+' })
	for i, w := range words {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	if len(words) == 0 {
		return email
	}
	return strings.Join(words, " ")
}

// truncate cuts a client value for an error text.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }

// quote quotes a client value for an error text.
func quote(s string) string { return strconv.Quote(truncate(s)) }
