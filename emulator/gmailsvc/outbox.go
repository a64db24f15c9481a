package gmailsvc

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// Summary is one message as GET /_emulator/messages lists it.
type Summary struct {
	ID        string      `json:"id"`
	ThreadID  string      `json:"thread_id"`
	User      string      `json:"user"`
	Kind      string      `json:"kind"` // "sent" or "draft"
	DraftID   string      `json:"draft_id,omitempty"`
	LabelIDs  []string    `json:"label_ids"`
	From      string      `json:"from"`
	To        []string    `json:"to"`
	Cc        []string    `json:"cc"`
	Bcc       []string    `json:"bcc"`
	Subject   string      `json:"subject"`
	Date      string      `json:"date"`
	MessageID string      `json:"message_id"`
	Size      int64       `json:"size"`
	Snippet   string      `json:"snippet"`
	HasHTML   bool        `json:"has_html"`
	Files     []FileEntry `json:"files"`
	RawURL    string      `json:"raw_url"`
	Structure string      `json:"mime_structure"`
}

// FileEntry is an attachment or an inline part of a message.
type FileEntry struct {
	PartID    string `json:"part_id"`
	Filename  string `json:"filename"`
	MIMEType  string `json:"mime_type"`
	Size      int64  `json:"size"`
	ContentID string `json:"content_id,omitempty"`
	// Inline is true for a part the HTML body shows through cid:.
	Inline bool   `json:"inline"`
	URL    string `json:"url"`
}

// registerOutbox adds the test-only routes that show what was sent. They
// need no token: the emulator is a test tool on loopback.
func (s *Service) registerOutbox(mux *http.ServeMux) {
	mux.HandleFunc("GET /_emulator/outbox", s.outboxPage)
	// Gmail's web UI, where a draft's link opens (/mail/u/EMAIL/#drafts/…):
	// here the sent-mail page, which lists drafts too.
	mux.HandleFunc("GET /mail/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/_emulator/outbox", http.StatusFound)
	})
	mux.HandleFunc("GET /_emulator/messages", s.messagesJSON)
	mux.HandleFunc("GET /_emulator/messages/{id}/raw", s.rawMessage)
	mux.HandleFunc("GET /_emulator/messages/{id}/html", s.htmlBody)
	mux.HandleFunc("GET /_emulator/messages/{id}/parts/{part}", s.partContent)
}

// Messages lists user's sent mail and drafts, newest first; an empty user
// lists everyone's. Mail delivered to an inbox (Deliver, a seed's _mail)
// is received, not sent, so it is not listed: the outbox shows what the
// program under test sent.
func (s *Service) Messages(user string) []Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Summary
	users := []string{strings.ToLower(user)}
	if user == "" {
		users = users[:0]
		for u := range s.boxes {
			users = append(users, u)
		}
		slices.Sort(users)
	}
	for _, u := range users {
		b := s.boxes[u]
		if b == nil {
			continue
		}
		for i := len(b.messages) - 1; i >= 0; i-- {
			if m := b.messages[i]; m.draftID != "" || slices.Contains(m.labels, "SENT") {
				out = append(out, summarize(m))
			}
		}
	}
	return out
}

// OpenRaw returns the stored bytes of message id; the caller closes them.
func (s *Service) OpenRaw(id string) (io.ReadCloser, error) {
	s.mu.Lock()
	m := s.byID[id]
	s.mu.Unlock()
	if m == nil {
		return nil, fmt.Errorf("message %q: not found", id)
	}
	return s.deps.Blobs.Open(m.blob.ID)
}

func summarize(m *message) Summary {
	sum := Summary{
		ID: m.id, ThreadID: m.threadID, User: m.user, Kind: "sent", DraftID: m.draftID,
		LabelIDs: m.labels, From: decodeWords(m.header("From")),
		To: addressStrings(m.header("To")), Cc: addressStrings(m.header("Cc")), Bcc: addressStrings(m.header("Bcc")),
		Subject: decodeWords(m.header("Subject")), Date: m.header("Date"), MessageID: m.header("Message-ID"),
		Size: m.blob.Size, Snippet: m.info.snippet, HasHTML: m.info.html != "",
		RawURL: "/_emulator/messages/" + m.id + "/raw", Structure: structure(m.info.root),
		Files: []FileEntry{}, // [] rather than null when there are none
	}
	if m.draftID != "" {
		sum.Kind = "draft"
	}
	for _, l := range m.info.root.leaves() {
		inline := l.ContentID != "" && referencesCID(m.info.html, l.ContentID)
		if !inline && !l.isAttachment() {
			continue
		}
		sum.Files = append(sum.Files, FileEntry{
			PartID: l.ID, Filename: l.Filename, MIMEType: l.MIMEType, Size: l.Size, ContentID: l.ContentID,
			Inline: inline, URL: partURL(m.id, l.ID),
		})
	}
	return sum
}

// structure is the MIME tree in one line, e.g. "multipart/mixed(multipart/related(text/html image/png) application/pdf)".
func structure(p *part) string {
	if len(p.Parts) == 0 {
		return p.MIMEType
	}
	kids := make([]string, len(p.Parts))
	for i, c := range p.Parts {
		kids[i] = structure(c)
	}
	return p.MIMEType + "(" + strings.Join(kids, " ") + ")"
}

func addressStrings(v string) []string {
	list, err := addresses(v)
	if err != nil {
		if v == "" {
			return []string{}
		}
		return []string{v}
	}
	out := make([]string, 0, len(list))
	for _, a := range list {
		if a.Name != "" {
			out = append(out, a.Name+" <"+a.Address+">")
		} else {
			out = append(out, a.Address)
		}
	}
	return out
}

// partURL is where the outbox serves a part; the whole-message part "" is "root".
func partURL(msgID, partID string) string {
	if partID == "" {
		partID = "root"
	}
	return "/_emulator/messages/" + msgID + "/parts/" + partID
}

// referencesCID reports whether html refers to cid:contentID.
func referencesCID(html, contentID string) bool {
	lower := strings.ToLower(html)
	return strings.Contains(lower, "cid:"+strings.ToLower(contentID)) ||
		strings.Contains(lower, "cid:"+strings.ToLower(url.PathEscape(contentID)))
}

// resolveCIDs points every cid: reference of the HTML at the part's route.
func resolveCIDs(html string, m *message) string {
	for _, l := range m.info.root.leaves() {
		if l.ContentID == "" {
			continue
		}
		for _, form := range []string{l.ContentID, url.PathEscape(l.ContentID)} {
			html = replaceFold(html, "cid:"+form, partURL(m.id, l.ID))
		}
	}
	return html
}

// replaceFold replaces old in s ignoring ASCII case.
func replaceFold(s, old, repl string) string {
	if old == "" {
		return s
	}
	lower, lowOld := strings.ToLower(s), strings.ToLower(old)
	if len(lower) != len(s) { // non-ASCII case folding changed lengths: match exactly
		return strings.ReplaceAll(s, old, repl)
	}
	var b strings.Builder
	for {
		i := strings.Index(lower, lowOld)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(repl)
		s, lower = s[i+len(old):], lower[i+len(old):]
	}
}

func (s *Service) messagesJSON(w http.ResponseWriter, r *http.Request) {
	core.WriteJSON(w, http.StatusOK, map[string]any{"messages": nonNil(s.Messages(r.URL.Query().Get("user")))})
}

func nonNil(s []Summary) []Summary {
	if s == nil {
		return []Summary{}
	}
	return s
}

func (s *Service) message(id string) *message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID[id]
}

// openStored opens a message as it was stored; on failure it has answered.
func (s *Service) openStored(w http.ResponseWriter, m *message) (io.ReadCloser, bool) {
	f, err := s.deps.Blobs.Open(m.blob.ID)
	if err != nil {
		http.Error(w, "The message could not be read.", http.StatusInternalServerError)
		return nil, false
	}
	return f, true
}

func (s *Service) rawMessage(w http.ResponseWriter, r *http.Request) {
	m := s.message(r.PathValue("id"))
	if m == nil {
		http.Error(w, "No such message: list them at /_emulator/messages.", http.StatusNotFound)
		return
	}
	f, ok := s.openStored(w, m)
	if !ok {
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "message/rfc822")
	w.Header().Set("Content-Length", strconv.FormatInt(m.blob.Size, 10))
	w.Header().Set("Content-Disposition", `attachment; filename="`+m.id+`.eml"`)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = io.Copy(w, f)
}

// htmlBody serves the HTML body with its cid: images resolved, under a
// policy that runs no script and loads nothing but this emulator's parts.
func (s *Service) htmlBody(w http.ResponseWriter, r *http.Request) {
	m := s.message(r.PathValue("id"))
	if m == nil || m.info.html == "" {
		http.Error(w, "This message has no HTML body.", http.StatusNotFound)
		return
	}
	charset := "utf-8"
	for _, l := range m.info.root.leaves() {
		if l.MIMEType == "text/html" && !l.isAttachment() {
			for _, f := range l.Headers {
				if strings.EqualFold(f.Name, "Content-Type") {
					if _, p, err := mime.ParseMediaType(f.Value); err == nil && p["charset"] != "" {
						charset = p["charset"]
					}
				}
			}
			break
		}
	}
	h := w.Header()
	h.Set("Content-Type", mime.FormatMediaType("text/html", map[string]string{"charset": charset}))
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'; img-src "+core.Origin(r)+" data:; style-src 'unsafe-inline'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	_, _ = io.WriteString(w, resolveCIDs(m.info.html, m))
}

// partContent serves one decoded part: an inline image, or an attachment
// as a download.
func (s *Service) partContent(w http.ResponseWriter, r *http.Request) {
	m := s.message(r.PathValue("id"))
	id := r.PathValue("part")
	if id == "root" {
		id = ""
	}
	var p *part
	if m != nil {
		p = m.info.root.find(id)
	}
	if p == nil || len(p.Parts) > 0 {
		http.Error(w, "No such part: the outbox page links every part.", http.StatusNotFound)
		return
	}
	f, ok := s.openStored(w, m)
	if !ok {
		return
	}
	defer f.Close()
	body, err := openPart(f, id)
	if err != nil {
		http.Error(w, "The part could not be read.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	ctype := mime.FormatMediaType(p.MIMEType, nil)
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.FormatInt(p.Size, 10))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	if r.URL.Query().Get("download") != "" || p.isAttachment() && !strings.HasPrefix(p.MIMEType, "image/") {
		name := p.Filename
		if name == "" {
			name = "part-" + r.PathValue("part")
		}
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	}
	_, _ = io.Copy(w, body)
}
