package gmailsvc

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/emulator/internal/media"
)

// draftSendScopes are users.drafts.send's (discovery): the drafts scopes,
// not gmail.send.
var draftSendScopes = draftScopes

// draftRefJSON is the Draft a drafts.send request carries: its id, and
// optionally a message to send in its place.
type draftRefJSON struct {
	ID      string       `json:"id"`
	Message *messageJSON `json:"message"`
}

// errNoDraftID is the refusal of a drafts.send without a draft id (the
// discovery document marks Draft.id required for it; the words are chosen).
var errNoDraftID = invalidArgument(`Name the draft to send: {"id": DRAFT_ID}.`)

// sendDraftJSON serves users.drafts.send with a JSON Draft: {id} sends
// the draft as it is, {id, message: {raw}} sends raw in its place.
func (s *Service) sendDraftJSON(w http.ResponseWriter, r *http.Request) {
	var d draftRefJSON
	tok, mask, ok := s.jsonCall(w, r, draftSendScopes, messageFields, &d)
	if !ok {
		return
	}
	if d.ID == "" {
		writeResult(w, errNoDraftID)
		return
	}
	if res, limited := s.quotaRefusal(tok.Email, AtEnd, true); limited {
		writeResult(w, res)
		return
	}
	var replacement *core.Blob
	if d.Message != nil && d.Message.Raw != "" {
		raw, err := decodeRaw(d.Message.Raw)
		if err != nil {
			writeResult(w, invalidArgument("Invalid value for ByteString: raw must be the message in base64url."))
			return
		}
		b, err := s.deps.Blobs.PutBytes(raw)
		if err != nil {
			writeResult(w, errStore)
			return
		}
		replacement = &b
	}
	writeResult(w, masked(s.sendDraft(tok.Email, d.ID, replacement), mask))
}

// finishDraftSend receives an uploaded message for users.drafts.send:
// the metadata names the draft, the content replaces its message.
func (s *Service) finishDraftSend(_ context.Context, up media.Upload) media.Result {
	var d draftRefJSON
	if len(up.Metadata) > 0 {
		if err := json.Unmarshal(up.Metadata, &d); err != nil {
			s.release(up.Blob)
			return invalidArgument("Invalid JSON payload received: the metadata must be a Draft resource.")
		}
	}
	if d.ID == "" {
		s.release(up.Blob)
		return errNoDraftID
	}
	mask, _, _ := maskOf(up.Query, messageFields) // checked when the upload began
	blob := up.Blob
	return masked(s.sendDraft(up.Token.Email, d.ID, &blob), mask)
}

// sendDraft sends user's draft id, or replacement in its place, as Gmail
// does: the draft is deleted and a new message, with a new id and the
// SENT label, takes its place in its thread. An unknown draft, or one
// sent already, is 404. sendDraft owns replacement.
func (s *Service) sendDraft(user, id string, replacement *core.Blob) media.Result {
	user = strings.ToLower(user)
	s.mu.Lock()
	d := s.lookupDraft(user, id)
	var draftBlob core.Blob
	if d != nil {
		draftBlob = d.blob
	}
	s.mu.Unlock()
	if d == nil {
		if replacement != nil {
			s.release(*replacement)
		}
		return notFound()
	}
	content := replacement
	if content == nil {
		// prepare owns what it is given: hand it a copy of the draft's
		// message, which stays the draft's until it is sent.
		c, err := s.copyBlob(draftBlob)
		if err != nil {
			return errStore
		}
		content = &c
	}
	m, res, ok := s.prepare(user, *content, false)
	if !ok {
		return res
	}
	s.mu.Lock()
	if s.lookupDraft(user, id) != d { // sent meanwhile by another request
		s.mu.Unlock()
		s.release(m.blob)
		return notFound()
	}
	s.remove(d)
	m.threadID = d.threadID
	s.add(m)
	s.mu.Unlock()
	s.release(d.blob)
	return s.filed(m)
}

// copyBlob stores a copy of b's content.
func (s *Service) copyBlob(b core.Blob) (core.Blob, error) {
	f, err := s.deps.Blobs.Open(b.ID)
	if err != nil {
		return core.Blob{}, err
	}
	defer f.Close()
	return s.deps.Blobs.Put(f)
}

// remove takes m out of its mailbox (its thread stays while a message
// is in it). The caller holds s.mu.
func (s *Service) remove(m *message) {
	b := s.box(m.user)
	b.messages = slices.DeleteFunc(b.messages, func(x *message) bool { return x == m })
	delete(s.byID, m.id)
	if !slices.ContainsFunc(b.messages, func(x *message) bool { return x.threadID == m.threadID }) {
		delete(b.threads, m.threadID)
	}
}
