package drivesvc

import (
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strconv"

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
	id := r.PathValue("fileId")
	mimeType := r.URL.Query().Get("mimeType")
	if mimeType == "" {
		errRequired("mimeType").write(w)
		return
	}
	s.mu.RLock()
	f, aerr := s.lookup(c, id)
	var sn *snapshot
	var ef exportFormat
	if aerr == nil {
		ef, aerr = exportable(f, func(k Kind) (exportFormat, bool) { return formatByMime(k, mimeType) })
	}
	if aerr == nil {
		sn = s.snapshotOf(f)
	}
	s.mu.RUnlock()
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
// (?id=ID&exportFormat=pdf, for Sheets also &gid=N for one tab): bearer
// authenticated like the API, visible to shared-drive members without
// supportsAllDrives (it is a web URL), and with no size cap. It streams.
func (s *Service) exportLinkHandler(kind Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.authorize(w, r, scopesReadContent, driveBroaderScopes)
		if !ok {
			return
		}
		c.allDrives = true
		q := r.URL.Query()
		id := q.Get("id")
		param := q.Get("exportFormat")
		if param == "" {
			param = q.Get("format")
		}
		if id == "" {
			errRequired("id").write(w)
			return
		}
		s.mu.RLock()
		f, aerr := s.lookup(c, id)
		if aerr == nil && f.kind != kind {
			aerr = errFileNotFound(id)
		}
		var ef exportFormat
		var sn *snapshot
		if aerr == nil {
			ef, aerr = exportable(f, func(k Kind) (exportFormat, bool) { return formatByParam(k, param) })
		}
		if aerr == nil {
			sn = s.snapshotOf(f)
			aerr = sn.chooseTab(q.Get("gid"))
		}
		s.mu.RUnlock()
		if aerr != nil {
			aerr.write(w)
			return
		}
		w.Header().Set("Content-Type", ef.mime)
		w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": sn.title + "." + ef.ext}))
		sw := newServedWriter(w, s.deps.Stats, id)
		sw.WriteHeader(http.StatusOK)
		if r.Method == http.MethodHead {
			return
		}
		if err := ef.write(sw, sn); err != nil {
			slog.Warn("drive export link cut", "file", id, "err", err)
			// Abort the chunked response so the client sees a broken
			// stream, not a short file that looks whole.
			panic(http.ErrAbortHandler)
		}
	}
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
