// Package pickersvc is the emulator's stand-in for Google's Picker: the
// script a page loads (/js/api.js: gapi.load and google.picker with
// Google's names and values), the dialog it opens (/picker, on the
// emulator's origin, a plain HTML form), and the grant the dialog posts
// (/picker/grant), which gives the OAuth client of the token the picked
// files with drive.file, as picking in Google's Picker does, and answers
// Google's ResponseObject ({action: "picked", docs: [...]}). Scripts and
// tests post the same form without a browser. See docs/emulator.md.
package pickersvc

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/internal/core"
)

// Config is the Google Cloud project the Picker plays: the App ID
// (setAppId, the project number) and the browser API key
// (setDeveloperKey) it accepts.
type Config struct {
	ProjectNumber string
	APIKey        string
}

// Service is the emulated Picker.
type Service struct {
	deps  core.Deps
	drive *drivesvc.Service
	cfg   Config
}

// New returns a Picker over drive's files.
func New(deps core.Deps, drive *drivesvc.Service, cfg Config) *Service {
	return &Service{deps: deps, drive: drive, cfg: cfg}
}

//go:embed api.js
var apiJS string

// Register adds the Picker's routes to mux.
func (s *Service) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /js/api.js", s.serveScript)
	mux.HandleFunc("POST /picker", s.serveDialog)
	mux.HandleFunc("POST /picker/grant", s.serveGrant)
}

// serveScript serves the loader with the emulator's origin in it, the
// one origin whose messages its Picker takes.
func (s *Service) serveScript(w http.ResponseWriter, r *http.Request) {
	origin, _ := json.Marshal(core.Origin(r))
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write([]byte(strings.Replace(apiJS, "__ORIGIN__", string(origin), 1)))
}

// Bounds of one Picker request.
const (
	maxForm  = 64 << 10
	maxPicks = 1000
)

// driveScopes are the scopes a Picker token needs one of: the Drive
// views show nothing without.
var driveScopes = []string{drivesvc.ScopeDrive, drivesvc.ScopeDriveReadonly, drivesvc.ScopeDriveFile,
	drivesvc.ScopeDriveMetadata, drivesvc.ScopeDriveMetadataRO}

// request is a dialog's or a grant's form, checked.
type request struct {
	tok      core.Token
	origin   string // where the answer may go: the page's origin, or setOrigin's
	nonce    string
	multi    bool
	maxItems int
	options  drivesvc.PickOptions
	title    string
}

// refusal is a Picker request refused: the status and what to fix.
type refusal struct {
	status  int
	message string
}

// readRequest parses and checks a Picker form as Google validates the
// builder's settings: a live token with a Drive scope, the project's API
// key and App ID. With authorize false (a cancel) only the origin counts.
func (s *Service) readRequest(w http.ResponseWriter, r *http.Request, authorize bool) (request, *refusal) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		return request{}, &refusal{http.StatusBadRequest, "The Picker's form could not be read: post it as application/x-www-form-urlencoded, under 64 KiB."}
	}
	f := r.PostForm
	req := request{nonce: f.Get("nonce"), multi: f.Get("multiselect") == "true", title: f.Get("title"),
		options: drivesvc.PickOptions{Folders: f.Get("include_folders") == "true", SharedDrives: f.Get("sdr") == "true",
			MineOnly: f.Get("mine_only") == "true"}}
	if o, ok := checkOrigin(f.Get("origin")); ok {
		req.origin = o
	} else if f.Get("origin") != "" {
		return req, &refusal{http.StatusBadRequest, "origin must be the top page's scheme and host, such as https://app.example.com (setOrigin)."}
	}
	for _, t := range strings.Split(f.Get("mime_types"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			req.options.MimeTypes = append(req.options.MimeTypes, t)
		}
	}
	if raw := f.Get("max_items"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			return req, &refusal{http.StatusBadRequest, "max_items (setMaxItems) must be a whole number of at least 1."}
		}
		req.maxItems = n
	}
	if !authorize {
		return req, nil
	}
	tok, ok := s.deps.Accounts.Lookup(f.Get("oauth_token"))
	switch {
	case !ok:
		return req, &refusal{http.StatusUnauthorized, "The OAuth token (setOAuthToken) is missing, expired or not one Google issued: get the user a new one."}
	case !tok.HasAnyScope(driveScopes...):
		return req, &refusal{http.StatusForbidden, "The OAuth token carries no Google Drive scope, so the Drive views have nothing to show: ask for drive.file."}
	case f.Get("developer_key") != s.cfg.APIKey:
		return req, &refusal{http.StatusForbidden, "The API developer key is invalid. (setDeveloperKey: the project's browser API key)"}
	case f.Get("app_id") != s.cfg.ProjectNumber:
		return req, &refusal{http.StatusForbidden, "The App ID (setAppId) is not this project's number, so the files picked would not reach the app: give the Cloud project number."}
	}
	req.tok = tok
	return req, nil
}

// checkOrigin returns o as an origin if it is one: http or https, a host,
// nothing after it.
func checkOrigin(o string) (string, bool) {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	return u.Scheme + "://" + u.Host, true
}

// serveDialog is the Picker's dialog: the user's files as a form that
// posts the choice to /picker/grant.
func (s *Service) serveDialog(w http.ResponseWriter, r *http.Request) {
	req, ref := s.readRequest(w, r, true)
	if ref != nil {
		s.writeRefusal(w, r, req, ref)
		return
	}
	files := s.drive.Pickable(req.tok.Email, req.options)
	writeDialog(w, r.PostForm, req, files)
}

// serveGrant records a pick and answers Google's ResponseObject: as JSON
// to a caller that accepts it, else as the page that hands it to the
// Picker's script.
func (s *Service) serveGrant(w http.ResponseWriter, r *http.Request) {
	cancel := r.FormValue("action") == "cancel"
	req, ref := s.readRequest(w, r, !cancel)
	if ref != nil {
		s.writeRefusal(w, r, req, ref)
		return
	}
	if cancel {
		writeResult(w, r, req, map[string]any{"action": "cancel"})
		return
	}
	docs, ref := s.grant(r, req)
	if ref != nil {
		s.writeRefusal(w, r, req, ref)
		return
	}
	writeResult(w, r, req, map[string]any{"action": "picked", "viewToken": []any{"all", nil, map[string]any{}}, "docs": docs})
}

// grant checks the ids picked against what the dialog showed and the
// builder's limits, and grants them to the token's OAuth client.
func (s *Service) grant(r *http.Request, req request) ([]map[string]any, *refusal) {
	ids := r.PostForm["id"]
	switch {
	case len(ids) == 0:
		return nil, &refusal{http.StatusBadRequest, "Pick at least one file (id), or cancel (action=cancel)."}
	case len(ids) > maxPicks:
		return nil, &refusal{http.StatusBadRequest, "At most " + strconv.Itoa(maxPicks) + " files can be picked at once."}
	case len(ids) > 1 && !req.multi:
		return nil, &refusal{http.StatusBadRequest, "Only one file can be picked: the Picker was built without Feature.MULTISELECT_ENABLED."}
	case req.maxItems > 0 && len(ids) > req.maxItems:
		return nil, &refusal{http.StatusBadRequest, "At most " + strconv.Itoa(req.maxItems) + " files can be picked (setMaxItems)."}
	}
	shown := map[string]bool{}
	for _, f := range s.drive.Pickable(req.tok.Email, req.options) {
		shown[f.ID] = true
	}
	for _, id := range ids {
		if !shown[id] {
			return nil, &refusal{http.StatusNotFound, "File not found: " + cut(id) + ". Pick one the dialog shows."}
		}
	}
	files, err := s.drive.Grant(req.tok.Email, req.tok.ClientID, ids)
	if err != nil {
		return nil, &refusal{http.StatusNotFound, "A picked file is no longer there: open the Picker again."}
	}
	s.deps.Stats.PickGranted(len(files))
	origin := core.Origin(r)
	docs := make([]map[string]any, 0, len(files))
	for _, f := range files {
		docs = append(docs, document(origin, f))
	}
	return docs, nil
}

// document is Google's DocumentObject for a picked file (the Picker's
// "results" reference; url is its webViewLink here).
func document(origin string, f drivesvc.File) map[string]any {
	typ := "document"
	switch {
	case strings.HasPrefix(f.MimeType, "image/"):
		typ = "photo"
	case strings.HasPrefix(f.MimeType, "video/"):
		typ = "video"
	}
	d := map[string]any{
		"id": f.ID, "serviceId": "docs", "mimeType": f.MimeType, "name": f.Name, "description": "",
		"type": typ, "lastEditedUtc": f.Modified.UnixMilli(),
		"iconUrl":     "https://drive-thirdparty.googleusercontent.com/16/type/" + f.MimeType,
		"url":         drivesvc.WebViewLink(origin, f),
		"embedUrl":    drivesvc.WebViewLink(origin, f),
		"isShared":    len(f.Permissions) > 1 || f.DriveID != "",
		"resourceKey": f.ResourceKey, "isNew": false, "driveSuccess": true,
	}
	if len(f.Parents) > 0 {
		d["parentId"] = f.Parents[0]
	}
	if f.Kind == drivesvc.KindBinary {
		d["sizeBytes"] = f.Size
	}
	return d
}

// wantsJSON reports whether the caller asked for JSON rather than a page.
func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

// cut shortens a client value for a message.
func cut(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
