// Package emulator is a local stand-in for the Google endpoints drivemail
// uses (Drive v3, Sheets v4, Gmail v1, OAuth 2), faithful enough that the
// real google.golang.org/api clients and golang.org/x/oauth2 run against it
// unchanged but for the endpoint. Tests and `serve --demo` use it in
// process; `drivemail emulator` serves it on its own.
package emulator

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/drivemail/drivemail/emulator/authsvc"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/gmailsvc"
	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/emulator/internal/wan"
	"github.com/drivemail/drivemail/emulator/pickersvc"
)

// DemoUser is the user the demo seed belongs to and whom --auto-approve
// signs in when no login_hint is given.
const DemoUser = "demo@example.com"

// The Google Cloud project the emulator plays unless told otherwise: the
// Picker takes this App ID (setAppId, the project number) and browser
// API key (setDeveloperKey).
const (
	DemoProjectNumber = "123456789012"
	DemoAPIKey        = "AIzaSyEmulatorPickerDemoKey000000000000"
)

// Config tunes an emulator.
type Config struct {
	// AccessTTL is the lifetime of access tokens (default one hour).
	AccessTTL time.Duration
	// AutoApprove makes the consent page approve at once.
	AutoApprove bool
	// DataDir keeps file content; empty uses a temporary directory removed on Close.
	DataDir string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// WAN is the network profile (default loopback: nothing added).
	WAN WANProfile
	// ProjectNumber and APIKey are the Picker's App ID and browser API
	// key (default DemoProjectNumber and DemoAPIKey).
	ProjectNumber string
	APIKey        string
}

// WANProfile is a network profile: latency, time to first byte and
// bandwidth per API (see docs/emulator.md and /_emulator/wan).
type WANProfile = wan.Profile

// ParseWAN reads a WAN spec such as "google" or
// "google,drive.ttfb=1s,gmail.up=8MiB/s" (overrides alone apply to loopback).
func ParseWAN(spec string) (WANProfile, error) { return wan.Parse(spec, wan.Loopback()) }

// Stats is the JSON of GET /_emulator/stats.
type Stats = core.StatsSnapshot

// Authorization is one approved authorization request: who, which
// client, the scopes asked for and those granted (GET
// /_emulator/authorizations).
type Authorization = authsvc.Authorization

// Fault is an injected failure (see POST /_emulator/faults).
type Fault = core.Fault

// Emulator is one emulated Google, with every user's data in memory and
// file content on disk.
type Emulator struct {
	deps   core.Deps
	faults *core.Faults
	apis   *core.Switches
	drive  *drivesvc.Service
	gmail  *gmailsvc.Service
	auth   *authsvc.Service
	picker *pickersvc.Service
	wan    *wan.Shaper
	cfg    Config
}

// New returns an emulator with no users.
func New(cfg Config) (*Emulator, error) {
	if cfg.AccessTTL <= 0 {
		cfg.AccessTTL = time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ProjectNumber == "" {
		cfg.ProjectNumber = DemoProjectNumber
	}
	if cfg.APIKey == "" {
		cfg.APIKey = DemoAPIKey
	}
	if err := checkProject(cfg.ProjectNumber, cfg.APIKey); err != nil {
		return nil, err
	}
	blobs, err := core.NewBlobs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("emulator: %w", err)
	}
	deps := core.Deps{
		Accounts: core.NewAccounts(cfg.AccessTTL, cfg.Now),
		Blobs:    blobs,
		Stats:    core.NewStats(),
		Now:      cfg.Now,
		Uploads:  &core.EndedUploads{},
	}
	faults := &core.Faults{Uploads: deps.Uploads, Project: func(r *http.Request) string {
		tok, _ := deps.Accounts.Lookup(core.BearerToken(r))
		return core.ProjectNumber(tok.ClientID)
	}}
	drive := drivesvc.New(deps)
	return &Emulator{
		deps:   deps,
		faults: faults,
		apis:   &core.Switches{},
		drive:  drive,
		gmail:  gmailsvc.New(deps),
		auth:   authsvc.New(deps, authsvc.Config{AutoApprove: cfg.AutoApprove, DefaultUser: DemoUser}),
		picker: pickersvc.New(deps, drive, pickersvc.Config{ProjectNumber: cfg.ProjectNumber, APIKey: cfg.APIKey}),
		wan:    wan.New(cfg.WAN),
		cfg:    cfg,
	}, nil
}

// checkProject refuses a project number that is not one (digits, as
// Google's) and an API key that could not be one.
func checkProject(number, key string) error {
	if len(number) > 20 || strings.Trim(number, "0123456789") != "" {
		return fmt.Errorf("emulator: project number %q: want the Cloud project's number, digits only", number)
	}
	if len(key) > 100 || strings.IndexFunc(key, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
		return fmt.Errorf("emulator: API key: want at most 100 printable characters, no spaces")
	}
	return nil
}

// Close releases the emulator's temporary storage.
func (e *Emulator) Close() error { return e.deps.Blobs.Close() }

// Handler serves every emulated Google path and the /_emulator/ controls.
func (e *Emulator) Handler() http.Handler {
	mux := http.NewServeMux()
	e.drive.Register(mux)
	e.gmail.Register(mux)
	e.auth.Register(mux)
	e.picker.Register(mux)
	e.registerControls(mux)
	e.wan.Register(mux)
	return e.wan.Middleware(e.faults.Middleware(e.apis.Middleware(e.deps.Accounts, e.countRequests(mux))))
}

// countRequests records each request under the route pattern that served
// it. An unrouted request counts under its method when that is a standard
// one: any token is a method, and each must not make a counter.
func (e *Emulator) countRequests(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := mux.Handler(r)
		if pattern == "" {
			method := r.Method
			if !slices.Contains(standardMethods, method) {
				method = "OTHER"
			}
			pattern = method + " (unrouted)"
		}
		e.deps.Stats.Request(pattern)
		mux.ServeHTTP(w, r)
	})
}

var standardMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions}

// ProjectNumber is the App ID the Picker takes (setAppId).
func (e *Emulator) ProjectNumber() string { return e.cfg.ProjectNumber }

// APIKey is the browser API key the Picker takes (setDeveloperKey).
func (e *Emulator) APIKey() string { return e.cfg.APIKey }

// Drive is the emulated Drive, for tests that seed files directly.
func (e *Emulator) Drive() *drivesvc.Service { return e.drive }

// Gmail is the emulated Gmail, for tests that read the outbox directly.
func (e *Emulator) Gmail() *gmailsvc.Service { return e.gmail }

// AddUser registers a Google account.
func (e *Emulator) AddUser(email string) { e.deps.Accounts.AddUser(email) }

// AccessToken mints a Google access token for email with the given scopes,
// as if the user had consented; tests use it to skip the browser.
func (e *Emulator) AccessToken(email string, scopes ...string) string {
	return e.deps.Accounts.IssueAccess(email, "emulator-test", scopes)
}

// AccessTokenFor is AccessToken for a given OAuth client: Drive's
// drive.file scope reaches only the files of the token's client.
func (e *Emulator) AccessTokenFor(email, clientID string, scopes ...string) string {
	return e.deps.Accounts.IssueAccess(email, clientID, scopes)
}

// RefreshToken mints a Google refresh token for email and clientID.
func (e *Emulator) RefreshToken(email, clientID string, scopes ...string) string {
	return e.deps.Accounts.IssueRefresh(email, clientID, scopes)
}

// RemoveAccess revokes every token of email, as the user removing the app
// at myaccount.google.com/permissions would: refreshes then answer
// invalid_grant. It returns how many tokens went.
func (e *Emulator) RemoveAccess(email string) int { return e.deps.Accounts.RevokeAll(email) }

// ExpireAccessTokens makes every access token of email expire now.
func (e *Emulator) ExpireAccessTokens(email string) { e.deps.Accounts.ExpireAccess(email) }

// Stats returns the counters.
func (e *Emulator) Stats() Stats { return e.deps.Stats.Snapshot() }

// Authorizations returns the authorization requests users approved,
// oldest first (the latest 1000).
func (e *Emulator) Authorizations() []Authorization { return e.auth.Authorizations() }

// ResetStats zeroes the counters.
func (e *Emulator) ResetStats() { e.deps.Stats.Reset() }

// SetWAN puts a network profile in force for requests that arrive next.
func (e *Emulator) SetWAN(p WANProfile) { e.wan.Set(p) }

// WAN returns the network profile in force.
func (e *Emulator) WAN() WANProfile { return e.wan.Profile() }

// InjectFault queues a failure rule.
func (e *Emulator) InjectFault(f Fault) error { return e.faults.Add(f) }

// SetAPIEnabled turns one API ("drive", "gmail" or "sheets") on or off:
// while off, every call to it with a valid token answers Google's 403
// SERVICE_DISABLED ("… API has not been used in project … before or it
// is disabled"), as for a Google Cloud project that never enabled it.
func (e *Emulator) SetAPIEnabled(api string, enabled bool) error { return e.apis.Set(api, enabled) }

// registerControls adds the /_emulator/ routes tests and the demo use.
func (e *Emulator) registerControls(mux *http.ServeMux) {
	mux.HandleFunc("GET /_emulator/stats", func(w http.ResponseWriter, r *http.Request) {
		core.WriteJSON(w, http.StatusOK, e.Stats())
	})
	mux.HandleFunc("DELETE /_emulator/stats", func(w http.ResponseWriter, r *http.Request) {
		e.ResetStats()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /_emulator/authorizations", func(w http.ResponseWriter, r *http.Request) {
		core.WriteJSON(w, http.StatusOK, map[string]any{"authorizations": e.Authorizations()})
	})
	mux.HandleFunc("GET /_emulator/faults", func(w http.ResponseWriter, r *http.Request) {
		core.WriteJSON(w, http.StatusOK, e.faults.Pending())
	})
	mux.HandleFunc("POST /_emulator/faults", func(w http.ResponseWriter, r *http.Request) {
		var f Fault
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			core.WriteError(w, http.StatusBadRequest, "badRequest", "fault: "+err.Error())
			return
		}
		if err := e.faults.Add(f); err != nil {
			core.WriteError(w, http.StatusBadRequest, "badRequest", "fault: "+err.Error())
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("DELETE /_emulator/faults", func(w http.ResponseWriter, r *http.Request) {
		e.faults.Clear()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /_emulator/apis", func(w http.ResponseWriter, r *http.Request) {
		core.WriteJSON(w, http.StatusOK, e.apis.State())
	})
	mux.HandleFunc("PUT /_emulator/apis/{api}", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Enabled *bool `json:"enabled"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<10)).Decode(&body); err != nil || body.Enabled == nil {
			core.WriteError(w, http.StatusBadRequest, "badRequest", `Send {"enabled": false} to turn the API off, {"enabled": true} to turn it back on.`)
			return
		}
		if err := e.apis.Set(r.PathValue("api"), *body.Enabled); err != nil {
			core.WriteError(w, http.StatusNotFound, "notFound", err.Error()+".")
			return
		}
		core.WriteJSON(w, http.StatusOK, e.apis.State())
	})
	mux.HandleFunc("POST /_emulator/users", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Email  string   `json:"email"`
			Scopes []string `json:"scopes"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&body); err != nil || body.Email == "" {
			core.WriteError(w, http.StatusBadRequest, "badRequest", `want {"email": "...", "scopes": [...]}`)
			return
		}
		e.AddUser(body.Email)
		resp := map[string]string{"email": body.Email}
		if len(body.Scopes) > 0 {
			resp["access_token"] = e.AccessToken(body.Email, body.Scopes...)
		}
		core.WriteJSON(w, http.StatusOK, resp)
	})
}

// Seed preloads files from dir: one sub-folder per user email (see
// docs/emulator.md for the conventions for native files), whose _mail
// folder holds mail from other senders (.eml) for the user's inbox.
func (e *Emulator) Seed(dir string) error {
	if err := e.drive.SeedDir(dir); err != nil {
		return err
	}
	return e.gmail.SeedFS(os.DirFS(dir))
}

// SeedFS is Seed from a file system, such as the embedded demo seed
// (emulator/demoseed).
func (e *Emulator) SeedFS(fsys fs.FS) error {
	if err := e.drive.SeedFS(fsys); err != nil {
		return err
	}
	return e.gmail.SeedFS(fsys)
}
