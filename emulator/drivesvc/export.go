package drivesvc

import (
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/emulator/internal/render"
)

// servedWriter counts a download for the stats: DownloadBegun when a 2xx
// status goes out, Served for every body byte after it. A 206 answer to a
// Range request is counted as a range read, not a download.
type servedWriter struct {
	http.ResponseWriter
	stats   *core.Stats
	id      string
	wrote   bool
	counted bool
	partial bool
}

func newServedWriter(w http.ResponseWriter, st *core.Stats, id string) *servedWriter {
	return &servedWriter{ResponseWriter: w, stats: st, id: id}
}

func (sw *servedWriter) WriteHeader(code int) {
	if !sw.wrote {
		sw.wrote = true
		switch {
		case code == http.StatusPartialContent:
			sw.counted, sw.partial = true, true
			sw.stats.RangeReadBegun(sw.id)
		case code >= 200 && code < 300:
			sw.counted = true
			sw.stats.DownloadBegun(sw.id)
		}
	}
	sw.ResponseWriter.WriteHeader(code)
}

func (sw *servedWriter) Write(p []byte) (int, error) {
	if !sw.wrote {
		sw.WriteHeader(http.StatusOK)
	}
	n, err := sw.ResponseWriter.Write(p)
	switch {
	case sw.counted && sw.partial && n > 0:
		sw.stats.RangeServed(sw.id, int64(n))
	case sw.counted && n > 0:
		sw.stats.Served(sw.id, int64(n))
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (sw *servedWriter) Unwrap() http.ResponseWriter { return sw.ResponseWriter }

// handleExport serves files.export: a native file rendered as mimeType,
// refused with 403 exportSizeLimitExceeded past ExportLimit. The export is
// rendered once to count its bytes (stopping at the cap) and once more to
// send them, so memory stays flat and Content-Length is exact.
func (s *Service) handleExport(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authorize(w, r, scopesReadContent, driveBroaderScopes)
	if !ok {
		return
	}
	// files.export takes no supportsAllDrives (drive/v3 discovery):
	// shared-drive members export their files without it.
	c.allDrives = true
	id := r.PathValue("fileId")
	mimeType := r.URL.Query().Get("mimeType")
	if mimeType == "" {
		errRequired("mimeType").write(w)
		return
	}
	ef, sn, aerr := s.exportOf(c, id, byMime(mimeType), "")
	if aerr != nil {
		aerr.write(w)
		return
	}
	count := &render.LimitWriter{Limit: ExportLimit}
	if err := ef.write(count, sn); err != nil {
		if errors.Is(err, render.ErrLimit) {
			errExportTooLarge.write(w)
			return
		}
		slog.Error("drive export", "file", id, "err", err)
		core.WriteError(w, http.StatusInternalServerError, "backendError", "The export failed in the emulator.")
		return
	}
	w.Header().Set("Content-Type", ef.mime)
	w.Header().Set("Content-Length", strconv.FormatInt(count.N, 10))
	sw := newServedWriter(w, s.deps.Stats, id)
	sw.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if err := ef.write(sw, sn); err != nil {
		// Headers are gone; a short body against Content-Length tells the client.
		slog.Warn("drive export cut", "file", id, "err", err)
	}
}

// exportOf finds the file id as c sees it and the export find picks (with
// gid, one tab): the format and a snapshot to render without the lock,
// or Google's error.
func (s *Service) exportOf(c caller, id string, find func(Kind) (exportFormat, bool), gid string) (exportFormat, *snapshot, *apiError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	f, aerr := s.lookup(c, id)
	if aerr != nil {
		return exportFormat{}, nil, aerr
	}
	ef, aerr := exportable(f, find)
	if aerr != nil {
		return exportFormat{}, nil, aerr
	}
	sn := s.snapshotOf(f)
	if aerr := sn.chooseTab(gid); aerr != nil {
		return exportFormat{}, nil, aerr
	}
	return ef, sn, nil
}

// byMime and byParam pick an export by files.export's mimeType or an
// export link's exportFormat.
func byMime(mimeType string) func(Kind) (exportFormat, bool) {
	return func(k Kind) (exportFormat, bool) { return formatByMime(k, mimeType) }
}

func byParam(param string) func(Kind) (exportFormat, bool) {
	return func(k Kind) (exportFormat, bool) { return formatByParam(k, param) }
}

// exportable checks that f can be exported in the format find picks.
func exportable(f *file, find func(Kind) (exportFormat, bool)) (exportFormat, *apiError) {
	if !f.kind.native() {
		return exportFormat{}, errNotExportable
	}
	if f.noDownload {
		return exportFormat{}, errCannotDownload
	}
	ef, ok := find(f.kind)
	if !ok {
		return exportFormat{}, errConversion
	}
	return ef, nil
}

// exportLinkHandler serves the export links of one native kind
// (?id=ID&exportFormat=pdf, for Sheets also &gid=N for one tab) as the
// web endpoints they are (Google documents them for use in a browser):
// a request whose bearer token reaches the file is redirected (307) to a
// one-time URL on the content host (see core.ContentOrigin), as
// docs.google.com redirects to googleusercontent.com; any other request
// is sent to the sign-in page, which answers 200 text/html. Shared-drive
// members need no supportsAllDrives (it is a web URL), and there is no
// size cap.
func (s *Service) exportLinkHandler(kind Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		id := q.Get("id")
		param := q.Get("exportFormat")
		if param == "" {
			param = q.Get("format")
		}
		t, code := s.linkTicket(r, kind, id, param, q.Get("gid"))
		switch code {
		case http.StatusOK:
			http.Redirect(w, r, core.ContentOrigin(r)+"/export/"+t, http.StatusTemporaryRedirect)
		case http.StatusFound:
			http.Redirect(w, r, core.SignInPath+"?"+url.Values{"continue": {core.Origin(r) + r.URL.RequestURI()}}.Encode(), http.StatusFound)
		default:
			writeWebError(w, code)
		}
	}
}

// linkTicket checks an export link request like Google's web front end
// and issues the one-time content URL's ticket (200). A request without
// a token that reaches the file goes to the sign-in page (302); one
// without an id, or with a format or gid the file does not have, is a
// 400, and a link of the wrong kind for the file a 404.
func (s *Service) linkTicket(r *http.Request, kind Kind, id, param, gid string) (string, int) {
	if id == "" {
		return "", http.StatusBadRequest
	}
	tok, ok := s.deps.Accounts.Lookup(core.BearerToken(r))
	if !ok || !tok.HasAnyScope(scopesReadContent...) {
		return "", http.StatusFound
	}
	c := newCaller(tok, r.URL.Query(), r.Header, driveBroaderScopes)
	c.allDrives = true
	s.ensureRoot(c.email)
	s.mu.RLock()
	defer s.mu.RUnlock()
	f, aerr := s.lookup(c, id)
	switch {
	case aerr != nil:
		return "", http.StatusFound
	case f.kind != kind:
		return "", http.StatusNotFound
	}
	if _, aerr := exportable(f, byParam(param)); aerr != nil {
		return "", http.StatusBadRequest
	}
	if aerr := s.snapshotOf(f).chooseTab(gid); aerr != nil {
		return "", http.StatusBadRequest
	}
	return s.links.issue(linkExport{email: c.email, client: c.client, id: id, key: c.keys[id], param: param, gid: gid,
		host: core.ContentHost(r.Host)}, s.now()), http.StatusOK
}

// writeWebError is a web endpoint's error: an HTML page, not the API's JSON.
func writeWebError(w http.ResponseWriter, code int) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Error " + strconv.Itoa(code) +
		"</title></head><body><p><b>" + strconv.Itoa(code) + ".</b> That's an error.</p><p>" + http.StatusText(code) + "</p></body></html>\n"))
}

// handleLinkContent serves an export link's redirect target on the
// content host: once, within linkTicketTTL, with no token (a browser
// following the redirect sends none). It streams.
func (s *Service) handleLinkContent(w http.ResponseWriter, r *http.Request) {
	t, ok := s.links.take(r.PathValue("ticket"), s.now())
	if !ok || !strings.EqualFold(t.host, r.Host) {
		http.NotFound(w, r)
		return
	}
	c := caller{email: t.email, client: t.client, allDrives: true, keys: map[string]string{t.id: t.key}}
	ef, sn, aerr := s.exportOf(c, t.id, byParam(t.param), t.gid)
	if aerr != nil {
		http.NotFound(w, r)
		return
	}
	s.streamExport(w, r, ef, sn, "drive export link")
}

// handleSignIn is the stand-in for Google's sign-in page.
func handleSignIn(w http.ResponseWriter, r *http.Request) {
	core.WriteSignInPage(w, r.URL.Query().Get("continue"))
}

// mimeAttachment is a Content-Disposition for a download named name.
func mimeAttachment(name string) string {
	return mime.FormatMediaType("attachment", map[string]string{"filename": name})
}

// chooseTab applies an export link's gid; a gid no tab has is refused.
func (sn *snapshot) chooseTab(raw string) *apiError {
	if raw == "" || sn.kind != KindSheet {
		return nil
	}
	gid, err := strconv.ParseInt(raw, 10, 64)
	if err == nil {
		for _, t := range sn.tabs {
			if t.id == gid {
				sn.gid = &gid
				return nil
			}
		}
	}
	return errBadRequest("No sheet has gid "+echo(raw)+": use a sheetId from spreadsheets.get.", "gid")
}
