package drivesvc

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// files.download is a long-running operation (drive/v3 discovery:
// "drive.files.download" answers an Operation; "drive.operations.get"
// polls it). Drive's "Manage long-running operations" guide gives the
// shapes: the first answer is pending (no "done"), a finished one has
// done=true and response {"@type": ".../DownloadFileResponse",
// "downloadUri", "partialDownloadAllowed"}, and the content is a GET of
// downloadUri with the same credentials. Operations are valid for 24 hours.

// Type URLs of the operation's metadata and response.
const (
	typeDownloadMetadata = "type.googleapis.com/google.apps.drive.v3.DownloadFileMetadata"
	typeDownloadResponse = "type.googleapis.com/google.apps.drive.v3.DownloadFileResponse"
)

// Bounds of the operations one emulator keeps.
const (
	operationTTL  = 24 * time.Hour // "Operations are valid for 24 hours from the time of creation."
	maxOperations = 10_000         // oldest dropped past this; Google documents no bound
	// DefaultDownloadPolls is how many operations.get answers say "not
	// done" before one says done. The first answer, files.download's own,
	// is always pending, so a client polls at least once.
	DefaultDownloadPolls = 0
)

// operation is one files.download in flight or finished.
type operation struct {
	name        string
	email       string // who started it; nobody else sees it
	fileID      string
	resourceKey string // the key the start request presented, if any
	mimeType    string // the export format; "" for a binary file
	polled      int    // operations.get answers given
	created     time.Time
	contentHost string // the host downloadUri names
}

// operations holds the operations of every user.
type operations struct {
	mu    sync.Mutex
	byID  map[string]*operation
	order []string // names, oldest first
	polls int      // see SetDownloadPolls
}

func newOperations() *operations {
	return &operations{byID: map[string]*operation{}, polls: DefaultDownloadPolls}
}

// SetDownloadPolls sets how many operations.get answers of a
// files.download operation say it is not done yet (default
// DefaultDownloadPolls; 0 makes the next poll done), for the operations
// under way too. A test of a client's patience sets it high.
func (s *Service) SetDownloadPolls(n int) {
	s.ops.mu.Lock()
	defer s.ops.mu.Unlock()
	s.ops.polls = max(n, 0)
}

// add stores op, dropping expired and, past the bound, the oldest.
func (o *operations) add(op *operation, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.order) > 0 {
		oldest := o.byID[o.order[0]]
		if oldest != nil && len(o.order) < maxOperations && now.Sub(oldest.created) < operationTTL {
			break
		}
		delete(o.byID, o.order[0])
		o.order = o.order[1:]
	}
	o.byID[op.name] = op
	o.order = append(o.order, op.name)
}

// get returns email's operation called name, counting one poll when poll
// is set; nil if there is none or it expired.
func (o *operations) get(name, email string, now time.Time, poll bool) (op operation, done, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.byID[name]
	if p == nil || p.email != email || now.Sub(p.created) >= operationTTL {
		return operation{}, false, false
	}
	done = p.polled >= o.polls
	if poll && !done {
		p.polled++
	}
	return *p, done, true
}

// handleDownload serves files.download: it checks the file and the
// format as files.export does (with no 10 MB cap: the operation exists
// for what files.export refuses) and answers a pending operation. Like
// files.export it takes no supportsAllDrives: shared-drive members reach
// their files without it.
func (s *Service) handleDownload(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authorize(w, r, scopesReadContent, driveBroaderScopes)
	if !ok {
		return
	}
	c.allDrives = true
	id := r.PathValue("fileId")
	q := r.URL.Query()
	if q.Get("revisionId") != "" {
		// The emulator keeps no revisions: Google answers INVALID_ARGUMENT
		// for a revision it cannot download.
		errBadRequest("Downloading a specific revision is not supported for this file.", "revisionId").write(w)
		return
	}
	mimeType := q.Get("mimeType")
	s.mu.RLock()
	f, aerr := s.lookup(c, id)
	if aerr == nil {
		mimeType, aerr = downloadFormat(f, mimeType)
	}
	var key string
	if aerr == nil {
		key = f.resourceKey
	}
	s.mu.RUnlock()
	if aerr != nil {
		aerr.write(w)
		return
	}
	op := &operation{
		name: core.RandomID(18), email: c.email, fileID: id, resourceKey: key, mimeType: mimeType,
		created: s.now(), contentHost: core.ContentHost(r.Host),
	}
	s.ops.add(op, op.created)
	core.WriteJSON(w, http.StatusOK, operationResource(op, false, ""))
}

// downloadFormat checks what files.download may give of f: a binary
// file as it is (a mimeType is refused: "This field can only be set
// when downloading Google Workspace documents"), a native one in the
// format asked, PDF when none is. The caller holds s.mu.
func downloadFormat(f *file, mimeType string) (string, *apiError) {
	switch {
	case f.kind == KindBinary && mimeType != "":
		return "", errBadRequest("mimeType can only be set when downloading Google Workspace documents.", "mimeType")
	case f.kind == KindBinary && f.noDownload:
		return "", errCannotDownload
	case f.kind == KindBinary:
		return "", nil
	case !f.kind.native():
		return "", errNotDownloadable
	}
	if mimeType == "" {
		mimeType = mimePDF // "downloaded with a default MIME type"; the emulator picks PDF
	}
	ef, aerr := exportable(f, byMime(mimeType))
	if aerr != nil {
		return "", aerr
	}
	return ef.mime, nil
}

// operationResource is the Operation JSON of op: pending, or done with
// the download URI on origin.
func operationResource(op *operation, done bool, origin string) map[string]any {
	meta := map[string]any{"@type": typeDownloadMetadata}
	if op.resourceKey != "" {
		meta["resourceKey"] = op.resourceKey
	}
	res := map[string]any{"name": op.name, "metadata": meta}
	if !done {
		return res
	}
	res["done"] = true
	res["response"] = map[string]any{
		"@type":                  typeDownloadResponse,
		"downloadUri":            origin + "/download?" + url.Values{"id": {op.fileID}, "op": {op.name}}.Encode(),
		"partialDownloadAllowed": op.mimeType == "",
	}
	return res
}

// handleOperationGet serves operations.get: the caller's own operation,
// pending until its polls run out, then done. An operation whose file
// went away meanwhile is done with a NOT_FOUND error (google.rpc.Code 5).
func (s *Service) handleOperationGet(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authorize(w, r, scopesReadContent, driveBroaderScopes)
	if !ok {
		return
	}
	c.allDrives = true
	name := r.PathValue("name")
	op, done, found := s.ops.get(name, c.email, s.now(), true)
	if !found {
		core.WriteError(w, http.StatusNotFound, "notFound", "Operation not found: "+echo(name)+".")
		return
	}
	if !done {
		core.WriteJSON(w, http.StatusOK, operationResource(&op, false, ""))
		return
	}
	c.keys[op.fileID] = op.resourceKey
	s.mu.RLock()
	_, aerr := s.lookup(c, op.fileID)
	s.mu.RUnlock()
	if aerr != nil {
		res := operationResource(&op, false, "")
		res["done"] = true
		res["error"] = map[string]any{"code": 5, "message": "File not found: " + echo(op.fileID) + "."}
		core.WriteJSON(w, http.StatusOK, res)
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	core.WriteJSON(w, http.StatusOK, operationResource(&op, true, scheme+"://"+op.contentHost))
}

// handleDownloadContent serves a finished operation's downloadUri on the
// content host: the operation's owner, with a token as the guide says;
// the bytes of a binary file (Range honoured: partialDownloadAllowed) or
// the export, with no size cap. On the API host the path is unknown.
func (s *Service) handleDownloadContent(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	tok, ok := s.deps.Accounts.Authenticate(w, r)
	if !ok {
		return
	}
	c := newCaller(tok, url.Values{}, r.Header, driveBroaderScopes)
	c.allDrives = true
	op, done, found := s.ops.get(q.Get("op"), c.email, s.now(), false)
	if !found || !done || op.fileID != q.Get("id") || !strings.EqualFold(op.contentHost, r.Host) {
		http.NotFound(w, r)
		return
	}
	c.keys[op.fileID] = op.resourceKey
	if op.mimeType == "" {
		s.serveMedia(w, r, c, op.fileID)
		return
	}
	ef, sn, aerr := s.exportOf(c, op.fileID, byMime(op.mimeType), "")
	if aerr != nil {
		aerr.write(w)
		return
	}
	s.streamExport(w, r, ef, sn, "drive download")
}

// streamExport sends an export of unknown length, chunked: a failure
// mid-stream aborts the connection, so a client never takes a short file
// for a whole one.
func (s *Service) streamExport(w http.ResponseWriter, r *http.Request, ef exportFormat, sn *snapshot, what string) {
	w.Header().Set("Content-Type", ef.mime)
	w.Header().Set("Content-Disposition", mimeAttachment(sn.title+"."+ef.ext))
	sw := newServedWriter(w, s.deps.Stats, sn.id)
	sw.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if err := ef.write(sw, sn); err != nil {
		slog.Warn(what+" cut", "file", sn.id, "err", err)
		panic(http.ErrAbortHandler)
	}
}
