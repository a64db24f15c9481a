package gmailsvc

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/emulator/internal/media"
)

// threadFields are the top-level names of a Thread resource.
var threadFields = setOf("historyId", "id", "messages", "snippet")

// threadOut is the Thread resource: its messages oldest first.
type threadOut struct {
	ID        string       `json:"id"`
	Snippet   string       `json:"snippet"`
	HistoryID string       `json:"historyId"`
	Messages  []messageOut `json:"messages"`
}

// getThread serves users.threads.get: format full (the default),
// metadata or minimal (raw is not among its formats), with the scopes of
// the discovery document; full needs more than gmail.metadata. Another
// user's thread reads as one that does not exist.
func (s *Service) getThread(w http.ResponseWriter, r *http.Request) {
	tok, ok := s.authorize(w, r, threadScopes)
	if !ok {
		return
	}
	q := r.URL.Query()
	format := strings.ToLower(q.Get("format"))
	if format == "" {
		format = "full"
	}
	switch format {
	case "minimal", "metadata", "full":
	default:
		writeResult(w, invalidArgument("Invalid format "+strconv.Quote(cut(q.Get("format"), 40))+": use full, metadata or minimal."))
		return
	}
	if format == "full" && !tok.HasAnyScope(scopeFull, scopeModify, scopeReadonly, scopeAddonsRead, scopeAddonsAction) {
		core.WriteError(w, http.StatusForbidden, "forbidden", "Metadata scope doesn't allow format FULL")
		return
	}
	mask, res, ok := maskOf(q, threadFields)
	if !ok {
		writeResult(w, res)
		return
	}
	id := r.PathValue("id")
	s.mu.Lock()
	var msgs []*message
	var history uint64
	if b := s.boxes[tok.Email]; b != nil {
		for _, m := range b.messages {
			if m.threadID == id {
				msgs = append(msgs, m)
				history = max(history, m.historyID)
			}
		}
	}
	s.mu.Unlock()
	if len(msgs) == 0 {
		writeResult(w, notFound())
		return
	}
	out := threadOut{ID: id, Snippet: msgs[len(msgs)-1].info.snippet, HistoryID: strconv.FormatUint(history, 10)}
	for _, m := range msgs {
		mo, err := s.formatted(m, format, q["metadataHeaders"])
		if err != nil {
			core.WriteError(w, http.StatusInternalServerError, "backendError", "The emulator could not read the message.")
			return
		}
		out.Messages = append(out.Messages, mo)
	}
	writeResult(w, masked(media.Result{Status: http.StatusOK, Body: out}, mask))
}
