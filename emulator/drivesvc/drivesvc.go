// Package drivesvc emulates Google Drive v3 and Sheets v4.
package drivesvc

import (
	"net/http"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// Service is the emulated Drive and Sheets.
type Service struct {
	deps core.Deps
}

// New returns an empty Drive.
func New(deps core.Deps) *Service { return &Service{deps: deps} }

// Register adds Drive's and Sheets' routes to mux.
func (s *Service) Register(mux *http.ServeMux) {}

// SeedDir preloads every user folder under dir.
func (s *Service) SeedDir(dir string) error { return nil }
