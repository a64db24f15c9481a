package drivesvc

import (
	"html"
	"net/http"
	"sort"
	"strconv"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// importFormats are the conversions files.create performs.
var importFormats = map[string][]string{
	"text/plain":                {MimeDoc, MimeSlides},
	"text/html":                 {MimeDoc},
	"text/markdown":             {MimeDoc},
	"text/csv":                  {MimeSheet},
	"text/tab-separated-values": {MimeSheet},
}

var aboutFieldNames = setOf("kind", "user", "storageQuota", "exportFormats", "importFormats", "maxImportSizes",
	"maxUploadSize", "appInstalled", "canCreateDrives", "canCreateTeamDrives", "folderColorPalette",
	"driveThemes", "teamDriveThemes")

// handleAbout serves about.get, which (as at Google) requires `fields`.
func (s *Service) handleAbout(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authorize(w, r, scopesReadMeta, driveBroaderScopes)
	if !ok {
		return
	}
	raw := r.URL.Query().Get("fields")
	if raw == "" {
		(&apiError{http.StatusBadRequest, "required", "The 'fields' parameter is required for this method.", "fields"}).write(w)
		return
	}
	m, aerr := fieldsParam(raw, nil, aboutFieldNames, nil)
	if aerr != nil {
		aerr.write(w)
		return
	}
	exports := map[string][]string{}
	for k, list := range exportFormats {
		for _, ef := range list {
			exports[k.mimeOf()] = append(exports[k.mimeOf()], ef.mime)
		}
	}
	var usage int64
	s.mu.RLock()
	for _, f := range s.files {
		if f.owner == c.email && f.kind == KindBinary {
			usage += f.blob.Size
		}
	}
	s.mu.RUnlock()
	const limit = 15 << 30
	maxImport := map[string]string{}
	for _, k := range []Kind{KindDoc, KindSheet, KindSlides, KindDrawing} {
		maxImport[k.mimeOf()] = strconv.Itoa(10 << 20)
	}
	about := map[string]any{
		"kind": "drive#about",
		"user": userResource(c.email, c.email),
		"storageQuota": map[string]any{
			"limit": strconv.FormatInt(limit, 10), "usage": strconv.FormatInt(usage, 10),
			"usageInDrive": strconv.FormatInt(usage, 10), "usageInDriveTrash": "0",
		},
		"exportFormats":       exports,
		"importFormats":       importFormats,
		"maxImportSizes":      maxImport,
		"maxUploadSize":       strconv.FormatInt(5<<40, 10),
		"appInstalled":        false,
		"canCreateDrives":     true,
		"canCreateTeamDrives": true,
		"folderColorPalette":  []string{"#ac725e", "#4986e7", "#16a765"},
	}
	core.WriteJSON(w, http.StatusOK, m.Apply(about))
}

func driveResource(d *sharedDrive) map[string]any {
	return map[string]any{
		"kind": "drive#drive", "id": d.id, "name": d.name, "createdTime": fmtTime(d.created), "hidden": false,
		"capabilities": map[string]any{"canListChildren": true, "canDownload": true, "canAddChildren": true},
	}
}

var driveFieldNames = setOf("kind", "id", "name", "createdTime", "hidden", "capabilities", "colorRgb",
	"backgroundImageFile", "backgroundImageLink", "orgUnitId", "restrictions", "themeId")

// handleDrivesList serves drives.list: the shared drives the caller is a member of.
func (s *Service) handleDrivesList(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authorize(w, r, scopesReadMeta, driveBroaderScopes)
	if !ok {
		return
	}
	m, aerr := fieldsParam(r.URL.Query().Get("fields"), nil, setOf("kind", "nextPageToken", "drives"),
		map[string]map[string]bool{"drives": driveFieldNames})
	if aerr != nil {
		aerr.write(w)
		return
	}
	s.mu.RLock()
	list := []map[string]any{}
	for _, d := range s.drives {
		if d.members[c.email] {
			list = append(list, driveResource(d))
		}
	}
	s.mu.RUnlock()
	sort.Slice(list, func(i, j int) bool { return list[i]["name"].(string) < list[j]["name"].(string) })
	core.WriteJSON(w, http.StatusOK, m.Apply(map[string]any{"kind": "drive#driveList", "drives": list}))
}

// handleDriveGet serves drives.get; non-members get the same 404 as a missing id.
func (s *Service) handleDriveGet(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authorize(w, r, scopesReadMeta, driveBroaderScopes)
	if !ok {
		return
	}
	m, aerr := fieldsParam(r.URL.Query().Get("fields"), nil, driveFieldNames, nil)
	if aerr != nil {
		aerr.write(w)
		return
	}
	id := r.PathValue("driveId")
	s.mu.RLock()
	d := s.drives[id]
	var res map[string]any
	if d != nil && d.members[c.email] {
		res = driveResource(d)
	}
	s.mu.RUnlock()
	if res == nil {
		errDriveNotFound(id).write(w)
		return
	}
	core.WriteJSON(w, http.StatusOK, m.Apply(res))
}

// registerWebLinks serves placeholder pages at the paths webViewLink uses,
// so a link in a sent message opens something on the emulator. They show
// no file content: a browser has no bearer token.
func (s *Service) registerWebLinks(mux *http.ServeMux) {
	for _, p := range []string{"/document/d/{id}/edit", "/spreadsheets/d/{id}/edit", "/presentation/d/{id}/edit",
		"/drawings/d/{id}/edit", "/file/d/{id}/view", "/drive/folders/{id}"} {
		mux.HandleFunc("GET "+p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			_, _ = w.Write([]byte("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Google Drive (emulator)</title></head><body>" +
				"<p>The drivemail emulator's stand-in for the Google page of file <code>" + html.EscapeString(echo(r.PathValue("id"))) +
				"</code>. On Google this link opens the file for people it is shared with.</p></body></html>\n"))
		})
	}
}
