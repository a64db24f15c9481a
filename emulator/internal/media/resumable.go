package media

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// session is one resumable upload. Its lock is a channel so a request
// can stop waiting for it when the client goes away.
type session struct {
	lock    chan struct{}
	id      string
	ep      Endpoint
	start   Upload // everything but the content, from the opening request
	total   int64  // declared total size, -1 until known
	w       *core.BlobWriter
	expires time.Time
	final   *answer // the response once the upload completed or failed
}

// acquire takes the session's lock, or gives up when ctx ends.
func (ss *session) acquire(ctx context.Context) bool {
	select {
	case ss.lock <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (ss *session) release() { <-ss.lock }

// received is how many content bytes the session holds.
func (ss *session) received() int64 {
	if ss.w == nil {
		return 0
	}
	return ss.w.Size()
}

// discard drops the unfinished content of a session. The caller holds its lock.
func (ss *session) discard() {
	if ss.w != nil {
		ss.w.Abort()
		ss.w = nil
	}
}

// sessions is the table of sessions. Open ones are bounded by max; a
// finished one keeps its answer for a client that resends its last
// chunk, and max of those are kept too, the oldest forgotten first, so
// uploads that finish never use up the room for new ones.
type sessions struct {
	mu   sync.Mutex
	m    map[string]*session
	max  int
	done []string // ids of the finished sessions kept, oldest first
}

func newSessions(max int) *sessions { return &sessions{m: map[string]*session{}, max: max} }

// add stores ss after sweeping expired sessions; false when max sessions
// are open.
func (t *sessions) add(ss *session, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, old := range t.m {
		if now.After(old.expires) && tryAcquire(old) {
			old.discard()
			old.release()
			t.removeLocked(id)
		}
	}
	if len(t.m)-len(t.done) >= t.max {
		return false
	}
	t.m[ss.id] = ss
	return true
}

func tryAcquire(ss *session) bool {
	select {
	case ss.lock <- struct{}{}:
		return true
	default:
		return false
	}
}

func (t *sessions) get(id string) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[id]
}

func (t *sessions) remove(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.removeLocked(id)
}

func (t *sessions) removeLocked(id string) {
	delete(t.m, id)
	if i := slices.Index(t.done, id); i >= 0 {
		t.done = slices.Delete(t.done, i, i+1)
	}
}

// finished moves a session from the open ones to the finished ones,
// forgetting the oldest finished one past max.
func (t *sessions) finished(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.m[id]; !ok || slices.Contains(t.done, id) {
		return
	}
	t.done = append(t.done, id)
	if len(t.done) > t.max {
		t.removeLocked(t.done[0])
	}
}

// openSession serves the POST that begins a resumable upload.
func (s *Server) openSession(w http.ResponseWriter, r *http.Request, ep Endpoint, up Upload) {
	meta, err := readMetadata(r.Body, s.opts.MaxMetadata)
	if err != nil {
		core.WriteError(w, http.StatusBadRequest, "badRequest", err.Error())
		return
	}
	up.Metadata = meta
	up.ContentType = r.Header.Get("X-Upload-Content-Type")
	if up.ContentType != "" && !accepts(ep.Accept, up.ContentType) {
		encode(unsupportedType(up.ContentType, ep.Accept)).write(w)
		return
	}
	total := int64(-1)
	if v := r.Header.Get("X-Upload-Content-Length"); v != "" {
		total, err = strconv.ParseInt(v, 10, 64)
		if err != nil || total < 0 {
			core.WriteError(w, http.StatusBadRequest, "badRequest",
				"X-Upload-Content-Length must be the content's size in bytes, a whole number.")
			return
		}
		if ep.MaxSize > 0 && total > ep.MaxSize {
			encode(tooLarge(ep.MaxSize)).write(w)
			return
		}
	}
	bw, err := s.deps.Blobs.Create()
	if err != nil {
		core.WriteError(w, http.StatusInternalServerError, "backendError", "The emulator could not store the upload.")
		return
	}
	ss := &session{
		lock:    make(chan struct{}, 1),
		id:      core.RandomID(24),
		ep:      ep,
		start:   up,
		total:   total,
		w:       bw,
		expires: s.deps.Now().Add(s.opts.SessionTTL),
	}
	if !s.sessions.add(ss, s.deps.Now()) {
		bw.Abort()
		core.WriteError(w, http.StatusTooManyRequests, "rateLimitExceeded",
			"Too many upload sessions are open: finish or cancel some, or wait for them to expire.")
		return
	}
	s.deps.Stats.UploadStarted()
	loc := url.Values{"uploadType": {"resumable"}, "upload_id": {ss.id}}
	w.Header().Set("Location", core.Origin(r)+r.URL.Path+"?"+loc.Encode())
	w.Header().Set("X-GUploader-UploadID", ss.id)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

// continueSession serves a request on a session URL: a chunk, a status
// query, or a cancellation. A 4xx answer other than 408 and 429 ends the
// session (core.EndsUploadSession: Google's guide), so that any later
// request on it gets 404.
func (s *Server) continueSession(w http.ResponseWriter, r *http.Request, ep Endpoint, id string) {
	ss := s.sessions.get(id)
	if ss == nil || ss.start.Path != r.URL.Path {
		writeNoSession(w)
		return
	}
	if !ss.acquire(r.Context()) {
		return
	}
	defer ss.release()
	w.Header().Set("X-GUploader-UploadID", ss.id)
	if s.deps.Uploads.Take(id) || s.deps.Now().After(ss.expires) {
		s.expire(ss)
		writeNoSession(w)
		return
	}
	if ss.final != nil {
		ss.final.write(w)
		return
	}
	switch r.Method {
	case http.MethodPut, http.MethodPost:
	case http.MethodDelete:
		s.expire(ss)
		// 499 "Client Closed Request" is Cloud Storage's documented answer
		// to a cancelled resumable upload.
		core.WriteError(w, 499, "uploadCancelled", "The upload was cancelled; nothing was created.")
		return
	default:
		w.Header().Set("Allow", "PUT, POST, DELETE")
		core.WriteError(w, http.StatusMethodNotAllowed, "badRequest", "Send chunks with PUT or POST, or cancel with DELETE.")
		return
	}
	s.receiveChunk(w, r, ep, ss).write(w)
}

// receiveChunk takes a chunk or a status query on ss, whose lock the
// caller holds, and returns the answer; one that ends the session has
// ended it.
func (s *Server) receiveChunk(w http.ResponseWriter, r *http.Request, ep Endpoint, ss *session) answer {
	refuse := func(res Result) answer {
		if core.EndsUploadSession(res.Status) || res.EndSession {
			s.expire(ss)
		}
		return encode(res)
	}
	c, err := parseContentRange(r.Header.Get("Content-Range"), r.ContentLength)
	if err != nil {
		return refuse(ErrorResult(http.StatusBadRequest, "badRequest", err.Error()))
	}
	if msg := ss.check(c); msg != "" {
		return refuse(ErrorResult(http.StatusBadRequest, "badRequest", msg))
	}
	if ep.MaxSize > 0 && (c.total > ep.MaxSize || (c.length >= 0 && c.first+c.length > ep.MaxSize)) {
		return refuse(tooLarge(ep.MaxSize))
	}
	if msg := ss.checkChunkSize(c); msg != "" {
		return refuse(ErrorResult(http.StatusBadRequest, "badRequest", msg))
	}
	if c.total >= 0 {
		ss.total = c.total
	}
	if ss.start.ContentType == "" && c.hasData {
		ss.start.ContentType = r.Header.Get("Content-Type")
	}
	if c.hasData {
		if err := s.append(ss, r.Body, c); err != nil {
			if errors.Is(err, errTooLarge) {
				return refuse(tooLarge(ep.MaxSize))
			}
			// The body broke off: the connection is gone and no client
			// reads this answer. The session keeps what arrived, for the
			// client to ask how far it got and resume, as the guide's
			// "Resume an interrupted upload" has it.
			return encode(ErrorResult(http.StatusBadRequest, "badRequest", err.Error()))
		}
	}
	if c.whole {
		ss.total = ss.received()
	}
	if ss.total >= 0 && ss.received() == ss.total {
		return s.complete(r.Context(), ss)
	}
	return incomplete(w, r, ss.received())
}

// check validates a chunk against what the session holds and returns the
// refusal text, or "" when the chunk fits.
func (ss *session) check(c contentRange) string {
	got := ss.received()
	switch {
	case c.total >= 0 && ss.total >= 0 && c.total != ss.total:
		return "Content-Range declares " + itoa(c.total) + " bytes in all but the session was told " + itoa(ss.total) + ": keep the total the same."
	case c.hasData && c.first > got:
		return "Content-Range starts at byte " + itoa(c.first) + " but the session holds " + itoa(got) + " bytes: resume from byte " + itoa(got) + "."
	case !c.hasData && c.total >= 0 && c.total < got:
		return "Content-Range declares " + itoa(c.total) + " bytes in all but the session already holds " + itoa(got) + "."
	}
	return ""
}

// ChunkUnit is the granularity of resumable chunks: Google requires every
// chunk but the one that completes the upload to be a multiple of 256 KiB
// (the Drive guide: "Create chunks in multiples of 256 KB (256 x 1024
// bytes) in size, except for the final chunk that completes the upload").
const ChunkUnit = 256 << 10

// checkChunkSize refuses a chunk that does not complete the upload and is
// not a whole number of ChunkUnit, with the upload server's words, and
// returns "" for any other request.
func (ss *session) checkChunkSize(c contentRange) string {
	if !c.hasData || c.whole || c.length < 0 {
		return ""
	}
	total := ss.total
	if c.total >= 0 {
		total = c.total
	}
	if total >= 0 && c.first+c.length == total {
		return "" // the final chunk may have any size
	}
	if c.length%ChunkUnit == 0 {
		return ""
	}
	if c.length > ChunkUnit {
		// Google's words for this case are not published; the rule is.
		return "Invalid request.  The number of bytes uploaded in a request that does not complete the upload must be a multiple of " +
			itoa(ChunkUnit) + ".  The received request contained " + itoa(c.length) + " bytes, which does not meet this requirement."
	}
	return "Invalid request.  The number of bytes uploaded is required to be equal or greater than " + itoa(ChunkUnit) +
		", except for the final request (it's recommended to be the exact multiple of " + itoa(ChunkUnit) +
		").  The received request contained " + itoa(c.length) + " bytes, which does not meet this requirement."
}

// append writes a chunk's new bytes to the session, skipping the part the
// session already holds (a client resends a whole chunk after a failure).
func (s *Server) append(ss *session, body io.Reader, c contentRange) error {
	skip := ss.received() - c.first
	if c.length >= 0 {
		skip = min(skip, c.length) // a chunk resent whole: all of it is known
		body = io.LimitReader(body, c.length)
	} else if ss.ep.MaxSize > 0 {
		body = io.LimitReader(body, ss.ep.MaxSize-c.first+1)
	}
	if skip > 0 {
		if n, err := io.CopyN(io.Discard, body, skip); err != nil {
			return clientError("The chunk ended after " + itoa(n) + " of its bytes: send it again.")
		}
	}
	n, err := io.Copy(ss.w, body)
	if err != nil {
		return clientError("The chunk could not be read to its end: send it again.")
	}
	if ss.ep.MaxSize > 0 && ss.received() > ss.ep.MaxSize {
		return errTooLarge
	}
	if c.length >= 0 && skip+n < c.length {
		return clientError("The chunk has fewer bytes than its Content-Range declares: send it again.")
	}
	return nil
}

// complete hands the finished content to the endpoint and remembers the
// answer: a 2xx (or 5xx) is given again to any later request, so a client
// that lost it learns what became of its upload; a 4xx ends the session.
func (s *Server) complete(ctx context.Context, ss *session) answer {
	if res, ok := admit(ctx, ss.ep, ss.start); !ok {
		// Not taken now. A 429 (a rate limit) leaves the session with its
		// content for a resent last chunk (whose bytes it then skips) or a
		// "bytes */TOTAL"; another 4xx ends it, as any 4xx does.
		if core.EndsUploadSession(res.Status) || res.EndSession {
			s.expire(ss)
		}
		return encode(res)
	}
	bw := ss.w
	ss.w = nil
	blob, err := bw.Commit()
	if err != nil {
		a := encode(ErrorResult(http.StatusInternalServerError, "backendError", "The emulator could not store the upload."))
		s.end(ss, a)
		return a
	}
	up := ss.start
	up.Blob = blob
	if up.ContentType == "" {
		up.ContentType = "application/octet-stream"
	}
	a := s.finish(ctx, ss.ep, up)
	if core.EndsUploadSession(a.status) {
		s.expire(ss)
		return a
	}
	s.end(ss, a)
	return a
}

// expire ends a session: its content goes and any later request on it
// gets 404, as for a session past its lifetime. The caller holds its lock.
func (s *Server) expire(ss *session) {
	ss.discard()
	s.sessions.remove(ss.id)
}

// end gives a session its final answer and keeps only what answering
// again needs. The caller holds the session's lock.
func (s *Server) end(ss *session, a answer) {
	ss.final = &a
	ss.start.Metadata, ss.start.Query, ss.start.PathValues = nil, nil, nil
	s.sessions.finished(ss.id)
}

// incomplete tells the client how far the upload got: 308 with Range, or
// 200 with X-HTTP-Status-Code-Override: 308 when it asked for no 308s. It
// sets w's headers; the answer carries the status and no body.
func incomplete(w http.ResponseWriter, r *http.Request, got int64) answer {
	if got > 0 {
		w.Header().Set("Range", "bytes=0-"+itoa(got-1))
	}
	if strings.EqualFold(r.Header.Get("X-GUploader-No-308"), "yes") {
		w.Header().Set("X-HTTP-Status-Code-Override", "308")
		return answer{status: http.StatusOK, empty: true}
	}
	return answer{status: http.StatusPermanentRedirect, empty: true}
}

func writeNoSession(w http.ResponseWriter) {
	core.WriteError(w, http.StatusNotFound, "notFound",
		"The upload session was not found or has expired: start the upload again.")
}

// contentRange is a parsed Content-Range request header.
type contentRange struct {
	hasData bool  // the request carries bytes
	whole   bool  // no Content-Range: the body is all of the content
	first   int64 // offset of the body's first byte
	length  int64 // body length, -1 when unknown
	total   int64 // size of the whole content, -1 when not yet known
}

// parseContentRange reads "bytes FIRST-LAST/TOTAL", "bytes FIRST-LAST/*",
// "bytes */TOTAL", "bytes */*" or an absent header (the body is all).
// contentLength is the request's, -1 when unknown.
func parseContentRange(h string, contentLength int64) (contentRange, error) {
	bad := clientError("Invalid Content-Range " + quoteShort(h) + ": want bytes FIRST-LAST/TOTAL, bytes FIRST-LAST/*, bytes */TOTAL or bytes */*.")
	if h == "" {
		return contentRange{hasData: true, whole: true, length: contentLength, total: -1}, nil
	}
	spec, ok := strings.CutPrefix(strings.TrimSpace(h), "bytes ")
	if !ok {
		return contentRange{}, bad
	}
	rng, tot, ok := strings.Cut(strings.TrimSpace(spec), "/")
	if !ok {
		return contentRange{}, bad
	}
	c := contentRange{total: -1, length: -1}
	if tot != "*" {
		n, err := strconv.ParseInt(tot, 10, 64)
		if err != nil || n < 0 {
			return contentRange{}, bad
		}
		c.total = n
	}
	if rng == "*" {
		if contentLength > 0 {
			return contentRange{}, clientError("Content-Range " + quoteShort(h) + " announces no bytes but the request has a body: name the bytes it carries.")
		}
		return c, nil
	}
	a, b, ok := strings.Cut(rng, "-")
	if !ok {
		return contentRange{}, bad
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || first < 0 || last < first || (c.total >= 0 && last >= c.total) {
		return contentRange{}, bad
	}
	c.hasData, c.first, c.length = true, first, last-first+1
	if contentLength >= 0 && contentLength != c.length {
		return contentRange{}, clientError("Content-Range " + quoteShort(h) + " declares " + itoa(c.length) + " bytes but the body has " + itoa(contentLength) + ".")
	}
	return c, nil
}
