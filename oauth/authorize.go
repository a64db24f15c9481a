package oauth

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"golang.org/x/oauth2"

	"github.com/drivemail/drivemail/oauth/cimd"
	"github.com/drivemail/drivemail/store"
)

// Authorization request bounds.
const (
	maxStateLen       = 1024
	maxConsentFormLen = 8 << 10
)

// authorizeParams are the authorization request parameters drivemail
// reads; prompt, audience and any others are ignored.
var authorizeParams = []string{"client_id", "redirect_uri", "state", "response_type", "code_challenge", "code_challenge_method", "resource", "scope"}

// s256Challenge is the shape of a BASE64URL(SHA-256) PKCE challenge.
var s256Challenge = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// authorize validates an authorization request and shows the consent page.
// Every error is a page: before the client and its redirect URI are known
// (RFC 6749 §4.1.2.1), and after, because the user has not yet seen the
// consent page (RFC 9700 §4.11.2).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if !s.underLimit(w, r, "authorize", s.cfg.AuthorizeLimit) {
		return
	}
	q := r.URL.Query()
	// RFC 6749 §3.1 forbids repeating a parameter; only the ones read
	// here are checked, so an extension parameter sent twice (several
	// audience values, say) is ignored like any other unknown one.
	for _, k := range authorizeParams {
		if len(q[k]) > 1 {
			s.errorPage(w, r, http.StatusBadRequest, "The authorization request repeats the parameter "+k+".", "Start connecting again from your application.")
			return
		}
	}
	clientID := q.Get("client_id")
	if clientID == "" {
		s.errorPage(w, r, http.StatusBadRequest, "The authorization request has no client_id.", "Start connecting again from your application.")
		return
	}
	c, err := s.lookupClient(ctx, clientID, nil) // the authorization limit counts these
	if err != nil {
		s.clientErrorPage(w, r, err)
		return
	}
	redirectURI := q.Get("redirect_uri")
	if redirectURI == "" {
		s.errorPage(w, r, http.StatusBadRequest, "The authorization request has no redirect_uri.", "Your application must say where to return; update or reconnect it.")
		return
	}
	if _, ok := matchRedirectURI(c.RedirectURIs, redirectURI); !ok {
		s.errorPage(w, r, http.StatusBadRequest, "The return address "+clip(redirectURI)+" is not one this application registered, so drivemail will not send it there.",
			"Remove the connector and add it again so it registers its current address.")
		return
	}

	// The redirect URI is the client's, but the client may be anyone's:
	// registration is open. Until the user has seen this client's consent
	// page, nothing goes to that URI, or drivemail's origin would bounce a
	// browser to any address a stranger registered, with a request made
	// to fail on purpose (RFC 9700 §4.11.2). Errors are a page that names
	// the client and where it asked to go; only Deny, on the consent page,
	// goes back to the client (consent).
	fail := func(message string) {
		s.requestErrorPage(w, r, http.StatusBadRequest, c, redirectURI, message,
			"The application sent a request drivemail does not accept, so it stopped here. This is for the application's developer to fix.")
	}
	state := q.Get("state")
	switch {
	case len(state) > maxStateLen:
		fail("The request's state is longer than 1024 characters.")
		return
	case q.Get("response_type") != "code":
		fail("The request asks for a response_type other than code; drivemail offers only the authorization code flow (response_type=code).")
		return
	case q.Get("code_challenge") == "" && q.Get("code_challenge_method") == "":
		fail("The request has no PKCE challenge: drivemail needs code_challenge and code_challenge_method=S256.")
		return
	case q.Get("code_challenge_method") != "S256":
		fail("The request's PKCE method is not S256 (plain is not accepted): drivemail needs code_challenge_method=S256.")
		return
	case !s256Challenge.MatchString(q.Get("code_challenge")):
		fail("The request's code_challenge is not the 43-character base64url SHA-256 of a code verifier.")
		return
	}
	// resource is optional (RFC 8707 §2: without it the server picks its
	// default), and this server has one resource to pick.
	if res := q.Get("resource"); res != "" {
		if _, ok := s.resourceFor(res); !ok {
			// The value stays off the page: drivemail's origin must not
			// show a stranger's words.
			fail("The request names another resource; this server issues tokens only for " + s.resource + ".")
			return
		}
	}

	id, csrf := newSecret(""), newSecret("")
	browser := s.bindBrowser(w, r)
	err = s.cfg.Store.CreateAuthRequest(ctx, id, store.AuthRequest{
		ClientID:      c.ID,
		RedirectURI:   redirectURI,
		ClientState:   state,
		CodeChallenge: q.Get("code_challenge"),
		Resource:      s.resource,
		Scope:         Scope, // whatever was asked: see Scope
		BrowserHash:   store.Hash(browser),
		CSRFHash:      store.Hash(csrf),
		ExpiresAt:     s.now().Add(s.cfg.AuthRequestTTL),
	})
	if err != nil {
		s.logger.ErrorContext(ctx, "store authorization request", "err", err)
		s.requestErrorPage(w, r, http.StatusInternalServerError, c, redirectURI, "drivemail could not start this authorization.", "Try again in a moment.")
		return
	}
	s.consentPage(w, r, c, redirectURI, id, csrf)
}

// underLimit counts an authorization request against the caller's hourly
// allowance; past it, it shows a page and returns false.
func (s *Server) underLimit(w http.ResponseWriter, r *http.Request, what string, limit int) bool {
	n, err := s.cfg.Store.Hit(r.Context(), limitKey(what, s.cfg.ClientIP(r)), time.Hour)
	if err != nil {
		s.logger.ErrorContext(r.Context(), "rate limit", "err", err)
		s.errorPage(w, r, http.StatusServiceUnavailable, "drivemail cannot start an authorization right now.", "Try again in a moment.")
		return false
	}
	if n > int64(limit) {
		w.Header().Set("Retry-After", "3600")
		s.errorPage(w, r, http.StatusTooManyRequests, fmt.Sprintf("Too many authorization attempts from this address (at most %d an hour).", limit), "Wait an hour, then connect again.")
		return false
	}
	return true
}

// clientErrorPage explains why a client_id is not usable.
func (s *Server) clientErrorPage(w http.ResponseWriter, r *http.Request, err error) {
	var refusal *cimd.Error
	var meta *metadataError
	switch {
	case errors.Is(err, errUnknownClient):
		s.errorPage(w, r, http.StatusBadRequest, "This application is not registered with drivemail (unknown client_id).",
			"Remove the connector and add it again so it registers anew.")
	case errors.As(err, &refusal) && refusal.Server():
		s.errorPage(w, r, http.StatusServiceUnavailable, "drivemail could not fetch the application's client metadata document just now: "+err.Error()+".",
			"Try again in a minute. Nothing is wrong with the application or your account.")
	case errors.As(err, &refusal), errors.As(err, &meta):
		s.errorPage(w, r, http.StatusBadRequest, "The application's client metadata document cannot be used: "+err.Error()+".",
			"This is for the application's publisher to fix, not drivemail or your account: try again later, and if it persists tell the publisher.")
	default:
		s.logger.ErrorContext(r.Context(), "look up client", "err", err)
		s.errorPage(w, r, http.StatusInternalServerError, "drivemail could not look up the application.", "Try again in a moment.")
	}
}

// consent handles the consent form: approve goes on to Google, deny goes
// back to the client with access_denied.
func (s *Server) consent(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if origin := r.Header.Get("Origin"); origin != "" && origin != s.base {
		s.errorPage(w, r, http.StatusForbidden, "The consent form was submitted from another site.", "Open the authorization link again and answer on drivemail's own page.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxConsentFormLen)
	if err := r.ParseForm(); err != nil {
		s.errorPage(w, r, http.StatusBadRequest, "The consent form could not be read.", "Open the authorization link again.")
		return
	}
	id := r.PostForm.Get("request")
	req, err := s.cfg.Store.GetAuthRequest(ctx, id)
	if errors.Is(err, store.ErrNotFound) || id == "" {
		s.errorPage(w, r, http.StatusBadRequest, "This consent page has expired or was already answered.", "Start connecting again from your application.")
		return
	}
	if err != nil {
		s.logger.ErrorContext(ctx, "load authorization request", "err", err)
		s.errorPage(w, r, http.StatusInternalServerError, "drivemail could not load this authorization.", "Try again in a moment.")
		return
	}
	if !s.sameBrowser(r, req.BrowserHash) {
		s.errorPage(w, r, http.StatusForbidden, "This consent page was opened in a different browser, or the browser did not keep drivemail's cookie.",
			"Open the authorization link again in this browser, with cookies allowed for this site.")
		return
	}
	if !hashEqual(store.Hash(r.PostForm.Get("csrf")), req.CSRFHash) {
		s.errorPage(w, r, http.StatusForbidden, "The consent form's security token does not match.", "Open the authorization link again.")
		return
	}
	switch r.PostForm.Get("decision") {
	case "deny":
		if err := s.cfg.Store.DeleteAuthRequest(ctx, id); err != nil {
			s.logger.ErrorContext(ctx, "delete authorization request", "err", err)
		}
		s.redirectError(w, r, req.RedirectURI, req.ClientState, "access_denied", "The user denied access.")
	case "approve":
		state, verifier := newSecret(""), oauth2.GenerateVerifier()
		err := s.cfg.Store.ApproveAuthRequest(ctx, id, state, verifier)
		if errors.Is(err, store.ErrUsed) || errors.Is(err, store.ErrNotFound) {
			s.errorPage(w, r, http.StatusBadRequest, "This consent page was already answered.", "Start connecting again from your application.")
			return
		}
		if err != nil {
			s.logger.ErrorContext(ctx, "approve authorization request", "err", err)
			s.errorPage(w, r, http.StatusInternalServerError, "drivemail could not record your consent.", "Try again in a moment.")
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		http.Redirect(w, r, s.cfg.Google.AuthCodeURL(state, verifier), http.StatusSeeOther)
	default:
		s.errorPage(w, r, http.StatusBadRequest, "The consent form had no decision.", "Choose Approve or Deny.")
	}
}

// cookieName is the browser-binding cookie. On https it carries the
// __Host- prefix (Secure, host-only, Path=/); a plain-http loopback base
// (demo, tests) cannot hold a Secure cookie in every browser, so it goes
// without the prefix there.
func (s *Server) cookieName() string {
	if s.secure {
		return "__Host-drivemail-consent"
	}
	return "drivemail-consent"
}

// bindBrowser returns this browser's binding secret, creating it if needed.
func (s *Server) bindBrowser(w http.ResponseWriter, r *http.Request) string {
	v := ""
	if c, err := r.Cookie(s.cookieName()); err == nil && validSecret(c.Value) {
		v = c.Value
	} else {
		v = newSecret("")
	}
	http.SetCookie(w, &http.Cookie{
		Name:     s.cookieName(),
		Value:    v,
		Path:     "/",
		MaxAge:   int(s.cfg.AuthRequestTTL.Seconds()) + 3600,
		HttpOnly: true,
		Secure:   s.secure,
		SameSite: http.SameSiteLaxMode,
	})
	return v
}

// sameBrowser reports whether r carries the cookie hashed in want.
func (s *Server) sameBrowser(r *http.Request, want string) bool {
	c, err := r.Cookie(s.cookieName())
	return err == nil && hashEqual(store.Hash(c.Value), want)
}

var secretShape = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

func validSecret(v string) bool { return secretShape.MatchString(v) }

func hashEqual(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// formActionSource is the Content-Security-Policy source (CSP3
// host-source or scheme-source) that lets the consent form's redirect
// reach redirectURI, rebuilt from its parsed parts so that nothing in the
// URI can add a directive or a wildcard: "" when the URI cannot be named
// safely, and the form then cannot redirect there in browsers that check.
func formActionSource(redirectURI string) string {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return ""
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		if checkPrivateUseURI(redirectURI, u) != nil {
			return ""
		}
		return u.Scheme + ":"
	}
	if checkHost(redirectURI, u) != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
