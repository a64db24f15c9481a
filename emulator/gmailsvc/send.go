package gmailsvc

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/mail"
	"strings"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/emulator/internal/fieldmask"
	"github.com/drivemail/drivemail/emulator/internal/media"
)

// messageJSON is the Message resource as a request carries it.
type messageJSON struct {
	Raw      string `json:"raw"`
	ThreadID string `json:"threadId"`
}

// draftJSON is the Draft resource as a request carries it.
type draftJSON struct {
	Message *messageJSON `json:"message"`
}

// sentJSON is the Message Gmail answers to a send.
type sentJSON struct {
	ID       string   `json:"id"`
	ThreadID string   `json:"threadId"`
	LabelIDs []string `json:"labelIds"`
}

// createdDraftJSON is the Draft Gmail answers to drafts.create.
type createdDraftJSON struct {
	ID      string   `json:"id"`
	Message sentJSON `json:"message"`
}

// finishSend receives an uploaded message for users.messages.send.
func (s *Service) finishSend(_ context.Context, up media.Upload) media.Result {
	var meta messageJSON
	if len(up.Metadata) > 0 {
		if err := json.Unmarshal(up.Metadata, &meta); err != nil {
			s.release(up.Blob)
			return invalidArgument("Invalid JSON payload received: the metadata must be a Message resource.")
		}
	}
	mask, _, _ := maskOf(up.Query, messageFields) // checked when the upload began
	return masked(s.deliver(up.Token.Email, up.Blob, meta.ThreadID, false), mask)
}

// finishDraft receives an uploaded message for users.drafts.create.
func (s *Service) finishDraft(_ context.Context, up media.Upload) media.Result {
	var meta draftJSON
	if len(up.Metadata) > 0 {
		if err := json.Unmarshal(up.Metadata, &meta); err != nil {
			s.release(up.Blob)
			return invalidArgument("Invalid JSON payload received: the metadata must be a Draft resource.")
		}
	}
	thread := ""
	if meta.Message != nil {
		thread = meta.Message.ThreadID
	}
	mask, _, _ := maskOf(up.Query, draftFields) // checked when the upload began
	return masked(s.deliver(up.Token.Email, up.Blob, thread, true), mask)
}

// jsonCall reads a JSON request for a method that answers a resource
// of known names: the token (with one of scopes), its `fields` and its
// body into v. On refusal the answer is written and ok is false.
func (s *Service) jsonCall(w http.ResponseWriter, r *http.Request, scopes []string, known map[string]bool, v any) (core.Token, fieldmask.Mask, bool) {
	tok, ok := s.authorize(w, r, scopes)
	if !ok {
		return core.Token{}, nil, false
	}
	mask, res, ok := maskOf(r.URL.Query(), known)
	if !ok {
		writeResult(w, res)
		return core.Token{}, nil, false
	}
	if res, ok := readJSON(w, r, v); !ok {
		writeResult(w, res)
		return core.Token{}, nil, false
	}
	return tok, mask, true
}

// sendJSON serves users.messages.send with the message as JSON "raw".
func (s *Service) sendJSON(w http.ResponseWriter, r *http.Request) {
	var m messageJSON
	tok, mask, ok := s.jsonCall(w, r, sendScopes, messageFields, &m)
	if !ok {
		return
	}
	if res, limited := s.quotaRefusal(tok.Email, AtEnd, true); limited {
		writeResult(w, res)
		return
	}
	writeResult(w, masked(s.deliverRaw(tok.Email, m, false), mask))
}

// draftJSON serves users.drafts.create with the message as JSON "raw".
func (s *Service) draftJSON(w http.ResponseWriter, r *http.Request) {
	var d draftJSON
	tok, mask, ok := s.jsonCall(w, r, draftScopes, draftFields, &d)
	if !ok {
		return
	}
	if d.Message == nil {
		writeResult(w, invalidArgument("Message is required: send {\"message\": {\"raw\": …}}."))
		return
	}
	if res, limited := s.quotaRefusal(tok.Email, AtEnd, false); limited {
		writeResult(w, res)
		return
	}
	writeResult(w, masked(s.deliverRaw(tok.Email, *d.Message, true), mask))
}

// readJSON decodes a bounded JSON request body into v.
func readJSON(w http.ResponseWriter, r *http.Request, v any) (media.Result, bool) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return media.ErrorResult(http.StatusBadRequest, "badRequest",
				fmt.Sprintf("Request payload size exceeds the limit: %d bytes.", maxJSONBody)), false
		}
		return media.ErrorResult(http.StatusBadRequest, "badRequest", "Invalid JSON payload received."), false
	}
	return media.Result{}, true
}

// deliverRaw stores a message given as JSON "raw".
func (s *Service) deliverRaw(user string, m messageJSON, draft bool) media.Result {
	if m.Raw == "" {
		return media.ErrorResult(http.StatusBadRequest, "badRequest",
			"'raw' RFC822 payload message string or uploading message via /upload/* URL required")
	}
	raw, err := decodeRaw(m.Raw)
	if err != nil {
		return invalidArgument("Invalid value for ByteString: raw must be the message in base64url.")
	}
	blob, err := s.deps.Blobs.PutBytes(raw)
	if err != nil {
		return errStore
	}
	return s.deliver(user, blob, m.ThreadID, draft)
}

// decodeRaw accepts base64url or base64, padded or not, as Gmail does.
func decodeRaw(s string) ([]byte, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	if b, err := base64.RawURLEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// deliver checks a stored message as Gmail does and files it as sent mail
// or as a draft of user. It owns blob: what the message does not keep
// (a refused message, the original of one Gmail rewrote) is released.
func (s *Service) deliver(user string, blob core.Blob, threadID string, draft bool) media.Result {
	user = strings.ToLower(user)
	m, res, ok := s.prepare(user, blob, draft)
	if !ok {
		return res
	}
	s.mu.Lock()
	if threadID != "" && !s.box(user).threads[threadID] {
		s.mu.Unlock()
		s.release(m.blob)
		return invalidArgument("Invalid thread_id value")
	}
	m.threadID = s.threadFor(user, threadID, m.info, m.id)
	s.add(m)
	s.mu.Unlock()
	return s.filed(m)
}

// prepare checks a message of user as Gmail does, applies its rewrites
// and returns it with a new id and labels, ready to file. It owns blob:
// what the message does not keep is released, everything on refusal.
func (s *Service) prepare(user string, blob core.Blob, draft bool) (*message, media.Result, bool) {
	stored, kept := []core.Blob{blob}, ""
	defer func() {
		for _, b := range stored {
			if b.ID != kept {
				s.release(b)
			}
		}
	}()
	info, err := s.parseBlob(blob)
	if err != nil {
		return nil, invalidArgument("Invalid RFC 822 message: " + err.Error() + "."), false
	}
	if !draft {
		if res, ok := checkRecipients(info); !ok {
			return nil, res, false
		}
	}
	if fixed, changed, err := s.normalize(blob, info, user); err != nil {
		return nil, errStore, false
	} else if changed {
		blob = fixed
		stored = append(stored, fixed)
		if info, err = s.parseBlob(blob); err != nil {
			return nil, errStore, false
		}
	}
	m := &message{id: newID(), user: user, blob: blob, info: info, internalDate: s.deps.Now()}
	if draft {
		m.draftID, m.labels = newDraftID(), []string{"DRAFT"}
	} else {
		m.labels = []string{"SENT"}
		if addressedTo(info, user) {
			m.labels = append(m.labels, "INBOX", "UNREAD")
		}
	}
	kept = blob.ID
	return m, media.Result{}, true
}

// errStore is the answer when the emulator cannot keep a message.
var errStore = media.ErrorResult(http.StatusInternalServerError, "backendError", "The emulator could not store the message.")

// filed counts m, just filed, and is Gmail's answer to its request: the
// Message, or for a draft the Draft.
func (s *Service) filed(m *message) media.Result {
	sent := sentJSON{ID: m.id, ThreadID: m.threadID, LabelIDs: m.labels}
	if m.draftID != "" {
		s.deps.Stats.DraftCreated()
		return media.Result{Status: http.StatusOK, Body: createdDraftJSON{ID: m.draftID, Message: sent}}
	}
	s.deps.Stats.MessageSent()
	return media.Result{Status: http.StatusOK, Body: sent}
}

// release deletes content no message keeps.
func (s *Service) release(b core.Blob) {
	if err := s.deps.Blobs.Delete(b.ID); err != nil {
		slog.Warn("emulator: releasing a refused message's content", "err", err)
	}
}

func (s *Service) parseBlob(blob core.Blob) (*parsed, error) {
	f, err := s.deps.Blobs.Open(blob.ID)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMessage(f)
}

// checkRecipients refuses a message without a valid recipient, in Gmail's words.
func checkRecipients(info *parsed) (media.Result, bool) {
	n := 0
	for _, h := range []string{"To", "Cc", "Bcc"} {
		for _, f := range info.headers {
			if !strings.EqualFold(f.Name, h) {
				continue
			}
			list, err := addresses(f.Value)
			if err != nil {
				return invalidArgument("Invalid " + h + " header"), false
			}
			n += len(list)
		}
	}
	if n == 0 {
		return invalidArgument("Recipient address required"), false
	}
	return media.Result{}, true
}

// addressedTo reports whether user is among the recipients.
func addressedTo(info *parsed, user string) bool {
	for _, h := range []string{"To", "Cc", "Bcc"} {
		list, _ := addresses(info.get(h))
		for _, a := range list {
			if strings.EqualFold(a.Address, user) {
				return true
			}
		}
	}
	return false
}

// normalize applies Gmail's own rewrites: a missing From becomes the
// sender's address; a From that is not one of the sender's verified
// send-as addresses keeps its name but takes the default send-as address,
// the original kept as X-Google-Original-From (what Gmail's SMTP
// submission does; for the API, reported but not documented); a missing
// Date or Message-ID is added. It returns a new blob when anything changed.
func (s *Service) normalize(blob core.Blob, info *parsed, user string) (core.Blob, bool, error) {
	var add []string
	fromOK := true
	if raw := info.get("From"); raw == "" {
		fromOK = false
		add = append(add, "From: "+(&mail.Address{Address: user}).String())
	} else if f := s.rewrittenFrom(user, raw); f != "" {
		fromOK = false
		add = append(add, "From: "+f, "X-Google-Original-From: "+strings.Join(strings.Fields(raw), " "))
	}
	if info.get("Date") == "" {
		add = append(add, "Date: "+s.deps.Now().Format("Mon, 2 Jan 2006 15:04:05 -0700"))
	}
	if info.get("Message-ID") == "" {
		add = append(add, "Message-ID: <emu-"+core.RandomID(18)+"@mail.gmail.com>")
	}
	if len(add) == 0 {
		return blob, false, nil
	}
	nb, err := s.rewriteHeader(blob, info, add, fromOK)
	return nb, err == nil, err
}

// rewrittenFrom is the From Gmail sends instead of raw, or "" when raw
// names one address user may send as (the primary, or an accepted alias).
// The name raw gives is kept with the default send-as address; without
// one, the default's display name is not added (Gmail's rewrites keep
// the original's).
func (s *Service) rewrittenFrom(user, raw string) string {
	from, err := addresses(raw)
	s.mu.Lock()
	ok, def := false, SendAs{}
	if err == nil && len(from) == 1 {
		ok, def = s.verifiedFrom(user, from[0].Address)
	} else {
		_, def = s.verifiedFrom(user, "")
	}
	s.mu.Unlock()
	if ok {
		return ""
	}
	name := ""
	if err == nil && len(from) == 1 {
		name = from[0].Name
	}
	return (&mail.Address{Name: name, Address: def.SendAsEmail}).String()
}

// rewriteHeader stores a copy of blob with the header fields add on top
// and, unless keepFrom, its From field dropped.
func (s *Service) rewriteHeader(blob core.Blob, info *parsed, add []string, keepFrom bool) (core.Blob, error) {
	f, err := s.deps.Blobs.Open(blob.ID)
	if err != nil {
		return core.Blob{}, err
	}
	defer f.Close()
	bw, err := s.deps.Blobs.Create()
	if err != nil {
		return core.Blob{}, err
	}
	nl := "\n"
	if info.crlf {
		nl = "\r\n"
	}
	out := bufio.NewWriter(bw)
	for _, a := range add {
		out.WriteString(a + nl)
	}
	if err := copyHeaderWithout(out, f, info.headerLen, keepFrom); err != nil {
		bw.Abort()
		return core.Blob{}, err
	}
	if _, err := io.Copy(out, f); err != nil {
		bw.Abort()
		return core.Blob{}, err
	}
	if err := out.Flush(); err != nil {
		bw.Abort()
		return core.Blob{}, err
	}
	return bw.Commit()
}

// copyHeaderWithout copies the first n header bytes of r to w, dropping
// the From field (with its continuation lines) unless keepFrom.
func copyHeaderWithout(w *bufio.Writer, r io.Reader, n int64, keepFrom bool) error {
	br := bufio.NewReader(io.LimitReader(r, n))
	dropping := false
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			continued := line[0] == ' ' || line[0] == '\t'
			if !continued {
				dropping = !keepFrom && len(line) >= 5 && strings.EqualFold(line[:5], "from:")
			}
			if !dropping {
				w.WriteString(line)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
