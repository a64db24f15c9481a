// Package gmailsvc emulates Gmail v1 (users.messages.send, list, get and
// attachments.get; users.threads.get; users.drafts.create, list, get and
// send; users.settings.sendAs.list and get; users.getProfile; mail from
// other senders in the inbox: inbox.go)
// behind bearer tokens and Gmail's scope rules, and renders the outbox
// page that shows what was sent (GET /_emulator/outbox).
//
// Messages arrive by media upload (multipart or resumable, through the
// shared media package, capped at Gmail's 36,700,160 bytes) or as JSON
// "raw" (base64url) for small ones. Each is stored as sent, byte for byte,
// except where Gmail itself rewrites it: a missing From becomes the
// sender, one that is not a verified send-as address the default
// send-as (the original kept in X-Google-Original-From), and a missing
// Date or Message-ID is added. A message joins
// a thread only on Gmail's three criteria (threadFor). Gmail's sending
// limit and rate limits can be armed as faults with Google's bodies
// (QuotaFault, POST /_emulator/gmail/quota).
package gmailsvc

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/emulator/internal/media"
)

// MaxMessageSize is Gmail's cap on an uploaded message, the discovery
// document's mediaUpload.maxSize for messages.send and drafts.create.
const MaxMessageSize = 36700160

// maxJSONBody bounds a JSON request body; Gmail refuses "raw" messages
// near this size, which is why large ones go through the upload URL.
const maxJSONBody = 6815744

// Gmail's OAuth scopes.
const (
	scopeFull          = "https://mail.google.com/"
	scopeModify        = "https://www.googleapis.com/auth/gmail.modify"
	scopeCompose       = "https://www.googleapis.com/auth/gmail.compose"
	scopeSend          = "https://www.googleapis.com/auth/gmail.send"
	scopeReadonly      = "https://www.googleapis.com/auth/gmail.readonly"
	scopeMetadata      = "https://www.googleapis.com/auth/gmail.metadata"
	scopeAddonsCompose = "https://www.googleapis.com/auth/gmail.addons.current.action.compose"
	scopeAddonsAction  = "https://www.googleapis.com/auth/gmail.addons.current.message.action"
	scopeAddonsMeta    = "https://www.googleapis.com/auth/gmail.addons.current.message.metadata"
	scopeAddonsRead    = "https://www.googleapis.com/auth/gmail.addons.current.message.readonly"
)

// The scopes each method accepts, from the discovery document.
var (
	sendScopes  = []string{scopeFull, scopeAddonsCompose, scopeCompose, scopeModify, scopeSend}
	draftScopes = []string{scopeFull, scopeAddonsCompose, scopeCompose, scopeModify}
	listScopes  = []string{scopeFull, scopeMetadata, scopeModify, scopeReadonly}
	getScopes   = []string{scopeFull, scopeAddonsAction, scopeAddonsMeta, scopeAddonsRead, scopeMetadata, scopeModify, scopeReadonly}
	// attachments.get takes no metadata scope; threads.get takes the
	// scopes of messages.get.
	attachmentScopes = []string{scopeFull, scopeAddonsAction, scopeAddonsRead, scopeModify, scopeReadonly}
	threadScopes     = getScopes
	draftReadScopes  = []string{scopeFull, scopeCompose, scopeModify, scopeReadonly}
	profileScopes    = []string{scopeFull, scopeCompose, scopeMetadata, scopeModify, scopeReadonly}
)

// Service is the emulated Gmail.
type Service struct {
	deps  core.Deps
	media *media.Server

	mu    sync.Mutex
	boxes map[string]*mailbox // by lower-case email
	byID  map[string]*message // every user's messages, by id
	// sendAs are the users' send-as addresses set by SetSendAs or a seed;
	// a user without an entry has the default primary alone.
	sendAs map[string][]SendAs

	quota quotas
}

// New returns an empty Gmail.
func New(deps core.Deps) *Service {
	return &Service{
		deps:  deps,
		media: media.New(deps, media.Options{}),
		boxes: map[string]*mailbox{},
		byID:  map[string]*message{},
	}
}

// Register adds Gmail's routes (and the outbox page) to mux.
func (s *Service) Register(mux *http.ServeMux) {
	send := s.messageUpload(sendScopes, messageFields, s.finishSend, true)
	draft := s.messageUpload(draftScopes, draftFields, s.finishDraft, false)
	draftSend := s.messageUpload(draftSendScopes, messageFields, s.finishDraftSend, true)
	for _, prefix := range []string{"/upload", "/resumable/upload"} {
		for _, method := range []string{"POST", "PUT", "DELETE"} {
			mux.Handle(method+" "+prefix+"/gmail/v1/users/{userId}/messages/send", send)
			mux.Handle(method+" "+prefix+"/gmail/v1/users/{userId}/drafts", draft)
			mux.Handle(method+" "+prefix+"/gmail/v1/users/{userId}/drafts/send", draftSend)
		}
	}
	mux.HandleFunc("POST /gmail/v1/users/{userId}/messages/send", s.sendJSON)
	mux.HandleFunc("POST /gmail/v1/users/{userId}/drafts", s.draftJSON)
	mux.HandleFunc("POST /gmail/v1/users/{userId}/drafts/send", s.sendDraftJSON)
	mux.HandleFunc("GET /gmail/v1/users/{userId}/messages", s.listMessages)
	mux.HandleFunc("GET /gmail/v1/users/{userId}/messages/{id}", s.getMessage)
	mux.HandleFunc("GET /gmail/v1/users/{userId}/messages/{messageId}/attachments/{id}", s.getAttachment)
	mux.HandleFunc("GET /gmail/v1/users/{userId}/drafts", s.listDrafts)
	mux.HandleFunc("GET /gmail/v1/users/{userId}/drafts/{id}", s.getDraft)
	mux.HandleFunc("GET /gmail/v1/users/{userId}/profile", s.getProfile)
	mux.HandleFunc("GET /gmail/v1/users/{userId}/threads/{id}", s.getThread)
	mux.HandleFunc("GET /gmail/v1/users/{userId}/settings/sendAs", s.listSendAs)
	mux.HandleFunc("GET /gmail/v1/users/{userId}/settings/sendAs/{sendAsEmail}", s.getSendAs)
	s.registerSendAs(mux)
	s.registerOutbox(mux)
	s.registerInbox(mux)
	s.registerQuota(mux)
}

// messageUpload is the upload handler of a method that takes a message
// (Gmail's maxSize and message/* only), answering a resource of known
// names; sends says whether it sends mail (the sending limit applies).
func (s *Service) messageUpload(scopes []string, known map[string]bool, finish func(context.Context, media.Upload) media.Result, sends bool) http.Handler {
	return s.media.Handler(media.Endpoint{
		MaxSize:   MaxMessageSize,
		Accept:    []string{"message/*"},
		Authorize: s.uploadAuthorizer(scopes, known),
		Finish:    finish,
		Admit:     s.admitter(sends),
	})
}

// authorize checks the bearer token, the method's scopes and the userId
// path value ("me" or the caller's own address). On failure it has
// written Google's error and returns ok=false.
func (s *Service) authorize(w http.ResponseWriter, r *http.Request, scopes []string) (core.Token, bool) {
	tok, ok := s.deps.Accounts.Authenticate(w, r)
	if !ok || !core.RequireScope(w, tok, scopes...) {
		return core.Token{}, false
	}
	if uid := r.PathValue("userId"); uid != "me" && !strings.EqualFold(uid, tok.Email) {
		core.WriteError(w, http.StatusForbidden, "forbidden", "Delegation denied for "+cut(uid, 100))
		return core.Token{}, false
	}
	if res, limited := s.quotaRefusal(tok.Email, AtStart, false); limited {
		writeResult(w, res)
		return core.Token{}, false
	}
	return tok, true
}

// admitter is an upload endpoint's Admit: Gmail's quota answers for the
// request that completes a message (send says it is to be sent).
func (s *Service) admitter(send bool) func(context.Context, media.Upload) (media.Result, bool) {
	return func(_ context.Context, up media.Upload) (media.Result, bool) {
		res, limited := s.quotaRefusal(up.Token.Email, AtEnd, send)
		return res, !limited
	}
}

// uploadAuthorizer checks the request that begins an upload: the token,
// and a `fields` the answer can be cut to (known names its resource), so
// a bad one is refused before the message is sent.
func (s *Service) uploadAuthorizer(scopes []string, known map[string]bool) func(http.ResponseWriter, *http.Request) (core.Token, bool) {
	return func(w http.ResponseWriter, r *http.Request) (core.Token, bool) {
		tok, ok := s.authorize(w, r, scopes)
		if !ok {
			return core.Token{}, false
		}
		if _, res, ok := maskOf(r.URL.Query(), known); !ok {
			writeResult(w, res)
			return core.Token{}, false
		}
		return tok, true
	}
}

// writeResult writes a media.Result (also used for non-upload answers).
func writeResult(w http.ResponseWriter, res media.Result) { core.WriteJSON(w, res.Status, res.Body) }

func notFound() media.Result {
	return media.ErrorResult(http.StatusNotFound, "notFound", "Requested entity was not found.")
}

func invalidArgument(msg string) media.Result {
	return media.ErrorResult(http.StatusBadRequest, "invalidArgument", msg)
}

// cut shortens a client value for an error text.
func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
