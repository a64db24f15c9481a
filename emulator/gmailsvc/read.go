package gmailsvc

import (
	"encoding/base64"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/emulator/internal/fieldmask"
	"github.com/drivemail/drivemail/emulator/internal/media"
)

// Listing bounds, as Gmail's.
const (
	defaultPageSize = 100
	maxPageSize     = 500
	// maxInlineData is the largest body Gmail's format=full inlines; larger
	// bodies and every file get an attachmentId instead.
	maxInlineData = 1 << 20
)

// messageOut is the Message resource Gmail answers.
type messageOut struct {
	ID           string   `json:"id"`
	ThreadID     string   `json:"threadId"`
	LabelIDs     []string `json:"labelIds,omitempty"`
	Snippet      string   `json:"snippet"`
	Payload      *partOut `json:"payload,omitempty"`
	SizeEstimate int64    `json:"sizeEstimate"`
	HistoryID    string   `json:"historyId"`
	InternalDate string   `json:"internalDate"`
}

// partOut is a MessagePart.
type partOut struct {
	PartID   string     `json:"partId"`
	MimeType string     `json:"mimeType"`
	Filename string     `json:"filename"`
	Headers  []field    `json:"headers"`
	Body     *bodyOut   `json:"body,omitempty"`
	Parts    []*partOut `json:"parts,omitempty"`
}

// bodyOut is a MessagePartBody.
type bodyOut struct {
	AttachmentID string `json:"attachmentId,omitempty"`
	Size         int64  `json:"size"`
	Data         string `json:"data,omitempty"`
}

// idRef is a message named in a list.
type idRef struct {
	ID       string `json:"id"`
	ThreadID string `json:"threadId"`
}

// attachmentID names part partID of a message for attachments.get.
func attachmentID(partID string) string { return "emu-att-" + partID }

func (s *Service) listMessages(w http.ResponseWriter, r *http.Request) {
	tok, ok := s.authorize(w, r, listScopes)
	if !ok {
		return
	}
	q := r.URL.Query()
	if q.Get("q") != "" && !tok.HasAnyScope(scopeFull, scopeModify, scopeReadonly) {
		core.WriteError(w, http.StatusForbidden, "forbidden", "Metadata scope does not support 'q' parameter")
		return
	}
	start, size, res, ok := paging(q.Get("pageToken"), q.Get("maxResults"))
	if !ok {
		writeResult(w, res)
		return
	}
	mask, res, ok := maskOf(q, messageListFields)
	if !ok {
		writeResult(w, res)
		return
	}
	query := parseQuery(q.Get("q"))
	query.user, query.now = tok.Email, s.deps.Now()
	labels := q["labelIds"]
	s.mu.Lock()
	var found []*message
	if b := s.boxes[tok.Email]; b != nil {
		for i := len(b.messages) - 1; i >= 0; i-- {
			m := b.messages[i]
			if hasLabels(m, labels) && query.matches(m) {
				found = append(found, m)
			}
		}
	}
	s.mu.Unlock()
	// Newest first by internalDate, which orders the mailbox; mail
	// delivered with an older Date sorts below what came before it.
	sort.SliceStable(found, func(i, j int) bool { return found[i].internalDate.After(found[j].internalDate) })
	match := make([]idRef, len(found))
	for i, m := range found {
		match[i] = idRef{ID: m.id, ThreadID: m.threadID}
	}
	page, next := pageOf(match, start, size)
	out := map[string]any{"resultSizeEstimate": len(match)}
	if len(page) > 0 {
		out["messages"] = page
	}
	if next != "" {
		out["nextPageToken"] = next
	}
	writeResult(w, masked(media.Result{Status: http.StatusOK, Body: out}, mask))
}

func (s *Service) listDrafts(w http.ResponseWriter, r *http.Request) {
	tok, ok := s.authorize(w, r, draftReadScopes)
	if !ok {
		return
	}
	q := r.URL.Query()
	start, size, res, ok := paging(q.Get("pageToken"), q.Get("maxResults"))
	if !ok {
		writeResult(w, res)
		return
	}
	mask, res, ok := maskOf(q, draftListFields)
	if !ok {
		writeResult(w, res)
		return
	}
	query := parseQuery(q.Get("q"))
	type draftRef struct {
		ID      string `json:"id"`
		Message idRef  `json:"message"`
	}
	s.mu.Lock()
	var match []draftRef
	if b := s.boxes[tok.Email]; b != nil {
		for i := len(b.messages) - 1; i >= 0; i-- {
			m := b.messages[i]
			if m.draftID != "" && query.matches(m) {
				match = append(match, draftRef{ID: m.draftID, Message: idRef{ID: m.id, ThreadID: m.threadID}})
			}
		}
	}
	s.mu.Unlock()
	page, next := pageOf(match, start, size)
	out := map[string]any{"resultSizeEstimate": len(match)}
	if len(page) > 0 {
		out["drafts"] = page
	}
	if next != "" {
		out["nextPageToken"] = next
	}
	writeResult(w, masked(media.Result{Status: http.StatusOK, Body: out}, mask))
}

// paging reads pageToken and maxResults.
func paging(token, maxResults string) (start, size int, res media.Result, ok bool) {
	size = defaultPageSize
	if maxResults != "" {
		n, err := strconv.Atoi(maxResults)
		if err != nil || n < 1 {
			return 0, 0, invalidArgument("Invalid maxResults: give a whole number from 1 to 500."), false
		}
		size = min(n, maxPageSize)
	}
	if token != "" {
		b, err := base64.RawURLEncoding.DecodeString(token)
		n, err2 := strconv.Atoi(strings.TrimPrefix(string(b), "offset:"))
		if err != nil || err2 != nil || n < 0 || !strings.HasPrefix(string(b), "offset:") {
			return 0, 0, invalidArgument("Invalid pageToken: pass the nextPageToken of the previous page."), false
		}
		start = n
	}
	return start, size, media.Result{}, true
}

// pageOf cuts one page from all and returns the next page's token.
func pageOf[T any](all []T, start, size int) ([]T, string) {
	if start >= len(all) {
		return nil, ""
	}
	end := min(start+size, len(all))
	next := ""
	if end < len(all) {
		next = base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(end)))
	}
	return all[start:end], next
}

func hasLabels(m *message, labels []string) bool {
	for _, l := range labels {
		if !slices.Contains(m.labels, strings.ToUpper(l)) {
			return false
		}
	}
	return true
}

func (s *Service) getMessage(w http.ResponseWriter, r *http.Request) {
	s.getStored(w, r, getScopes, s.lookup, false)
}

func (s *Service) getDraft(w http.ResponseWriter, r *http.Request) {
	s.getStored(w, r, draftReadScopes, s.lookupDraft, true)
}

// getStored serves messages.get (find is lookup) and drafts.get (find is
// lookupDraft, and the answer is a Draft).
func (s *Service) getStored(w http.ResponseWriter, r *http.Request, scopes []string, find func(user, id string) *message, draft bool) {
	tok, ok := s.authorize(w, r, scopes)
	if !ok {
		return
	}
	s.mu.Lock()
	m := find(tok.Email, r.PathValue("id"))
	s.mu.Unlock()
	if m == nil {
		writeResult(w, notFound())
		return
	}
	var draftID *string
	if draft {
		draftID = &m.draftID
	}
	s.writeMessage(w, r, tok, m, draftID)
}

// writeMessage answers a message in the requested format; draftID wraps it
// in a Draft.
func (s *Service) writeMessage(w http.ResponseWriter, r *http.Request, tok core.Token, m *message, draftID *string) {
	q := r.URL.Query()
	format := strings.ToLower(q.Get("format"))
	if format == "" {
		format = "full"
	}
	switch format {
	case "minimal", "metadata", "full", "raw":
	default:
		writeResult(w, invalidArgument("Invalid format "+strconv.Quote(cut(q.Get("format"), 40))+": use minimal, metadata, full or raw."))
		return
	}
	if (format == "full" || format == "raw") && !tok.HasAnyScope(scopeFull, scopeModify, scopeReadonly, scopeCompose, scopeAddonsRead, scopeAddonsAction) {
		core.WriteError(w, http.StatusForbidden, "forbidden", "Metadata scope doesn't allow format "+strings.ToUpper(format))
		return
	}
	known := messageFields
	if draftID != nil {
		known = draftFields
	}
	mask, res, ok := maskOf(q, known)
	if !ok {
		writeResult(w, res)
		return
	}
	if format == "raw" {
		s.writeRaw(w, m, s.messageOut(m), draftID, mask)
		return
	}
	out, err := s.formatted(m, format, q["metadataHeaders"])
	if err != nil {
		core.WriteError(w, http.StatusInternalServerError, "backendError", "The emulator could not read the message.")
		return
	}
	if draftID != nil {
		writeResult(w, masked(media.Result{Status: http.StatusOK, Body: map[string]any{"id": *draftID, "message": out}}, mask))
		return
	}
	writeResult(w, masked(media.Result{Status: http.StatusOK, Body: out}, mask))
}

// messageOut is m's resource without a payload (format=minimal).
func (s *Service) messageOut(m *message) messageOut {
	return messageOut{
		ID: m.id, ThreadID: m.threadID, LabelIDs: m.labels, Snippet: m.info.snippet,
		SizeEstimate: m.blob.Size, HistoryID: strconv.FormatUint(m.historyID, 10),
		InternalDate: strconv.FormatInt(m.internalDate.UnixMilli(), 10),
	}
}

// formatted is m's resource in format minimal, metadata (headers, only
// those named when any are) or full.
func (s *Service) formatted(m *message, format string, headers []string) (messageOut, error) {
	out := s.messageOut(m)
	switch format {
	case "metadata":
		out.Payload = &partOut{MimeType: m.info.root.MIMEType, Headers: filterHeaders(m.info.headers, headers)}
	case "full":
		p, err := s.fullPayload(m)
		if err != nil {
			return messageOut{}, err
		}
		out.Payload = p
	}
	return out, nil
}

func filterHeaders(all []field, names []string) []field {
	if len(names) == 0 {
		return all
	}
	var out []field
	for _, f := range all {
		for _, n := range names {
			if strings.EqualFold(f.Name, n) {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// fullPayload builds the MIME tree with the small bodies inline.
func (s *Service) fullPayload(m *message) (*partOut, error) {
	inline := map[string]bool{}
	for _, l := range m.info.root.leaves() {
		if !l.isAttachment() && l.Size <= maxInlineData {
			inline[l.ID] = true
		}
	}
	f, err := s.deps.Blobs.Open(m.blob.ID)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// One pass for every inline body: a pass per body made a message of
	// many small parts behind a large one cost minutes.
	data, err := readBodies(f, inline, maxInlineData)
	if err != nil {
		return nil, err
	}
	var conv func(p *part) *partOut
	conv = func(p *part) *partOut {
		o := &partOut{PartID: p.ID, MimeType: p.MIMEType, Filename: p.Filename, Headers: p.Headers, Body: &bodyOut{Size: p.Size}}
		if strings.HasPrefix(p.MIMEType, "multipart/") && len(p.Parts) > 0 {
			o.Body.Size = 0
			for _, c := range p.Parts {
				o.Parts = append(o.Parts, conv(c))
			}
			return o
		}
		if inline[p.ID] {
			o.Body.Data = base64.URLEncoding.EncodeToString(data[p.ID])
		} else {
			o.Body.AttachmentID = attachmentID(p.ID)
		}
		return o
	}
	return conv(m.info.root), nil
}

// writeRaw streams the message as base64url inside the JSON answer, so a
// 35 MiB message is never held in memory.
func (s *Service) writeRaw(w http.ResponseWriter, m *message, out messageOut, draftID *string, mask fieldmask.Mask) {
	f, err := s.deps.Blobs.Open(m.blob.ID)
	if err != nil {
		core.WriteError(w, http.StatusInternalServerError, "backendError", "The emulator could not read the message.")
		return
	}
	defer f.Close()
	head, path := toMap(out), []string{"raw"}
	if draftID != nil {
		head, path = map[string]any{"id": *draftID, "message": head}, []string{"message", "raw"}
	}
	writeStreamed(w, head, mask, path, f)
}

func (s *Service) getAttachment(w http.ResponseWriter, r *http.Request) {
	tok, ok := s.authorize(w, r, attachmentScopes)
	if !ok {
		return
	}
	s.mu.Lock()
	m := s.lookup(tok.Email, r.PathValue("messageId"))
	s.mu.Unlock()
	mask, res, ok := maskOf(r.URL.Query(), partBodyFields)
	if !ok {
		writeResult(w, res)
		return
	}
	if m == nil {
		// Another user's message reads as one that does not exist.
		writeResult(w, notFound())
		return
	}
	partID, isAtt := strings.CutPrefix(r.PathValue("id"), "emu-att-")
	var p *part
	if m != nil && isAtt {
		p = m.info.root.find(partID)
	}
	if p == nil || len(p.Parts) > 0 {
		writeResult(w, invalidArgument("Invalid attachment token"))
		return
	}
	f, err := s.deps.Blobs.Open(m.blob.ID)
	if err != nil {
		core.WriteError(w, http.StatusInternalServerError, "backendError", "The emulator could not read the message.")
		return
	}
	defer f.Close()
	body, err := openPart(f, partID)
	if err != nil {
		core.WriteError(w, http.StatusInternalServerError, "backendError", "The emulator could not read the message.")
		return
	}
	writeStreamed(w, map[string]any{"size": p.Size}, mask, []string{"data"}, body)
}

func (s *Service) getProfile(w http.ResponseWriter, r *http.Request) {
	tok, ok := s.authorize(w, r, profileScopes)
	if !ok {
		return
	}
	mask, res, ok := maskOf(r.URL.Query(), profileFields)
	if !ok {
		writeResult(w, res)
		return
	}
	s.mu.Lock()
	var msgs, threads int
	var history uint64
	if b := s.boxes[tok.Email]; b != nil {
		msgs, threads, history = len(b.messages), len(b.threads), b.history
	}
	s.mu.Unlock()
	core.WriteJSON(w, http.StatusOK, mask.Apply(map[string]any{
		"emailAddress":  tok.Email,
		"messagesTotal": msgs,
		"threadsTotal":  threads,
		"historyId":     strconv.FormatUint(max(history, 1), 10),
	}))
}

// makeSnippet is the start of the message's text, as Gmail shows in lists.
func makeSnippet(text, html string) string {
	t := text
	if t == "" {
		t = stripTags(html)
	}
	t = strings.Join(strings.Fields(t), " ")
	if r := []rune(t); len(r) > 200 {
		t = string(r[:200])
	}
	return t
}

// stripTags drops markup for a snippet; not a sanitizer.
func stripTags(h string) string {
	var b strings.Builder
	in := false
	for _, c := range h {
		switch {
		case c == '<':
			in = true
		case c == '>':
			in = false
			b.WriteByte(' ')
		case !in:
			b.WriteRune(c)
		}
	}
	return b.String()
}
