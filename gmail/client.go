// Package gmail sends and drafts messages through Gmail's resumable media
// upload, streaming: the message is written into a pipe while the upload
// session, opened at once, takes it in one request when its length is
// known before its first byte (whole.go), else a chunk at a time
// (resumable.go). A message whose writer fails is never completed, so
// nothing is sent.
package gmail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/internal/stream"
)

// DefaultChunkSize is the largest upload chunk: the most memory one send
// holds. Each chunk is a round trip to Gmail.
const DefaultChunkSize = 5 << 20

// OneRequestMax is the largest message sent in one chunk request when its
// size is expected: Google's upload guides suggest a single request for
// 5 MB or less and chunks above. A message of unknown size goes in one
// request only if it ends within its first chunk.
const OneRequestMax = 5 << 20

// MaxMessageBytes is Gmail's cap on an uploaded message (the discovery
// document's maxSize for messages.send and drafts.create).
const MaxMessageBytes = 36_700_160

// DefaultChunkTimeout bounds each upload request, its answer included:
// the request that opens the session, each chunk (tried again after a
// timeout, see session.send) and each status query. It is generous for
// one 5 MiB chunk.
const DefaultChunkTimeout = 2 * time.Minute

// Client calls Gmail as one user.
type Client struct {
	http          *http.Client
	endpoints     google.Endpoints
	chunkSize     int
	chunkTimeout  time.Duration
	rateLimitWait time.Duration
	idle          time.Duration // attachment downloads; 0: DefaultIdleTimeout
	log           *slog.Logger  // see WithLogger
}

// Option tunes a Client.
type Option func(*Client)

// WithChunkTimeout sets how long one upload request may take before it
// is abandoned (default DefaultChunkTimeout); d <= 0 keeps the default.
// A chunk that times out is tried again while its retries last (twice
// the timeout); the session-opening request is not retried. Either way
// the upload then fails with ErrStalled.
func WithChunkTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.chunkTimeout = d
		}
	}
}

// WithRateLimitWait sets how long a resumable chunk that Gmail answers
// with a per-minute rate limit (429) is retried (default
// DefaultRateLimitWait); d <= 0 keeps the default. A chunk answered with
// the daily sending limit or the project's daily quota, or with a retry
// time past the wait, is not retried at all.
func WithRateLimitWait(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.rateLimitWait = d
		}
	}
}

// WithLogger gives the client a logger for what the operator must act
// on: drivemail's Google Cloud project has not enabled the Gmail API (see
// DisabledAPI). Default: no logging.
func WithLogger(l *slog.Logger) Option {
	return func(c *Client) {
		if l != nil {
			c.log = l
		}
	}
}

// New returns a Client for the user whose Google token httpClient adds.
// chunkSize 0 means DefaultChunkSize; any other is rounded up to a
// multiple of 256 KiB (googleapi.MinUploadChunkSize), as Google requires
// of every resumable chunk but the last.
func New(ctx context.Context, httpClient *http.Client, endpoints google.Endpoints, chunkSize int, opts ...Option) (*Client, error) {
	if httpClient == nil {
		return nil, errors.New("gmail: nil http client")
	}
	if chunkSize < 0 {
		return nil, fmt.Errorf("gmail: negative chunk size %d", chunkSize)
	}
	if chunkSize == 0 {
		chunkSize = DefaultChunkSize
	}
	if r := chunkSize % googleapi.MinUploadChunkSize; r != 0 {
		chunkSize += googleapi.MinUploadChunkSize - r
	}
	c := &Client{http: httpClient, endpoints: endpoints, chunkSize: chunkSize, chunkTimeout: DefaultChunkTimeout, rateLimitWait: DefaultRateLimitWait,
		log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// wrap is wrapErr, logging a disabled Gmail API for the operator: the
// user's sentence cannot fix it, the project's owner can. The line has
// the same message as the drive client's (docs/operations.md).
func (c *Client) wrap(op string, err error) *Error {
	e := wrapErr(op, err)
	if service, ok := DisabledAPI(e); ok {
		c.log.Error("Google API not enabled: enable it in the Google Cloud project of drivemail's OAuth client",
			"api", service, "op", op, "enable_at", "https://console.cloud.google.com/apis/library/"+service)
	}
	return e
}

// ChunkSize is the largest resumable chunk, a multiple of 256 KiB: the
// most memory one upload holds.
func (c *Client) ChunkSize() int { return c.chunkSize }

// UploadOption tunes one Send or CreateDraft.
type UploadOption func(*upload)

// upload is what the options of one upload set.
type upload struct {
	size, atLeast, length int64
}

// ExpectedSize says about how large the message will be, at most (0:
// unknown), so that its upload holds no more memory than it needs: a
// message under OneRequestMax (and under the chunk size) goes in one
// chunk request with a buffer just larger than it, not a whole chunk; a larger
// one in the fewest chunks of at most ChunkSize, evened out, so a
// 7 MB message takes two chunks of 3.5 MiB instead of 5 MiB and 2 MiB.
// A message that turns out larger is still sent whole, in more chunks.
func ExpectedSize(n int64) UploadOption {
	return func(u *upload) { u.size = n }
}

// AtLeast says the message will be at least n bytes long (its parts of
// known size, encoded, without the line breaks), so that the chunks that
// end by then are sent while they are written instead of once they fill
// (streamed.go). A message that ends sooner is still sent whole (its
// last chunk then goes as it would have), never cut short.
func AtLeast(n int64) UploadOption {
	return func(u *upload) { u.atLeast = n }
}

// Length says the message will be exactly n bytes long, as its writer
// computed before the first byte (every part's size known), which the
// session is opened with (X-Upload-Content-Length). A message that would
// take several chunks (over OneRequestMax) then goes in one request of
// that Content-Length, streamed as it is written (whole.go), with a ring
// of its most recent bytes (the buffer a chunk would have, sized as
// ExpectedSize or, without it, n says) from which a failure is resumed;
// a writer whose message turns out longer or shorter fails the upload
// before its last byte, and nothing is sent. Without it, or with n <= 0,
// the message goes in chunks.
func Length(n int64) UploadOption {
	return func(u *upload) { u.length = n }
}

// UploadMemory is the most memory the upload of a message of about size
// bytes (0: unknown) holds: its chunk buffer (chunkFor), allocated whole,
// or, for a message of known Length, the ring of its most recent bytes,
// of the same size. A sender reserves it before the message streams, so
// it must stay what the upload allocates.
func (c *Client) UploadMemory(size int64) int64 { return int64(c.chunkFor(size)) }

// chunkFor is the chunk an upload of a message of about size bytes (0:
// unknown) uses: it is allocated whole, and the message goes in one
// request if it ends inside it.
func (c *Client) chunkFor(size int64) int {
	const unit = googleapi.MinUploadChunkSize
	roundUp := func(n int64) int { return int((n + unit - 1) / unit * unit) }
	limit := int64(c.chunkSize)
	switch {
	case size <= 0:
		return c.chunkSize
	case size < min(limit, OneRequestMax):
		return roundUp(size + 1) // larger than the message: its end is seen
	}
	n := (size + limit - 1) / limit // the fewest chunks that fit in limit
	if n < 2 {
		n = 2 // resumable: at least two requests
	}
	return roundUp((size + n - 1) / n)
}

func (c *Client) service(ctx context.Context, hc *http.Client) (*gm.Service, error) {
	opts := append([]option.ClientOption{option.WithHTTPClient(hc)}, c.endpoints.GmailOptions()...)
	s, err := gm.NewService(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("gmail: new service: %w", err)
	}
	return s, nil
}

// Profile returns the user's Gmail address: the From of what they send.
func (c *Client) Profile(ctx context.Context) (string, error) {
	s, err := c.service(ctx, c.http)
	if err != nil {
		return "", err
	}
	p, err := s.Users.GetProfile("me").Fields("emailAddress").Context(ctx).Do()
	if err != nil {
		return "", c.wrap("getProfile", err)
	}
	if p.EmailAddress == "" {
		return "", &Error{Op: "getProfile", Err: errors.New("profile without an address")}
	}
	return p.EmailAddress, nil
}

// Sent identifies what Gmail stored.
type Sent struct {
	ID       string
	ThreadID string
	DraftID  string // drafts only
}

// WriteFunc writes one whole RFC 5322 message to w. Returning an error
// abandons the upload: nothing is sent. ctx is the upload's own: it is
// cancelled as soon as the upload ends, so a writer reading a slow source
// (Drive) with it stops when Gmail has already failed.
type WriteFunc func(ctx context.Context, w io.Writer) error

// Send uploads the message write produces and sends it, in threadID when
// set. The returned error is a *WriteError when the writer failed (nothing
// was sent), or an *Error, whose MaybeSent says whether Gmail might have
// the message.
func (c *Client) Send(ctx context.Context, threadID string, write WriteFunc, opts ...UploadOption) (Sent, error) {
	meta, err := json.Marshal(&gm.Message{ThreadId: threadID})
	if err != nil {
		return Sent{}, fmt.Errorf("gmail: %w", err)
	}
	query := url.Values{"uploadType": {"resumable"}, "alt": {"json"}, "prettyPrint": {"false"}, "fields": {"id,threadId"}}
	return c.upload(ctx, "messages.send", "/upload/gmail/v1/users/me/messages/send", query, meta, write, opts, func(body []byte) (Sent, error) {
		var m gm.Message
		if err := decodeJSON(body, &m); err != nil {
			return Sent{}, err
		}
		return Sent{ID: m.Id, ThreadID: m.ThreadId}, nil
	})
}

// CreateDraft is Send for a draft; it needs the gmail.compose scope.
func (c *Client) CreateDraft(ctx context.Context, threadID string, write WriteFunc, opts ...UploadOption) (Sent, error) {
	meta, err := json.Marshal(&gm.Draft{Message: &gm.Message{ThreadId: threadID}})
	if err != nil {
		return Sent{}, fmt.Errorf("gmail: %w", err)
	}
	query := url.Values{"uploadType": {"resumable"}, "alt": {"json"}, "prettyPrint": {"false"}}
	return c.upload(ctx, "drafts.create", "/upload/gmail/v1/users/me/drafts", query, meta, write, opts, func(body []byte) (Sent, error) {
		var d gm.Draft
		if err := decodeJSON(body, &d); err != nil {
			return Sent{}, err
		}
		s := Sent{DraftID: d.Id}
		if d.Message != nil {
			s.ID, s.ThreadID = d.Message.Id, d.Message.ThreadId
		}
		return s, nil
	})
}

// upload runs write into a pipe and sends what it writes through a
// resumable session, opened before the first chunk has filled. Every
// failure closes the pipe with an error, never with a plain Close, which
// would end the message early; and only a message whose writer returned
// nil is ever completed. An upload whose session ended with nothing sent
// (a restart) begins again on a new one, the writer run again.
func (c *Client) upload(ctx context.Context, op, path string, query url.Values, meta []byte, write WriteFunc, opts []UploadOption, decode func([]byte) (Sent, error)) (Sent, error) {
	var u upload
	for _, o := range opts {
		o(&u)
	}
	w := &uploadWatch{timeout: c.chunkTimeout, throttle: &chunkThrottle{wait: c.rateLimitWait, now: time.Now}}
	hc := *c.http
	w.base = hc.Transport
	if w.base == nil {
		w.base = http.DefaultTransport
	}
	hc.Transport = w
	svc, err := c.service(ctx, &hc)
	if err != nil {
		return Sent{}, err
	}
	t := target{url: uploadURL(svc.BasePath, path, query), meta: meta, decode: decode, length: max(u.length, 0)}
	size := u.size
	if size <= 0 {
		size = t.length
	}
	buf := make([]byte, c.chunkFor(size))
	var wait time.Duration
	for attempt := 1; ; attempt++ {
		sent, s, err, werr := c.attempt(ctx, &hc, w, t, write, buf, u.atLeast)
		if werr != nil {
			// The writer failed: it never returned nil, so no request
			// completed the message. The session is cancelled.
			if s != nil {
				s.cancel(ctx)
			}
			return Sent{}, &WriteError{Err: werr, Contacted: w.contacted.Load()}
		}
		var r *restart
		if errors.As(err, &r) && attempt < uploadAttempts {
			if r.cancel {
				s.cancel(ctx)
			}
			wait = max(r.wait, 2*wait)
			c.log.InfoContext(ctx, "restarting a Gmail upload on a new session", "op", op, "attempt", attempt, "err", google.WithoutURL(r.err).Error())
			if sleep(ctx, jitter(wait)) == nil {
				continue
			}
		}
		if err == nil {
			return sent, nil
		}
		if s != nil && (r != nil && r.cancel || errors.Is(err, errShort) || errors.Is(err, errLonger)) {
			s.cancel(ctx) // it holds part of a message that will not be completed
		}
		e := c.wrap(op, err)
		if errors.Is(err, ErrStalled) {
			e.Err = ErrStalled
		}
		if s != nil {
			e.MaybeSent, e.Accepted = s.unsettled || s.accepted, s.accepted
		}
		return Sent{}, e
	}
}

// attempt runs write once into a pipe and uploads what it writes on a
// new session, which it returns once opened. werr is the writer's
// failure when it came before the upload ended.
func (c *Client) attempt(ctx context.Context, hc *http.Client, w *uploadWatch, t target, write WriteFunc, buf []byte, atLeast int64) (Sent, *session, error, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w.contacted.Store(false)
	pr, pw := io.Pipe()
	p := &producer{done: make(chan struct{})}
	go p.run(ctx, pw, write)
	sent, s, err := c.resumable(ctx, hc, t, &ctxReader{ctx: ctx, r: pr}, buf, atLeast, p)
	// The writer's verdict counts only if it came before the upload
	// ended: the producer records it before closing the pipe, so a writer
	// failure that ended the upload is visible here. A writer still
	// running is stopped (its pipe closed, its context cancelled, which
	// ends a Drive read it waits on) and what it then returns is ignored.
	perr, finished := p.result()
	pr.CloseWithError(errUploadEnded)
	cancel()
	<-p.done
	if finished && perr != nil {
		return Sent{}, s, nil, perr
	}
	return sent, s, err, nil
}

// streamWhole reports whether a message of length bytes (0: unknown)
// goes in one request streamed as it is written (whole), with a ring of
// buf bytes: when its length is known and it would take more than one
// chunk. A message that fits its buffer (at most OneRequestMax) goes in
// one request anyway, once written: a writer that fails meanwhile (a
// Drive failure) has sent Gmail nothing, so the send may start over.
func streamWhole(length int64, buf int) bool {
	return length > int64(buf) && length >= OneRequestMax
}

// resumable opens the session at once, while the writer waits for its
// first bytes, then sends the message: in one request streamed as it is
// written when its length is known and it would take several chunks
// (whole), with buf its ring; otherwise in chunks of len(buf)
// bytes: those that end by atLeast (the message surely goes past them)
// while they are written, the others as they fill; the last one, seen to
// end at the writer's EOF, completes it. It returns the session once
// opened.
func (c *Client) resumable(ctx context.Context, hc *http.Client, t target, src io.Reader, buf []byte, atLeast int64, p *producer) (Sent, *session, error) {
	if perr, finished := p.result(); finished && perr != nil {
		return Sent{}, nil, perr // the writer failed already: not even a session
	}
	s, err := openSession(ctx, hc, t, 2*c.chunkTimeout)
	if err != nil {
		return Sent{}, nil, err
	}
	if streamWhole(t.length, len(buf)) {
		sent, err := s.whole(ctx, newRing(src, buf, t.length))
		return sent, s, err
	}
	chunk := len(buf)
	for off := int64(0); ; off += int64(chunk) {
		if off+int64(chunk) <= atLeast {
			sent, ended, err := s.stream(ctx, src, buf, off)
			if err != nil || ended {
				return sent, s, err
			}
			continue
		}
		n, err := io.ReadFull(src, buf)
		final := err == io.EOF || err == io.ErrUnexpectedEOF // the writer returned nil
		if err != nil && !final {
			return Sent{}, s, err // the writer failed, or the send was cancelled
		}
		sent, err := s.send(ctx, buf[:n], off, final, false)
		if err != nil || final {
			return sent, s, err
		}
	}
}

// WriteError is a send abandoned because the message writer failed: the
// upload was never finalized, so nothing was sent.
type WriteError struct {
	Err error
	// Contacted is false when none of the message reached Gmail (the
	// writer failed before a chunk's first byte left; a session opened
	// meanwhile holds nothing and is cancelled), so a retry of the whole
	// send cannot duplicate anything.
	Contacted bool
}

func (e *WriteError) Error() string { return e.Err.Error() }

func (e *WriteError) Unwrap() error { return e.Err }

var errUploadEnded = errors.New("gmail upload ended before the message was written")

// producer runs the message writer and records how it ended.
type producer struct {
	done chan struct{}
	mu   sync.Mutex
	err  error
	fin  bool
}

func (p *producer) run(ctx context.Context, pw *io.PipeWriter, write WriteFunc) {
	defer close(p.done)
	err := write(ctx, pw)
	// Record the outcome before closing, so the reader's side sees it as
	// soon as the pipe wakes it.
	p.mu.Lock()
	p.err, p.fin = err, true
	p.mu.Unlock()
	if err == nil {
		pw.Close()
	} else {
		pw.CloseWithError(err)
	}
}

func (p *producer) result() (error, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err, p.fin
}

// ctxReader stops reading once ctx is done, so a cancelled send fails
// instead of finalizing.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// uploadWatch is the transport of one upload. It notes whether a request
// carrying any of the message left us (before that, not even a part of
// it reached Gmail), bounds every request by the timeout, answer
// included, and turns a chunk's rate limit (429, or a 403 one) into an
// error that is not retried when retrying cannot help (chunkThrottle).
type uploadWatch struct {
	base      http.RoundTripper
	timeout   time.Duration
	throttle  *chunkThrottle
	contacted atomic.Bool
}

// writtenBody is a request body that hands the writer's bytes on as
// they are written (streamBody, wholeBody): onSent is called at its first
// byte, onWait around each wait on the writer.
type writtenBody interface {
	onSent(func())
	onWait(func(onWriter bool))
}

func (f *uploadWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	cr := r.Header.Get("Content-Range")
	if sb, ok := r.Body.(writtenBody); ok {
		// Its bytes come as the writer makes them: Gmail has some of the
		// message once the first is handed on.
		sb.onSent(func() { f.contacted.Store(true) })
	} else if cr != "" && !strings.HasPrefix(cr, "bytes */") {
		f.contacted.Store(true)
	}
	var res *http.Response
	var err error
	if f.timeout <= 0 {
		res, err = f.base.RoundTrip(r)
	} else {
		res, err = f.timed(r)
	}
	if cr != "" && err == nil && (res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusForbidden) {
		res, err = f.throttle.check(res)
	}
	return res, err
}

// timed runs r within f.timeout, its answer's body included. A request
// the timeout ends fails with an error wrapping ErrStalled.
func (f *uploadWatch) timed(r *http.Request) (*http.Response, error) {
	ctx, w := stream.Start(r.Context(), f.timeout)
	if sb, ok := r.Body.(writtenBody); ok {
		// A chunk sent while it is written waits on the writer too
		// (Drive, which has its own idle timeout): the clock counts only
		// the time spent on Gmail, so it stops while the body waits for
		// the writer's bytes.
		sb.onWait(func(onWriter bool) {
			if onWriter {
				w.Pause()
			} else {
				w.Resume()
			}
		})
	}
	res, err := f.base.RoundTrip(r.WithContext(ctx))
	if err != nil {
		fired := w.Fired() != nil
		w.Stop()
		if fired {
			return nil, fmt.Errorf("no answer within %s: %w", f.timeout, ErrStalled)
		}
		return nil, err
	}
	res.Body = stream.TimedBody(res.Body, w, func(error) error {
		return fmt.Errorf("answer not read within %s: %w", f.timeout, ErrStalled)
	})
	return res, nil
}
