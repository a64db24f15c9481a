// Package authsvc emulates Google's OAuth 2 endpoints: the authorization
// endpoint with a consent page (GET /o/oauth2/auth and /o/oauth2/v2/auth),
// the token endpoint (POST /token: authorization_code with PKCE, and
// refresh_token), userinfo (GET /oauth2/v3/userinfo) and revocation
// (POST /revoke). golang.org/x/oauth2 runs against it unchanged with
// google.Endpoints.OAuth2(). Any client id and any non-empty secret is
// accepted; redirect URIs are not registered but must be absolute and
// must match between the authorization request and the code exchange.
package authsvc

import (
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// Config tunes the emulated consent page.
type Config struct {
	// AutoApprove approves at once as the login_hint user, or DefaultUser.
	AutoApprove bool
	// DefaultUser is who auto-approval signs in when no login_hint is
	// given, and the account the consent page preselects then, if it
	// exists (the demo's user, as the demo's guide tells users to choose).
	DefaultUser string
}

// Limits of the emulated server.
const (
	// codeTTL is how long an authorization code can be exchanged.
	codeTTL = 10 * time.Minute
	// consentTTL is how long a consent page can be answered.
	consentTTL = 30 * time.Minute
	// maxPending bounds the consent pages and codes kept at once.
	maxPending = 10000
	// maxFormBody bounds a form posted to the token, revoke or consent endpoints.
	maxFormBody = 64 << 10
)

// Service is the emulated Google OAuth 2 server.
type Service struct {
	deps core.Deps
	cfg  Config

	mu       sync.Mutex
	consents map[string]*authRequest // consent pages shown, by request id
	codes    map[string]*grant       // authorization codes, by code
	approved []Authorization         // the latest maxAuthorizations, oldest first
}

// Authorization is one authorization request the user approved: what
// the client asked Google for and what the user granted, so a test can
// hold an app to the scopes it asks for.
type Authorization struct {
	Email    string    `json:"email"`
	ClientID string    `json:"client_id"`
	Asked    []string  `json:"asked"`
	Granted  []string  `json:"granted"`
	At       time.Time `json:"at"`
}

// maxAuthorizations bounds the approvals kept for Authorizations.
const maxAuthorizations = 1000

// Authorizations returns the approvals recorded, oldest first.
func (s *Service) Authorizations() []Authorization {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Authorization, len(s.approved))
	for i, a := range s.approved {
		a.Asked, a.Granted = slices.Clone(a.Asked), slices.Clone(a.Granted)
		out[i] = a
	}
	return out
}

// New returns the OAuth service.
func New(deps core.Deps, cfg Config) *Service {
	if deps.Now == nil {
		deps.Now = time.Now
	}
	return &Service{deps: deps, cfg: cfg, consents: map[string]*authRequest{}, codes: map[string]*grant{}}
}

// Register adds the OAuth routes to mux.
func (s *Service) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /o/oauth2/auth", s.authorize)
	mux.HandleFunc("GET /o/oauth2/v2/auth", s.authorize)
	mux.HandleFunc("POST /o/oauth2/consent", s.consent)
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("POST /revoke", s.revoke)
	mux.HandleFunc("GET /oauth2/v3/userinfo", s.userinfo)
	mux.HandleFunc("POST /oauth2/v3/userinfo", s.userinfo)
}

// grant is an issued authorization code and what it stands for.
type grant struct {
	req     authRequest
	email   string
	scopes  []string
	expires time.Time
	used    bool
	issued  []string // tokens minted from the code, revoked if it is replayed
}

// sweep drops expired consent pages and codes. The caller holds s.mu.
func (s *Service) sweep() {
	now := s.deps.Now()
	for id, r := range s.consents {
		if now.After(r.expires) {
			delete(s.consents, id)
		}
	}
	for c, g := range s.codes {
		if now.After(g.expires) {
			delete(s.codes, c)
		}
	}
}
