package drivesvc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/emulator/internal/media"
	"github.com/drivemail/drivemail/emulator/internal/render"
)

// fileMeta is the File resource a create or update request sends; fields
// the emulator does not model are ignored, as Drive ignores read-only ones.
type fileMeta struct {
	ID              string   `json:"id"`
	Name            *string  `json:"name"`
	MimeType        string   `json:"mimeType"`
	Parents         []string `json:"parents"`
	Description     *string  `json:"description"`
	Trashed         *bool    `json:"trashed"`
	CreatedTime     string   `json:"createdTime"`
	ModifiedTime    string   `json:"modifiedTime"`
	ShortcutDetails *struct {
		TargetID string `json:"targetId"`
	} `json:"shortcutDetails"`
}

var errParse = &apiError{http.StatusBadRequest, "parseError", "Parse Error", ""}

func decodeMeta(b []byte) (fileMeta, *apiError) {
	var m fileMeta
	if len(strings.TrimSpace(string(b))) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, errParse
	}
	return m, nil
}

// readMeta reads the File resource of a request without content, at most
// 1 MiB of JSON. On refusal the response is written and ok is false.
func readMeta(w http.ResponseWriter, r *http.Request) (m fileMeta, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxMetadataBody))
	if err != nil {
		errBadRequest("The metadata is larger than 1 MiB.", "").write(w)
		return m, false
	}
	m, aerr := decodeMeta(body)
	if aerr != nil {
		aerr.write(w)
		return m, false
	}
	return m, true
}

// specFromMeta turns create metadata into a FileSpec; kind comes from
// mimeType (an empty native file, a folder, a shortcut, else binary).
func specFromMeta(m fileMeta, c caller) (FileSpec, *apiError) {
	spec := FileSpec{ID: m.ID, Kind: kindOfMime(m.MimeType), Parents: m.Parents, ClientID: c.client}
	if m.Name != nil {
		spec.Name = *m.Name
	}
	if len(spec.Name) > maxNameLen {
		return spec, errInvalid("name")
	}
	if m.ID != "" && !validID(m.ID) {
		return spec, errInvalid("id")
	}
	if m.Description != nil {
		spec.Description = *m.Description
	}
	if m.Trashed != nil {
		spec.Trashed = *m.Trashed
	}
	for _, t := range []struct {
		raw string
		dst *time.Time
	}{{m.CreatedTime, &spec.Created}, {m.ModifiedTime, &spec.Modified}} {
		if t.raw == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, t.raw)
		if err != nil {
			return spec, errInvalid("modifiedTime")
		}
		*t.dst = at
	}
	if spec.Kind == KindBinary {
		spec.MimeType = m.MimeType
	}
	if spec.Kind == KindShortcut {
		if m.ShortcutDetails == nil || m.ShortcutDetails.TargetID == "" {
			return spec, errBadRequest("A shortcut needs shortcutDetails.targetId.", "shortcutDetails.targetId")
		}
		spec.ShortcutTo = m.ShortcutDetails.TargetID
	}
	return spec, nil
}

// handleCreate serves files.create without content: folders, shortcuts,
// empty native files and empty binary files.
func (s *Service) handleCreate(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authorize(w, r, scopesWrite, driveBroaderScopes)
	if !ok {
		return
	}
	meta, ok := readMeta(w, r)
	if !ok {
		return
	}
	res := s.create(c, meta, core.Origin(r), r.URL.Query().Get("fields"), nil)
	core.WriteJSON(w, res.Status, res.Body)
}

// create makes a file from metadata and, when content is set, a finished
// upload; it answers the response as media.Result for both paths. Content
// stored for the request and not kept by a new file is released: a
// refused upload's blob, or a converted one's (the file holds a copy).
func (s *Service) create(c caller, meta fileMeta, origin, fields string, content *media.Upload) media.Result {
	f, res := s.createFile(c, meta, origin, fields, content)
	var stored []core.Blob
	if content != nil {
		stored = append(stored, content.Blob)
	}
	if f != nil && f.hasBlob && (content == nil || f.blob.ID != content.Blob.ID) {
		stored = append(stored, f.blob)
	}
	for _, b := range stored {
		if res.Status != http.StatusOK || b.ID != f.blob.ID {
			s.releaseBlobs(b)
		}
	}
	return res
}

// createFile does create's work and returns the file it built, placed or
// not (nil when none was built).
func (s *Service) createFile(c caller, meta fileMeta, origin, fields string, content *media.Upload) (*file, media.Result) {
	m, aerr := fieldsParam(fields, defaultFileMask, fileFieldNames, nil)
	if aerr != nil {
		return nil, errResult(aerr)
	}
	spec, aerr := specFromMeta(meta, c)
	if aerr != nil {
		return nil, errResult(aerr)
	}
	var f *file
	if content == nil {
		f, aerr = s.buildChecked(spec)
	} else {
		f, aerr = s.buildFromUpload(spec, *content)
	}
	if aerr != nil {
		return f, errResult(aerr)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if aerr := s.checkCreateAccess(c, spec); aerr != nil {
		return f, errResult(aerr)
	}
	if spec.ID != "" {
		if aerr := s.checkChosenID(c, spec.ID, spec.Kind); aerr != nil {
			return f, errResult(aerr)
		}
	}
	if aerr := s.place(c.email, f, spec.Parents, ""); aerr != nil {
		return f, errResult(aerr)
	}
	s.useID(f.id)
	return f, media.Result{Status: http.StatusOK, Body: m.Apply(s.fileResource(c, f, origin))}
}

func errResult(e *apiError) media.Result { return media.Result{Status: e.code, Body: e.body()} }

// buildChecked is build with Google-shaped errors.
func (s *Service) buildChecked(spec FileSpec) (*file, *apiError) {
	f, err := s.build(spec)
	if err != nil {
		var aerr *apiError
		if errors.As(err, &aerr) {
			return nil, aerr
		}
		if errors.Is(err, errTooManyCells) || errors.Is(err, errTooLargeToConvert) {
			return nil, errBadRequest("The content is too large for the emulator to convert: "+err.Error()+".", "")
		}
		return nil, &apiError{http.StatusInternalServerError, "backendError", "The emulator could not store the file.", ""}
	}
	return f, nil
}

// checkCreateAccess makes sure c may see the parent and the shortcut
// target: a shared-drive parent needs supportsAllDrives, like any access.
// The caller holds s.mu.
func (s *Service) checkCreateAccess(c caller, spec FileSpec) *apiError {
	if len(spec.Parents) == 1 && spec.Parents[0] != "root" {
		p := spec.Parents[0]
		if d := s.drives[p]; d != nil {
			if !c.allDrives || !d.members[c.email] {
				return errFileNotFound(p)
			}
		} else {
			pf, aerr := s.lookup(c, p)
			if aerr != nil {
				return aerr
			}
			if aerr := s.checkAppWrite(c, pf); aerr != nil {
				return aerr
			}
		}
	}
	if spec.Kind == KindShortcut {
		if _, aerr := s.lookup(c, spec.ShortcutTo); aerr != nil {
			return aerr
		}
	}
	return nil
}

// buildFromUpload makes the file of a finished upload: binary content
// keeps the uploaded blob; a native mimeType converts it.
func (s *Service) buildFromUpload(spec FileSpec, up media.Upload) (*file, *apiError) {
	mt, _, _ := mime.ParseMediaType(up.ContentType)
	switch spec.Kind {
	case KindBinary:
		if spec.MimeType == "" {
			spec.MimeType = mt
		}
		if spec.MimeType == "" || spec.MimeType == "application/octet-stream" {
			spec.MimeType = mimeByName(spec.Name)
		}
		spec.stored = &up.Blob
		return s.buildChecked(spec)
	case KindFolder, KindShortcut:
		return nil, errBadRequest("A folder or shortcut has no content: create it without media.", "")
	}
	conv, ok := s.converter(spec.Kind, mt)
	if !ok {
		return nil, &apiError{http.StatusBadRequest, "conversionUnsupportedConversionPath",
			"Conversion of the uploaded content to the requested output type is not supported.", ""}
	}
	rc, err := s.deps.Blobs.Open(up.Blob.ID)
	if err != nil {
		return nil, &apiError{http.StatusInternalServerError, "backendError", "The emulator lost the upload.", ""}
	}
	defer rc.Close()
	if aerr := conv(&spec, rc); aerr != nil {
		return nil, aerr
	}
	return s.buildChecked(spec)
}

// converter returns how content of media type mt becomes a native kind.
func (s *Service) converter(k Kind, mt string) (func(*FileSpec, io.Reader) *apiError, bool) {
	tooLarge := errBadRequest("The content is too large for the emulator to convert.", "")
	switch {
	case k == KindDoc && (mt == "text/plain" || mt == "text/markdown" || mt == "text/html"):
		return func(spec *FileSpec, r io.Reader) *apiError {
			spec.docSource = func(fn func(render.Paragraph) error) error {
				if mt == "text/html" {
					return htmlParagraphs(r, fn)
				}
				return textParagraphs(r, mt == "text/plain", fn)
			}
			return nil
		}, true
	case k == KindSheet && (mt == "text/csv" || mt == "text/tab-separated-values"):
		return func(spec *FileSpec, r io.Reader) *apiError {
			comma := ','
			if mt == "text/tab-separated-values" {
				comma = '\t'
			}
			title := strings.TrimSuffix(spec.Name, path.Ext(spec.Name))
			t, err := csvTab(r, title, comma)
			if err != nil {
				if errors.Is(err, errTooManyCells) {
					return tooLarge
				}
				return errBadRequest("The CSV content could not be read: "+err.Error()+".", "")
			}
			spec.Tabs = []Tab{{Title: t.title, Rows: t.rows}}
			return nil
		}, true
	case k == KindSlides && mt == "text/plain":
		return func(spec *FileSpec, r io.Reader) *apiError {
			b, err := io.ReadAll(io.LimitReader(r, maxHTMLConvert+1))
			if err != nil || len(b) > maxHTMLConvert {
				return tooLarge
			}
			for _, sl := range slidesFromText(string(b)) {
				spec.Slides = append(spec.Slides, Slide{Title: sl.title, Body: sl.body})
			}
			return nil
		}, true
	}
	return nil, false
}

// uploadEndpoint describes files.create's media upload for the media server.
func (s *Service) uploadEndpoint() media.Endpoint {
	return media.Endpoint{
		MaxSize: 5 << 40, // drive/v3 discovery: maxSize 5497558138880
		Authorize: func(w http.ResponseWriter, r *http.Request) (core.Token, bool) {
			tok, ok := s.deps.Accounts.Authenticate(w, r)
			if !ok || !core.RequireScopeFor(w, r, tok, scopesWrite...) {
				return core.Token{}, false
			}
			s.ensureRoot(tok.Email)
			return tok, true
		},
		Finish: s.finishUpload,
	}
}

func (s *Service) finishUpload(_ context.Context, up media.Upload) media.Result {
	c := newCaller(up.Token, up.Query, http.Header{}, driveBroaderScopes)
	meta, aerr := decodeMeta(up.Metadata)
	if aerr != nil {
		return errResult(aerr)
	}
	return s.create(c, meta, up.Origin, up.Query.Get("fields"), &up)
}

// handleUpdate serves files.update without content: rename, describe,
// trash or untrash, move with addParents/removeParents.
func (s *Service) handleUpdate(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authorize(w, r, scopesWrite, driveBroaderScopes)
	if !ok {
		return
	}
	meta, ok := readMeta(w, r)
	if !ok {
		return
	}
	m, aerr := fieldsParam(r.URL.Query().Get("fields"), defaultFileMask, fileFieldNames, nil)
	if aerr != nil {
		aerr.write(w)
		return
	}
	if meta.Name != nil && len(*meta.Name) > maxNameLen {
		errInvalid("name").write(w)
		return
	}
	s.mu.Lock()
	res, aerr := s.update(c, r.PathValue("fileId"), meta, r.URL.Query(), core.Origin(r))
	s.mu.Unlock()
	if aerr != nil {
		aerr.write(w)
		return
	}
	core.WriteJSON(w, http.StatusOK, m.Apply(res))
}

// update applies files.update and returns the file's resource. The caller
// holds s.mu for writing.
func (s *Service) update(c caller, id string, meta fileMeta, q url.Values, origin string) (map[string]any, *apiError) {
	f, aerr := s.editable(c, id)
	if aerr != nil {
		return nil, aerr
	}
	if add := q.Get("addParents"); add != "" {
		owner := f.owner
		if owner == "" {
			owner = c.email
		}
		if strings.Contains(add, ",") || !s.validParent(owner, add, f.driveID) {
			return nil, errFileNotFound(add)
		}
		if pf := s.files[add]; pf != nil {
			if aerr := s.checkAppWrite(c, pf); aerr != nil {
				return nil, aerr
			}
		}
		f.parents = []string{add}
	} else if q.Get("removeParents") != "" {
		return nil, errBadRequest("A file must keep one parent: move it with addParents and removeParents together.", "removeParents")
	}
	if meta.Name != nil {
		f.name = *meta.Name
	}
	if meta.Description != nil {
		f.description = *meta.Description
	}
	if meta.Trashed != nil {
		f.trashed = *meta.Trashed
	}
	f.modified = s.now()
	f.version++
	return s.fileResource(c, f, origin), nil
}

// editable returns a file c may change: hidden files are 404, files c
// can only read are 403. The caller holds s.mu.
func (s *Service) editable(c caller, id string) (*file, *apiError) {
	f, aerr := s.lookup(c, id)
	if aerr != nil {
		return nil, aerr
	}
	if f.isRoot {
		return nil, errInsufficientFilePermissions
	}
	if aerr := s.checkAppWrite(c, f); aerr != nil {
		return nil, aerr
	}
	if f.owner == c.email {
		return f, nil
	}
	if d := s.drives[f.driveID]; d != nil && d.members[c.email] {
		return f, nil
	}
	return nil, errInsufficientFilePermissions
}

// handleDelete serves files.delete: the file, and a folder's contents, go
// for good, and so does their content on disk.
func (s *Service) handleDelete(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authorize(w, r, scopesWrite, driveBroaderScopes)
	if !ok {
		return
	}
	s.mu.Lock()
	f, aerr := s.editable(c, r.PathValue("fileId"))
	var gone []core.Blob
	if aerr == nil {
		gone = s.deleteTree(f.id, 0, nil)
	}
	s.mu.Unlock()
	if aerr != nil {
		aerr.write(w)
		return
	}
	s.releaseBlobs(gone...)
	w.WriteHeader(http.StatusNoContent)
}

// deleteTree removes id and everything under it and returns the content
// they held, appended to gone. The caller holds s.mu.
func (s *Service) deleteTree(id string, depth int, gone []core.Blob) []core.Blob {
	if f := s.files[id]; f != nil && f.hasBlob {
		gone = append(gone, f.blob)
	}
	delete(s.files, id)
	if depth > 100 {
		return gone
	}
	for cid, f := range s.files {
		for _, p := range f.parents {
			if p == id {
				gone = s.deleteTree(cid, depth+1, gone)
				break
			}
		}
	}
	return gone
}

// releaseBlobs deletes content no file refers to any more: each blob
// belongs to one file (or to an upload no file was made of). A reader
// that opened one already still reads it to the end. Call it without
// s.mu held: removing a large file takes the file system a while.
func (s *Service) releaseBlobs(blobs ...core.Blob) {
	for _, b := range blobs {
		if err := s.deps.Blobs.Delete(b.ID); err != nil {
			slog.Warn("emulator: releasing a deleted file's content", "err", err)
		}
	}
}
