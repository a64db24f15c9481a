package core

import (
	"net/http"
	"sync"
)

// EndsUploadSession reports whether an answer of status to a request on
// a resumable upload session ends that session. Google's resumable-upload
// guide (Drive, "Upload file data", "Handle media upload errors"): "For
// any 4xx errors (including 403) during a resumable upload, restart the
// upload. These errors indicate the upload session has expired and must
// be restarted by requesting a new session URI." Kept apart are 408 and
// 429, which Google's own clients retry on the same session (the Go
// client's gensupport retries both) and Cloud Storage's retry strategy
// lists as retryable for resumable uploads.
func EndsUploadSession(status int) bool {
	return status >= 400 && status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests
}

// maxEndedUploads bounds the session ids EndedUploads remembers; the
// oldest are forgotten first (a session's id is random: an old one is
// never asked for again in practice).
const maxEndedUploads = 10000

// EndedUploads is the set of resumable sessions an answer given outside
// the media package (an injected fault) ended: the media package drops
// such a session on its next request, which then gets 404.
type EndedUploads struct {
	mu    sync.Mutex
	ids   map[string]bool
	order []string
}

// End records that session id has ended. A nil EndedUploads records nothing.
func (e *EndedUploads) End(id string) {
	if e == nil || id == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ids == nil {
		e.ids = map[string]bool{}
	}
	if e.ids[id] {
		return
	}
	e.ids[id] = true
	e.order = append(e.order, id)
	if len(e.order) > maxEndedUploads {
		delete(e.ids, e.order[0])
		e.order = e.order[1:]
	}
}

// Take reports whether session id was ended, and forgets it.
func (e *EndedUploads) Take(id string) bool {
	if e == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.ids[id] {
		return false
	}
	delete(e.ids, id)
	return true
}
