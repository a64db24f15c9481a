// Package drivesvc emulates Google Drive v3 and Sheets v4: per-user files
// behind bearer tokens, shared drives, link sharing with resource keys,
// shortcuts, native Docs, Sheets, Slides and Drawings with exports, and
// media uploads through the shared media package. The real
// google.golang.org/api drive/v3 and sheets/v4 clients drive it unchanged
// but for the endpoint. See docs/emulator.md for what it covers.
package drivesvc

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/emulator/internal/media"
)

// Service is the emulated Drive and Sheets.
type Service struct {
	deps  core.Deps
	media *media.Server

	mu     sync.RWMutex
	files  map[string]*file
	drives map[string]*sharedDrive
	roots  map[string]string // user email → My Drive folder id
	// reserved are the ids files.generateIds gave out and no file took yet.
	reserved reservations
	// ops are files.download's operations; links the export links'
	// one-time content URLs.
	ops   *operations
	links linkTickets
}

// New returns an empty Drive.
func New(deps core.Deps) *Service {
	return &Service{
		deps:   deps,
		media:  media.New(deps, media.Options{}),
		files:  map[string]*file{},
		drives: map[string]*sharedDrive{},
		roots:  map[string]string{},

		reserved: newReservations(),
		ops:      newOperations(),
	}
}

// Register adds Drive's and Sheets' routes to mux, with the export-link
// and web-link paths Drive's metadata points at, and the /_emulator/
// routes that seed and inspect files.
func (s *Service) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /drive/v3/files", s.handleList)
	mux.HandleFunc("POST /drive/v3/files", s.handleCreate)
	mux.HandleFunc("GET /drive/v3/files/generateIds", s.handleGenerateIDs)
	mux.HandleFunc("GET /drive/v3/files/{fileId}", s.handleGet)
	mux.HandleFunc("PATCH /drive/v3/files/{fileId}", s.handleUpdate)
	mux.HandleFunc("DELETE /drive/v3/files/{fileId}", s.handleDelete)
	mux.HandleFunc("GET /drive/v3/files/{fileId}/export", s.handleExport)
	mux.HandleFunc("POST /drive/v3/files/{fileId}/download", s.handleDownload)
	mux.HandleFunc("GET /drive/v3/files/{fileId}/permissions", s.handlePermissionsList)
	mux.HandleFunc("POST /drive/v3/files/{fileId}/permissions", s.handlePermissionCreate)
	mux.HandleFunc("GET /drive/v3/files/{fileId}/permissions/{permissionId}", s.handlePermissionGet)
	mux.HandleFunc("GET /drive/v3/operations/{name}", s.handleOperationGet)
	mux.HandleFunc("GET /drive/v3/about", s.handleAbout)
	mux.HandleFunc("GET /drive/v3/drives", s.handleDrivesList)
	mux.HandleFunc("GET /drive/v3/drives/{driveId}", s.handleDriveGet)

	// The discovery document names both upload paths: "simple" (which the
	// Go client uses for every protocol) and "resumable".
	upload := s.media.Handler(s.uploadEndpoint())
	for _, prefix := range []string{"/upload", "/resumable/upload"} {
		for _, m := range []string{"POST", "PUT", "DELETE"} {
			mux.Handle(m+" "+prefix+"/drive/v3/files", upload)
		}
	}

	for _, l := range exportLinkRoutes {
		mux.HandleFunc("GET "+l.path, s.exportLinkHandler(l.kind))
	}
	// The content host's paths (see core.ContentOrigin) and the sign-in
	// page the web paths send strangers to.
	mux.HandleFunc("GET /download", s.handleDownloadContent)
	mux.HandleFunc("GET /export/{ticket}", s.handleLinkContent)
	mux.HandleFunc("GET "+core.SignInPath, handleSignIn)
	s.registerWebLinks(mux)
	s.registerSheets(mux)
	s.registerControls(mux)
}

// authorize authenticates r like Google's APIs, checks that the token
// carries one of scopes, and describes the caller. broader lists the
// scopes that lift a drive.file token's restriction for this API. On
// refusal the response is written and ok is false.
func (s *Service) authorize(w http.ResponseWriter, r *http.Request, scopes, broader []string) (caller, bool) {
	tok, ok := s.deps.Accounts.Authenticate(w, r)
	if !ok {
		return caller{}, false
	}
	if !core.RequireScopeFor(w, r, tok, scopes...) {
		return caller{}, false
	}
	s.ensureRoot(tok.Email)
	return newCaller(tok, r.URL.Query(), r.Header, broader), true
}

// ensureRoot gives email a My Drive folder if it has none yet.
func (s *Service) ensureRoot(email string) string {
	email = strings.ToLower(email)
	s.mu.RLock()
	id, ok := s.roots[email]
	s.mu.RUnlock()
	if ok {
		return id
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ensureRootLocked(email)
}

// ensureRootLocked is ensureRoot for a caller holding s.mu for writing.
func (s *Service) ensureRootLocked(email string) string {
	if id, ok := s.roots[email]; ok {
		return id
	}
	now := s.now()
	f := &file{
		id: newDriveID(), name: "My Drive", mimeType: MimeFolder, kind: KindFolder,
		owner: email, created: now, modified: now, isRoot: true, version: 1,
	}
	s.files[f.id] = f
	s.roots[email] = f.id
	s.deps.Accounts.AddUser(email)
	return f.id
}

// now is the emulator clock, cut to the millisecond as Drive's timestamps are.
func (s *Service) now() time.Time {
	return s.deps.Now().UTC().Truncate(time.Millisecond)
}
