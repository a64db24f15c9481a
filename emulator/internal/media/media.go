// Package media is the server side of Google's media upload protocols, as
// google.golang.org/api (internal/gensupport) speaks them. Every emulated
// API that takes file content (Drive files.create, Gmail messages.send and
// drafts.create) shares it.
//
// An API describes one upload method as an Endpoint and mounts
// Server.Handler(ep) on the method's upload path ("/upload/<api path>") for
// POST, PUT and DELETE. The ?uploadType= parameter picks the protocol:
//
//   - media: the body is the content and its Content-Type the media type.
//   - multipart: a multipart/related body with a JSON metadata part and then
//     the media part (a base64 Content-Transfer-Encoding is decoded).
//   - resumable: a POST with the JSON metadata (and optionally
//     X-Upload-Content-Type and X-Upload-Content-Length) opens a session and
//     answers 200 with an absolute Location, the same path plus
//     ?uploadType=resumable&upload_id=ID. PUT or POST to it sends chunks with
//     Content-Range "bytes FIRST-LAST/*" (more to come) or
//     "bytes FIRST-LAST/TOTAL"; "bytes */TOTAL" with no body finalizes once
//     TOTAL bytes have arrived, "bytes */*" only asks how far it got; no
//     Content-Range means the body is the whole content. DELETE cancels.
//
// A chunk that does not complete the upload is answered 308 with
// "Range: bytes=0-N" (no Range when nothing arrived), or, when the request
// carries "X-GUploader-No-308: yes" as the Go client always does, 200 with
// "X-HTTP-Status-Code-Override: 308" and the same Range. A chunk that
// repeats or overlaps bytes already received is accepted and its known part
// skipped, since clients resend a whole chunk after a 5xx or a cut
// connection; a chunk that starts past the received bytes is refused, and
// so is one that does not complete the upload and is not a multiple of
// 256 KiB (ChunkUnit), as Google requires. The session URL is the
// capability, as at Google: chunks need no bearer token.
//
// Content streams into a core.Blobs blob and is never held in memory whole.
// Endpoint.Finish runs exactly once per upload whose content fully arrived,
// and its Result is the response. A resumable session remembers that
// response and answers it again to any later request on the session, so a
// client that lost the answer to its final chunk and resends it gets the
// same resource, not a second one. A session never finalized yields
// nothing and expires (Options.SessionTTL, a week by default like Google's).
//
// Endpoint.Admit may refuse a complete upload for now (an API's quota
// answers); the session then keeps its content for the client's retry.
//
// Content larger than Endpoint.MaxSize is refused with 413 and a Google
// error body ("Request payload size exceeds the limit: N bytes."). A media
// type outside Endpoint.Accept is refused with 400 badContent, as Gmail
// refuses anything but message/*.
//
// Stats: UploadStarted counts a simple upload accepted for reading or a
// session opened; UploadFinished counts an upload handed to Finish whose
// Result was a 2xx.
package media

import (
	"context"
	"encoding/json"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// Endpoint describes one upload method of an emulated API.
type Endpoint struct {
	// MaxSize is the largest content accepted in bytes, the discovery
	// document's mediaUpload.maxSize (Gmail: 36700160); 0 means no limit.
	MaxSize int64
	// Accept lists the media types accepted, such as "message/*" or
	// "*/*"; empty accepts any.
	Accept []string
	// Authorize checks the request that begins an upload (bearer token,
	// scopes, path values). On refusal it has written the response and
	// returns false. Requests that continue a resumable session are not
	// authorized again: the session URL is the capability.
	Authorize func(w http.ResponseWriter, r *http.Request) (core.Token, bool)
	// Finish receives a complete upload and returns the response. It is
	// called once per upload; the blob belongs to it from then on, and it
	// releases (core.Blobs.Delete) what it does not keep.
	Finish func(ctx context.Context, up Upload) Result
	// Admit, when set, decides once the content is complete, before
	// Finish, whether the API takes it now (Gmail's sending and rate
	// limits answer here). A refusal (false) is the response and nothing
	// is finished: a simple upload's content is dropped, and a resumable
	// session stays open with its content, so the client may send its
	// last chunk again, as the Go client does after a 429 or a 5xx.
	Admit func(ctx context.Context, up Upload) (Result, bool)
}

// Upload is a complete upload handed to Endpoint.Finish.
type Upload struct {
	// Token is the caller that began the upload.
	Token core.Token
	// Path is the URL path of the request that began the upload.
	Path string
	// Origin is the scheme and host that request reached, for absolute
	// URLs in the response (Drive's webViewLink and exportLinks).
	Origin string
	// PathValues are the wildcards of the route that began the upload
	// (for example "userId"), captured from its pattern.
	PathValues map[string]string
	// Query is the query of the request that began the upload (fields,
	// supportsAllDrives, …); uploadType and upload_id included.
	Query url.Values
	// Metadata is the JSON resource sent beside the content; nil for
	// uploadType=media or a resumable session opened with no body.
	Metadata []byte
	// ContentType is the media type of the content.
	ContentType string
	// Blob is the content.
	Blob core.Blob
}

// Result is the response Finish chooses: a status and a JSON body.
type Result struct {
	Status int
	Body   any
	// EndSession, on an Admit refusal of 408 or 429, also ends the
	// resumable session (any other 4xx always does).
	EndSession bool
}

// ErrorResult is a Result carrying a Google-shaped error.
func ErrorResult(code int, reason, message string) Result {
	return Result{Status: code, Body: core.NewError(code, reason, message)}
}

// Options tunes a Server.
type Options struct {
	// SessionTTL is how long a resumable session lives, finalized or not
	// (default 7 days, as Google's session URIs).
	SessionTTL time.Duration
	// MaxSessions bounds the open sessions (default 1000): opening one
	// more is refused with 429 until some finish, are cancelled or expire.
	// The answers of as many finished sessions are kept, the oldest
	// forgotten first.
	MaxSessions int
	// MaxMetadata bounds the JSON metadata of one upload (default 1 MiB).
	MaxMetadata int64
}

// Default limits.
const (
	DefaultSessionTTL  = 7 * 24 * time.Hour
	DefaultMaxSessions = 1000
	DefaultMaxMetadata = 1 << 20
)

// Server receives uploads for any number of endpoints and keeps their
// resumable sessions. Safe for concurrent use.
type Server struct {
	deps     core.Deps
	opts     Options
	sessions *sessions
}

// New returns a Server storing content in deps.Blobs and counting in deps.Stats.
func New(deps core.Deps, opts Options) *Server {
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = DefaultSessionTTL
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.MaxMetadata <= 0 {
		opts.MaxMetadata = DefaultMaxMetadata
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	return &Server{deps: deps, opts: opts, sessions: newSessions(opts.MaxSessions)}
}

// Handler serves ep's upload path. Mount it for POST, PUT and DELETE.
// It panics if ep has no Authorize or Finish, a programming error.
func (s *Server) Handler(ep Endpoint) http.Handler {
	if ep.Authorize == nil || ep.Finish == nil {
		panic("media: Endpoint needs Authorize and Finish")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if id := q.Get("upload_id"); id != "" {
			s.continueSession(w, r, ep, id)
			return
		}
		if r.Method != http.MethodPost {
			core.WriteError(w, http.StatusBadRequest, "badRequest",
				"A "+r.Method+" to an upload URL needs an upload_id: open a session with POST ?uploadType=resumable first.")
			return
		}
		tok, ok := ep.Authorize(w, r)
		if !ok {
			return
		}
		start := Upload{Token: tok, Path: r.URL.Path, Origin: core.Origin(r), PathValues: pathValues(r), Query: q}
		switch uploadType(q, r.Header.Get("Content-Type")) {
		case "media":
			s.receiveMedia(w, r, ep, start)
		case "multipart":
			s.receiveMultipart(w, r, ep, start)
		case "resumable":
			s.openSession(w, r, ep, start)
		default:
			core.WriteError(w, http.StatusBadRequest, "badRequest",
				"Unsupported uploadType "+quoteShort(q.Get("uploadType"))+": use media, multipart or resumable.")
		}
	})
}

// uploadType is the protocol a request asks for. Without the parameter a
// multipart body means multipart and anything else media, as Google infers.
func uploadType(q url.Values, contentType string) string {
	if t := q.Get("uploadType"); t != "" {
		return t
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if strings.HasPrefix(mt, "multipart/") {
		return "multipart"
	}
	return "media"
}

// accepts reports whether mediaType matches one of patterns ("*/*",
// "message/*", "image/png"); empty patterns accept anything.
func accepts(patterns []string, mediaType string) bool {
	if len(patterns) == 0 {
		return true
	}
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return false
	}
	for _, p := range patterns {
		p = strings.ToLower(p)
		switch {
		case p == "*/*" || p == mt:
			return true
		case strings.HasSuffix(p, "/*") && strings.HasPrefix(mt, strings.TrimSuffix(p, "*")):
			return true
		}
	}
	return false
}

// unsupportedType is Google's answer to a media type the method does not take.
func unsupportedType(mediaType string, accept []string) Result {
	return ErrorResult(http.StatusBadRequest, "badContent",
		"Media type "+quoteShort(mediaType)+" is not supported. Valid media types: ["+strings.Join(accept, ", ")+"]")
}

// tooLarge is the answer to content over the endpoint's MaxSize.
func tooLarge(max int64) Result {
	return ErrorResult(http.StatusRequestEntityTooLarge, "uploadTooLarge",
		"Request payload size exceeds the limit: "+itoa(max)+" bytes.")
}

// pathValues captures the wildcards of the route that matched r.
func pathValues(r *http.Request) map[string]string {
	out := map[string]string{}
	rest := r.Pattern
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return out
		}
		name := strings.TrimSuffix(rest[i+1:i+j], "...")
		if name != "$" && name != "" {
			out[name] = r.PathValue(name)
		}
		rest = rest[i+j+1:]
	}
}

// answer is an encoded Result, kept by a session to be answered again.
type answer struct {
	status int
	body   []byte
	empty  bool // no body and no Content-Type: a 308 or its override
}

func encode(res Result) answer {
	b, err := json.MarshalIndent(res.Body, "", "  ")
	if err != nil {
		e := core.NewError(http.StatusInternalServerError, "backendError", "The emulator could not encode its response.")
		b, _ = json.Marshal(e)
		return answer{status: http.StatusInternalServerError, body: append(b, '\n')}
	}
	return answer{status: res.Status, body: append(b, '\n')}
}

func (a answer) write(w http.ResponseWriter) {
	if a.empty {
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(a.status)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// finish hands a complete upload to the endpoint and counts it. Content
// of a type the endpoint refuses is released here; otherwise it is
// Finish's.
func (s *Server) finish(ctx context.Context, ep Endpoint, up Upload) answer {
	if !accepts(ep.Accept, up.ContentType) {
		s.release(up.Blob)
		return encode(unsupportedType(up.ContentType, ep.Accept))
	}
	res := ep.Finish(context.WithoutCancel(ctx), up)
	if res.Status >= 200 && res.Status < 300 {
		s.deps.Stats.UploadFinished()
	}
	return encode(res)
}

// admit asks the endpoint's Admit, if any, whether it takes up now.
func admit(ctx context.Context, ep Endpoint, up Upload) (Result, bool) {
	if ep.Admit == nil {
		return Result{}, true
	}
	return ep.Admit(context.WithoutCancel(ctx), up)
}

// release deletes content no upload keeps.
func (s *Server) release(b core.Blob) {
	if err := s.deps.Blobs.Delete(b.ID); err != nil {
		slog.Warn("emulator: releasing a refused upload's content", "err", err)
	}
}

// quoteShort quotes a client-supplied value for an error text, cut to a
// readable length.
func quoteShort(s string) string {
	const max = 80
	if len(s) > max {
		s = s[:max] + "…"
	}
	return `"` + strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' {
			return '?'
		}
		return r
	}, s) + `"`
}
