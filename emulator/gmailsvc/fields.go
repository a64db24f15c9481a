package gmailsvc

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/emulator/internal/fieldmask"
	"github.com/drivemail/drivemail/emulator/internal/media"
)

// Gmail, like every Google API, answers only the fields a request names
// in `fields`, so a client that forgets one does not get it here either.
// The top-level names of each resource Gmail answers (gmail/v1 discovery):
var (
	messageFields     = setOf("classificationLabelValues", "historyId", "id", "internalDate", "labelIds", "payload", "raw", "sizeEstimate", "snippet", "threadId")
	draftFields       = setOf("id", "message")
	messageListFields = setOf("messages", "nextPageToken", "resultSizeEstimate")
	draftListFields   = setOf("drafts", "nextPageToken", "resultSizeEstimate")
	profileFields     = setOf("emailAddress", "historyId", "messagesTotal", "threadsTotal")
	partBodyFields    = setOf("attachmentId", "data", "size")
)

// errFieldSelection is Google's 400 for a `fields` it cannot apply.
func errFieldSelection(what string) media.Result {
	b := core.NewError(http.StatusBadRequest, "invalidParameter", "Invalid field selection "+cut(what, 100))
	b.Error.Errors[0].Location, b.Error.Errors[0].LocationType = "fields", "parameter"
	return media.Result{Status: http.StatusBadRequest, Body: b}
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// maskOf reads the request's `fields` for a resource whose top-level
// names are known; nil selects everything. ok is false, with Google's
// 400 in res, for a selection that does not parse or names an unknown
// field.
func maskOf(q url.Values, known map[string]bool) (m fieldmask.Mask, res media.Result, ok bool) {
	raw := q.Get("fields")
	if raw == "" {
		return nil, media.Result{}, true
	}
	m, err := fieldmask.Parse(raw)
	if err != nil {
		return nil, errFieldSelection(raw), false
	}
	if bad := m.Unknown(known); bad != "" {
		return nil, errFieldSelection(bad), false
	}
	if _, all := m["*"]; all {
		return nil, media.Result{}, true
	}
	return m, media.Result{}, true
}

// masked is res with its body cut to m; errors are left whole.
func masked(res media.Result, m fieldmask.Mask) media.Result {
	if m == nil || res.Status < 200 || res.Status > 299 {
		return res
	}
	res.Body = m.Apply(toMap(res.Body))
	return res
}

// toMap turns a resource into the JSON object it encodes as.
func toMap(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]any{}
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return map[string]any{}
	}
	return out
}

// selected reports whether m selects the field at path.
func selected(m fieldmask.Mask, path ...string) bool {
	for _, name := range path {
		if m == nil {
			return true
		}
		sub, ok := m[name]
		if !ok {
			sub, ok = m["*"]
		}
		if !ok {
			return false
		}
		m = sub
	}
	return true
}

// writeStreamed writes head cut to m and, when m selects path, adds the
// field at the end of path as base64url streamed from src, so a message
// near Gmail's 35 MiB cap is never held in memory. Each object on the
// path must sort last among its parent's keys (as "message" does in a
// Draft), since the field is added at the end of its object.
func writeStreamed(w http.ResponseWriter, head map[string]any, m fieldmask.Mask, path []string, src io.Reader) {
	withField := selected(m, path...)
	b, _ := json.Marshal(m.Apply(head))
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	if !withField {
		_, _ = w.Write(append(b, '\n'))
		return
	}
	at := len(b) - len(path) // before the closing braces of the objects on the path
	_, _ = w.Write(b[:at])
	if b[at-1] != '{' {
		_, _ = io.WriteString(w, ",")
	}
	name, _ := json.Marshal(path[len(path)-1])
	_, _ = w.Write(append(name, ':', '"'))
	enc := base64.NewEncoder(base64.URLEncoding, w)
	_, _ = io.Copy(enc, src)
	_ = enc.Close()
	_, _ = w.Write(append(append([]byte{'"'}, b[at:]...), '\n'))
}
