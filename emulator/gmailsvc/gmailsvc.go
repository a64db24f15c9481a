// Package gmailsvc emulates Gmail v1 and renders the outbox page.
package gmailsvc

import (
	"net/http"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// Service is the emulated Gmail.
type Service struct {
	deps core.Deps
}

// New returns an empty Gmail.
func New(deps core.Deps) *Service { return &Service{deps: deps} }

// Register adds Gmail's routes (and the outbox page) to mux.
func (s *Service) Register(mux *http.ServeMux) {}
