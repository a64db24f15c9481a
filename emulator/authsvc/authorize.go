package authsvc

import (
	"net/http"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// authRequest is a validated authorization request.
type authRequest struct {
	id            string // consent page id
	clientID      string
	redirectURI   string
	scopes        []string
	state         string
	challenge     string
	method        string // "S256" or "plain"; empty without PKCE
	offline       bool
	prompt        []string
	loginHint     string
	expires       time.Time
	responseTypes string
}

// baseScopes are granted with any sign-in and cannot be unticked.
var baseScopes = []string{"openid", "https://www.googleapis.com/auth/userinfo.email", "https://www.googleapis.com/auth/userinfo.profile"}

// scopeAliases are the short names Google accepts for the sign-in scopes.
var scopeAliases = map[string]string{
	"email":   "https://www.googleapis.com/auth/userinfo.email",
	"profile": "https://www.googleapis.com/auth/userinfo.profile",
}

// Bounds on what an authorization request may carry.
const (
	maxScopes    = 50
	maxParamLen  = 2048
	maxStateLen  = 2048
	maxEmailLen  = 254
	minChallenge = 43
	maxChallenge = 128
)

// authError is a refusal of an authorization request, shown as Google's
// "Error 400" page.
type authError struct {
	code        string // OAuth error code, e.g. invalid_request
	description string
}

// parseAuthRequest validates the query of an authorization request.
func parseAuthRequest(q url.Values) (authRequest, *authError) {
	invalid := func(desc string) (authRequest, *authError) {
		return authRequest{}, &authError{code: "invalid_request", description: desc}
	}
	for k, v := range q {
		if len(v) > 1 {
			return invalid("Parameter " + k + " is given more than once: give it once.")
		}
		if len(v[0]) > maxParamLen {
			return invalid("Parameter " + k + " is longer than " + itoa(maxParamLen) + " characters.")
		}
	}
	r := authRequest{
		clientID:      q.Get("client_id"),
		redirectURI:   q.Get("redirect_uri"),
		state:         q.Get("state"),
		challenge:     q.Get("code_challenge"),
		method:        q.Get("code_challenge_method"),
		loginHint:     strings.TrimSpace(q.Get("login_hint")),
		responseTypes: q.Get("response_type"),
	}
	if r.clientID == "" {
		return invalid("Missing required parameter: client_id")
	}
	if r.redirectURI == "" {
		return invalid("Missing required parameter: redirect_uri")
	}
	if u, err := url.Parse(r.redirectURI); err != nil || !u.IsAbs() || u.Fragment != "" || (u.Scheme == "http" || u.Scheme == "https") && u.Host == "" {
		return authRequest{}, &authError{code: "redirect_uri_mismatch",
			description: "redirect_uri must be an absolute URL without a fragment, such as http://127.0.0.1:8080/oauth/callback."}
	}
	if r.responseTypes == "" {
		return invalid("Missing required parameter: response_type")
	}
	if r.responseTypes != "code" {
		return authRequest{}, &authError{code: "unsupported_response_type",
			description: "response_type " + quote(r.responseTypes) + " is not supported: use response_type=code."}
	}
	scope := strings.Fields(q.Get("scope"))
	if len(scope) == 0 {
		return invalid("Missing required parameter: scope")
	}
	if len(scope) > maxScopes {
		return invalid("Too many scopes: ask for at most " + itoa(maxScopes) + ".")
	}
	for _, sc := range scope {
		if alias, ok := scopeAliases[sc]; ok {
			sc = alias
		}
		if !slices.Contains(r.scopes, sc) {
			r.scopes = append(r.scopes, sc)
		}
	}
	switch {
	case r.challenge == "" && r.method != "":
		return invalid("code_challenge_method is given without code_challenge: send both, or neither.")
	case r.challenge != "" && r.method == "":
		r.method = "plain" // RFC 7636's default
	}
	if r.challenge != "" {
		if r.method != "S256" && r.method != "plain" {
			return invalid("code_challenge_method " + quote(r.method) + " is not supported: use S256 or plain.")
		}
		if !validVerifier(r.challenge) {
			return invalid("code_challenge must be 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_' and '~'.")
		}
	}
	switch q.Get("access_type") {
	case "", "online":
	case "offline":
		r.offline = true
	default:
		return invalid("Invalid access_type " + quote(q.Get("access_type")) + ": use online or offline.")
	}
	r.prompt = strings.Fields(q.Get("prompt"))
	for _, p := range r.prompt {
		if p != "none" && p != "consent" && p != "select_account" {
			return invalid("Invalid prompt " + quote(p) + ": use none, consent or select_account.")
		}
	}
	if slices.Contains(r.prompt, "none") && len(r.prompt) > 1 {
		return invalid("prompt=none cannot be combined with other prompt values.")
	}
	if len(r.state) > maxStateLen {
		return invalid("state is longer than " + itoa(maxStateLen) + " characters.")
	}
	return r, nil
}

// validVerifier reports whether v is a PKCE verifier or challenge:
// 43-128 characters of the unreserved set (RFC 7636 §4.1).
func validVerifier(v string) bool {
	if len(v) < minChallenge || len(v) > maxChallenge {
		return false
	}
	for _, c := range v {
		ok := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
		if !ok {
			return false
		}
	}
	return true
}

// validEmail reports whether s is a bare email address.
func validEmail(s string) bool {
	if s == "" || len(s) > maxEmailLen {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == "" && strings.Contains(s, "@")
}

// authorize serves GET /o/oauth2/auth and /o/oauth2/v2/auth.
func (s *Service) authorize(w http.ResponseWriter, r *http.Request) {
	req, aerr := parseAuthRequest(r.URL.Query())
	if aerr != nil {
		renderError(w, *aerr)
		return
	}
	if s.cfg.AutoApprove {
		user := s.cfg.DefaultUser
		if validEmail(req.loginHint) {
			user = req.loginHint
		}
		s.approve(w, r, req, user, req.scopes)
		return
	}
	if slices.Contains(req.prompt, "none") {
		// No page may be shown, and this emulator only grants through its page.
		redirectWith(w, r, req, url.Values{"error": {"interaction_required"}})
		return
	}
	s.mu.Lock()
	s.sweep()
	if len(s.consents) >= maxPending {
		s.mu.Unlock()
		renderError(w, authError{code: "temporarily_unavailable", description: "Too many sign-ins are in progress: finish some, or wait half an hour."})
		return
	}
	req.id = core.RandomID(18)
	req.expires = s.deps.Now().Add(consentTTL)
	s.consents[req.id] = &req
	s.mu.Unlock()
	renderConsent(w, http.StatusOK, consentPage{req: req, users: s.deps.Accounts.Users(), usual: s.cfg.DefaultUser})
}

// consent serves POST /o/oauth2/consent, the consent page's form.
func (s *Service) consent(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		renderError(w, authError{code: "invalid_request", description: "The consent form could not be read: go back and submit it again."})
		return
	}
	s.mu.Lock()
	s.sweep()
	req, ok := s.consents[r.PostForm.Get("request_id")]
	if ok {
		delete(s.consents, req.id)
	}
	s.mu.Unlock()
	if !ok {
		renderError(w, authError{code: "invalid_request", description: "This sign-in page has expired or was already answered: start the sign-in again from the app."})
		return
	}
	if r.PostForm.Get("action") != "approve" {
		redirectWith(w, r, *req, url.Values{"error": {"access_denied"}})
		return
	}
	user := strings.TrimSpace(r.PostForm.Get("typed_email"))
	if user == "" {
		user = r.PostForm.Get("email")
	}
	page := consentPage{req: *req, users: s.deps.Accounts.Users(), chosen: user, ticked: r.PostForm["scope"]}
	var granted []string
	for _, sc := range req.scopes {
		if slices.Contains(baseScopes, sc) || slices.Contains(r.PostForm["scope"], sc) {
			granted = append(granted, sc)
		}
	}
	switch {
	case !validEmail(user):
		page.problem = "Choose an account or type an email address such as ann@example.com."
	case len(granted) == 0:
		page.problem = "Tick at least one permission, or press Cancel."
	}
	if page.problem != "" {
		// The same page, answerable again, with what was wrong.
		s.mu.Lock()
		req.expires = s.deps.Now().Add(consentTTL)
		s.consents[req.id] = req
		s.mu.Unlock()
		renderConsent(w, http.StatusBadRequest, page)
		return
	}
	s.approve(w, r, *req, user, granted)
}

// approve issues a code for user and redirects to the client.
func (s *Service) approve(w http.ResponseWriter, r *http.Request, req authRequest, user string, scopes []string) {
	user = strings.ToLower(user)
	s.deps.Accounts.AddUser(user)
	code := "4/emu-" + core.RandomID(24)
	s.mu.Lock()
	s.sweep()
	if len(s.codes) >= maxPending {
		s.mu.Unlock()
		redirectWith(w, r, req, url.Values{"error": {"temporarily_unavailable"}})
		return
	}
	s.codes[code] = &grant{req: req, email: user, scopes: scopes, expires: s.deps.Now().Add(codeTTL)}
	if len(s.approved) == maxAuthorizations {
		s.approved = slices.Delete(s.approved, 0, 1)
	}
	s.approved = append(s.approved, Authorization{Email: user, ClientID: req.clientID,
		Asked: slices.Clone(req.scopes), Granted: slices.Clone(scopes), At: s.deps.Now()})
	s.mu.Unlock()
	redirectWith(w, r, req, url.Values{"code": {code}, "scope": {strings.Join(scopes, " ")}, "authuser": {"0"}})
}

// redirectWith sends the browser back to the client with params and the state.
func redirectWith(w http.ResponseWriter, r *http.Request, req authRequest, params url.Values) {
	u, _ := url.Parse(req.redirectURI) // validated in parseAuthRequest
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	if req.state != "" {
		q.Set("state", req.state)
	}
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.String(), http.StatusFound)
}
