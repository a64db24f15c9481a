package drivesvc

import (
	"net/http"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// handleGet serves files.get: metadata, or the content with alt=media.
func (s *Service) handleGet(w http.ResponseWriter, r *http.Request) {
	media := r.URL.Query().Get("alt") == "media"
	scopes := scopesReadMeta
	if media {
		scopes = scopesReadContent
	}
	c, ok := s.authorize(w, r, scopes, driveBroaderScopes)
	if !ok {
		return
	}
	id := r.PathValue("fileId")
	if media {
		s.serveMedia(w, r, c, id)
		return
	}
	m, aerr := fieldsParam(r.URL.Query().Get("fields"), defaultFileMask, fileFieldNames, nil)
	if aerr != nil {
		aerr.write(w)
		return
	}
	s.mu.RLock()
	f, aerr := s.lookup(c, id)
	var res map[string]any
	if aerr == nil {
		res = m.Apply(s.fileResource(c, f, core.Origin(r)))
	}
	s.mu.RUnlock()
	if aerr != nil {
		aerr.write(w)
		return
	}
	core.WriteJSON(w, http.StatusOK, res)
}

// serveMedia sends a binary file's bytes, honouring Range (206 with
// Content-Range, 416 past the end) through http.ServeContent.
func (s *Service) serveMedia(w http.ResponseWriter, r *http.Request, c caller, id string) {
	s.mu.RLock()
	f, aerr := s.lookup(c, id)
	var blobID, mimeType string
	var modified time.Time
	if aerr == nil {
		switch {
		case f.kind != KindBinary:
			aerr = errNotDownloadable
		case f.noDownload:
			aerr = errCannotDownload
		default:
			blobID, mimeType, modified = f.blob.ID, f.mimeType, f.modified
		}
	}
	s.mu.RUnlock()
	if aerr != nil {
		aerr.write(w)
		return
	}
	content, err := s.deps.Blobs.Open(blobID)
	if err != nil {
		core.WriteError(w, http.StatusInternalServerError, "backendError", "The emulator lost this file's content.")
		return
	}
	defer content.Close()
	w.Header().Set("Content-Type", mimeType)
	http.ServeContent(newServedWriter(w, s.deps.Stats, id), r, "", modified, content)
}
