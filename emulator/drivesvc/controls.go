package drivesvc

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// kindNames are the kinds by the names the /_emulator/ API and seed
// metadata use.
var kindNames = map[string]Kind{
	"": KindBinary, "binary": KindBinary, "folder": KindFolder, "shortcut": KindShortcut,
	"doc": KindDoc, "sheet": KindSheet, "slides": KindSlides, "drawing": KindDrawing,
}

func kindName(k Kind) string {
	for n, v := range kindNames {
		if v == k && n != "" {
			return n
		}
	}
	return "binary"
}

// specJSON is a FileSpec as JSON, for POST /_emulator/files and seed
// sidecar files (NAME.meta.json).
type specJSON struct {
	Owner         string   `json:"owner,omitempty"`
	ID            string   `json:"id,omitempty"`
	Name          string   `json:"name,omitempty"`
	Kind          string   `json:"kind,omitempty"`
	MimeType      string   `json:"mime_type,omitempty"`
	ContentBase64 string   `json:"content_base64,omitempty"`
	ContentText   string   `json:"content_text,omitempty"`
	Parents       []string `json:"parents,omitempty"`
	SharedDrive   string   `json:"shared_drive,omitempty"`
	DocText       string   `json:"doc_text,omitempty"`
	DocHTML       string   `json:"doc_html,omitempty"`
	DocFillBytes  int64    `json:"doc_fill_bytes,omitempty"`
	Tabs          []struct {
		SheetID int64      `json:"sheet_id,omitempty"`
		Title   string     `json:"title"`
		Rows    [][]string `json:"rows"`
	} `json:"tabs,omitempty"`
	Slides []struct {
		Title string   `json:"title"`
		Body  []string `json:"body"`
	} `json:"slides,omitempty"`
	Lines       []string `json:"lines,omitempty"`
	ShortcutTo  string   `json:"shortcut_to,omitempty"`
	SharedWith  []string `json:"shared_with,omitempty"`
	Permissions []struct {
		Type               string `json:"type"`
		Role               string `json:"role"`
		EmailAddress       string `json:"email_address,omitempty"`
		Domain             string `json:"domain,omitempty"`
		AllowFileDiscovery bool   `json:"allow_file_discovery,omitempty"`
	} `json:"permissions,omitempty"`
	LinkShared   bool     `json:"link_shared,omitempty"`
	ResourceKey  string   `json:"resource_key,omitempty"` // "auto" makes one
	NoDownload   bool     `json:"no_download,omitempty"`
	Description  string   `json:"description,omitempty"`
	Trashed      bool     `json:"trashed,omitempty"`
	ClientID     string   `json:"client_id,omitempty"`
	OpenedWith   []string `json:"opened_with,omitempty"`
	CreatedTime  string   `json:"created_time,omitempty"`
	ModifiedTime string   `json:"modified_time,omitempty"`
}

// toSpec converts the JSON form; content fields are decoded here.
func (j specJSON) toSpec() (FileSpec, error) {
	k, ok := kindNames[j.Kind]
	if !ok {
		return FileSpec{}, fmt.Errorf("kind %q: want binary, folder, shortcut, doc, sheet, slides or drawing", j.Kind)
	}
	spec := FileSpec{
		ID: j.ID, Name: j.Name, Kind: k, MimeType: j.MimeType, Parents: j.Parents, SharedDrive: j.SharedDrive,
		DocText: j.DocText, DocHTML: j.DocHTML, DocFillBytes: j.DocFillBytes, Lines: j.Lines,
		ShortcutTo: j.ShortcutTo, SharedWith: j.SharedWith, LinkShared: j.LinkShared, ResourceKey: j.ResourceKey,
		NoDownload: j.NoDownload, Description: j.Description, Trashed: j.Trashed, ClientID: j.ClientID,
		OpenedWith: j.OpenedWith,
	}
	if spec.ResourceKey == "auto" {
		spec.ResourceKey = newResourceKey()
	}
	for _, p := range j.Permissions {
		spec.Permissions = append(spec.Permissions, Permission{Type: p.Type, Role: p.Role,
			EmailAddress: p.EmailAddress, Domain: p.Domain, AllowFileDiscovery: p.AllowFileDiscovery})
	}
	switch {
	case j.ContentBase64 != "" && j.ContentText != "":
		return FileSpec{}, errors.New("give content_base64 or content_text, not both")
	case j.ContentBase64 != "":
		b, err := base64.StdEncoding.DecodeString(j.ContentBase64)
		if err != nil {
			return FileSpec{}, fmt.Errorf("content_base64: %w", err)
		}
		spec.Content = b
	case j.ContentText != "":
		spec.Content = []byte(j.ContentText)
	}
	for _, t := range j.Tabs {
		spec.Tabs = append(spec.Tabs, Tab{SheetID: t.SheetID, Title: t.Title, Rows: t.Rows})
	}
	for _, sl := range j.Slides {
		spec.Slides = append(spec.Slides, Slide{Title: sl.Title, Body: sl.Body})
	}
	for _, t := range []struct {
		raw string
		dst *time.Time
	}{{j.CreatedTime, &spec.Created}, {j.ModifiedTime, &spec.Modified}} {
		if t.raw == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, t.raw)
		if err != nil {
			return FileSpec{}, fmt.Errorf("time %q: want RFC 3339", t.raw)
		}
		*t.dst = at
	}
	return spec, nil
}

// fileJSON is how the /_emulator/ routes describe a file.
func fileJSON(f File) map[string]any {
	m := map[string]any{
		"id": f.ID, "name": f.Name, "mime_type": f.MimeType, "kind": kindName(f.Kind), "owner": f.Owner,
		"parents": f.Parents, "created_time": fmtTime(f.Created), "modified_time": fmtTime(f.Modified), "trashed": f.Trashed,
	}
	if f.DriveID != "" {
		m["drive_id"] = f.DriveID
	}
	if f.Kind == KindBinary {
		m["size"], m["md5"], m["sha256"] = f.Size, f.MD5, f.SHA256
	}
	if f.ResourceKey != "" {
		m["resource_key"] = f.ResourceKey
	}
	if f.ShortcutTo != "" {
		m["shortcut_to"] = f.ShortcutTo
	}
	if f.Kind == KindDoc {
		m["body_bytes"] = f.BodyBytes
	}
	perms := []map[string]any{}
	for _, p := range f.Permissions {
		pm := map[string]any{"id": p.ID, "type": p.Type, "role": p.Role}
		if p.EmailAddress != "" {
			pm["email_address"] = p.EmailAddress
		}
		if p.Domain != "" {
			pm["domain"] = p.Domain
		}
		if p.Type == "domain" || p.Type == "anyone" {
			pm["allow_file_discovery"] = p.AllowFileDiscovery
		}
		perms = append(perms, pm)
	}
	m["permissions"] = perms
	var tabs []map[string]any
	for _, t := range f.Tabs {
		tabs = append(tabs, map[string]any{"sheet_id": t.SheetID, "title": t.Title})
	}
	if tabs != nil {
		m["tabs"] = tabs
	}
	return m
}

// maxControlUpload bounds a file sent to POST /_emulator/files as multipart.
const maxControlUpload = 4 << 30

func (s *Service) registerControls(mux *http.ServeMux) {
	mux.HandleFunc("POST /_emulator/files", s.handleControlPut)
	mux.HandleFunc("GET /_emulator/files", func(w http.ResponseWriter, r *http.Request) {
		owner := r.URL.Query().Get("owner")
		if owner == "" {
			core.WriteError(w, http.StatusBadRequest, "badRequest", "Name whose files to list: GET /_emulator/files?owner=EMAIL.")
			return
		}
		out := []map[string]any{}
		for _, f := range s.Files(owner) {
			out = append(out, fileJSON(f))
		}
		core.WriteJSON(w, http.StatusOK, map[string]any{"files": out})
	})
	mux.HandleFunc("GET /_emulator/files/{id}", func(w http.ResponseWriter, r *http.Request) {
		f, ok := s.FileByID(r.PathValue("id"))
		if !ok {
			errFileNotFound(r.PathValue("id")).write(w)
			return
		}
		core.WriteJSON(w, http.StatusOK, fileJSON(f))
	})
	mux.HandleFunc("GET /_emulator/files/{id}/content", func(w http.ResponseWriter, r *http.Request) {
		f, ok := s.FileByID(r.PathValue("id"))
		rc, err := s.Content(r.PathValue("id"))
		if !ok || err != nil {
			core.WriteError(w, http.StatusNotFound, "notFound", "No binary file has that id: natives have no content to read, export them.")
			return
		}
		defer rc.Close()
		w.Header().Set("Content-Type", f.MimeType)
		_, _ = io.Copy(w, rc)
	})
	mux.HandleFunc("POST /_emulator/drives", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Name    string   `json:"name"`
			Members []string `json:"members"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&body); err != nil {
			core.WriteError(w, http.StatusBadRequest, "badRequest", `Send {"name": "...", "members": ["email", ...]}.`)
			return
		}
		d, err := s.PutSharedDrive(body.Name, body.Members...)
		if err != nil {
			core.WriteError(w, http.StatusBadRequest, "badRequest", err.Error()+".")
			return
		}
		core.WriteJSON(w, http.StatusOK, map[string]any{"id": d.ID, "name": d.Name, "members": d.Members})
	})
}

// handleControlPut creates a file from JSON, or from multipart/form-data
// whose "metadata" part (the same JSON) comes before a "file" part with
// the content, which streams to disk.
func (s *Service) handleControlPut(w http.ResponseWriter, r *http.Request) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var j specJSON
	var content io.Reader
	if mt == "multipart/form-data" {
		r.Body = http.MaxBytesReader(w, r.Body, maxControlUpload)
		mr, err := r.MultipartReader()
		if err != nil {
			core.WriteError(w, http.StatusBadRequest, "badRequest", "The multipart body could not be read: "+err.Error()+".")
			return
		}
		for content == nil {
			part, err := mr.NextPart()
			if err != nil {
				break
			}
			switch part.FormName() {
			case "metadata":
				if err := json.NewDecoder(io.LimitReader(part, maxJSONBody)).Decode(&j); err != nil {
					core.WriteError(w, http.StatusBadRequest, "badRequest", "The metadata part is not JSON: "+err.Error()+".")
					return
				}
			case "file":
				content = part
				if j.Name == "" {
					j.Name = part.FileName()
				}
				if j.MimeType == "" && part.Header.Get("Content-Type") != "application/octet-stream" {
					j.MimeType, _, _ = mime.ParseMediaType(part.Header.Get("Content-Type"))
				}
			}
		}
	} else if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxJSONBody)).Decode(&j); err != nil {
		core.WriteError(w, http.StatusBadRequest, "badRequest", "Send a JSON file spec (see docs/emulator.md) or multipart/form-data with metadata and file parts.")
		return
	}
	spec, err := j.toSpec()
	if err != nil {
		core.WriteError(w, http.StatusBadRequest, "badRequest", err.Error()+".")
		return
	}
	if content != nil {
		spec.Reader = content
	}
	f, err := s.PutFile(j.Owner, spec)
	if err != nil {
		core.WriteError(w, http.StatusBadRequest, "badRequest", strings.TrimSuffix(err.Error(), ".")+".")
		return
	}
	core.WriteJSON(w, http.StatusOK, fileJSON(f))
}
