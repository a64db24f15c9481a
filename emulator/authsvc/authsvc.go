// Package authsvc emulates Google's OAuth 2 endpoints: consent, token,
// userinfo and revoke.
package authsvc

import (
	"net/http"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// Config tunes the emulated consent page.
type Config struct {
	// AutoApprove approves at once as the login_hint user, or DefaultUser.
	AutoApprove bool
	// DefaultUser is who auto-approval signs in when no login_hint is given.
	DefaultUser string
}

// Service is the emulated Google OAuth 2 server.
type Service struct {
	deps core.Deps
	cfg  Config
}

// New returns the OAuth service.
func New(deps core.Deps, cfg Config) *Service { return &Service{deps: deps, cfg: cfg} }

// Register adds the OAuth routes to mux.
func (s *Service) Register(mux *http.ServeMux) {}
