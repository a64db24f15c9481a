// Package gmail sends and drafts messages through Gmail's media upload,
// streaming: the message is written into a pipe while Gmail reads it,
// multipart below one chunk and resumable above. A message whose writer
// fails is never finalized, so nothing is sent.
package gmail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/internal/google"
)

// DefaultChunkSize is the largest upload chunk: the most memory one send
// holds. Each chunk is a round trip to Gmail.
const DefaultChunkSize = 5 << 20

// MultipartMax is the largest message sent in one request (uploadType
// multipart) when its size is expected: Google's upload guides suggest a
// single request for 5 MB or less and a resumable upload above. A
// message of unknown size goes in one request only if it ends within
// its first chunk.
const MultipartMax = 5 << 20

// MaxMessageBytes is Gmail's cap on an uploaded message (the discovery
// document's maxSize for messages.send and drafts.create).
const MaxMessageBytes = 36_700_160

// DefaultChunkTimeout bounds each upload request: a resumable chunk
// (which the Google client then retries), the request that opens the
// session, and a multipart upload. It is generous for one 5 MiB chunk.
const DefaultChunkTimeout = 2 * time.Minute

// Client calls Gmail as one user.
type Client struct {
	http          *http.Client
	endpoints     google.Endpoints
	chunkSize     int
	chunkTimeout  time.Duration
	rateLimitWait time.Duration
	idle          time.Duration // attachment downloads; 0: DefaultIdleTimeout
}

// Option tunes a Client.
type Option func(*Client)

// WithChunkTimeout sets how long one upload request may take before it
// is abandoned (default DefaultChunkTimeout); d <= 0 keeps the default.
// A resumable chunk that times out is retried once by the Google client;
// the session-opening request and a multipart upload are not retried.
// Either way the upload then fails with ErrStalled.
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
	c := &Client{http: httpClient, endpoints: endpoints, chunkSize: chunkSize, chunkTimeout: DefaultChunkTimeout, rateLimitWait: DefaultRateLimitWait}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// ChunkSize is the largest resumable chunk, a multiple of 256 KiB: the
// most memory one upload holds.
func (c *Client) ChunkSize() int { return c.chunkSize }

// UploadOption tunes one Send or CreateDraft.
type UploadOption func(*upload)

// upload is what the options of one upload set.
type upload struct {
	size int64
}

// ExpectedSize says about how large the message will be, at most (0:
// unknown), so that its upload holds no more memory than it needs: a
// message under MultipartMax (and under the chunk size) goes in one
// request with a buffer just larger than it, not a whole chunk; a larger
// one in the fewest chunks of at most ChunkSize, evened out, so a
// 7 MB message takes two chunks of 3.5 MiB instead of 5 MiB and 2 MiB.
// A message that turns out larger is still sent whole, in more chunks.
func ExpectedSize(n int64) UploadOption {
	return func(u *upload) { u.size = n }
}

// chunkFor is the chunk an upload of a message of about size bytes (0:
// unknown) uses: gensupport allocates it whole, and sends the message
// in one request if it ends inside it.
func (c *Client) chunkFor(size int64) int {
	const unit = googleapi.MinUploadChunkSize
	roundUp := func(n int64) int { return int((n + unit - 1) / unit * unit) }
	limit := int64(c.chunkSize)
	switch {
	case size <= 0:
		return c.chunkSize
	case size < min(limit, MultipartMax):
		return roundUp(size + 1) // larger than the message: its end is seen
	}
	n := (size + limit - 1) / limit // the fewest chunks that fit in limit
	if n < 2 {
		n = 2 // resumable: at least two requests
	}
	return roundUp((size + n - 1) / n)
}

func (c *Client) service(ctx context.Context, hc *http.Client) (*gm.UsersService, error) {
	opts := append([]option.ClientOption{option.WithHTTPClient(hc)}, c.endpoints.GmailOptions()...)
	s, err := gm.NewService(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("gmail: new service: %w", err)
	}
	return s.Users, nil
}

// Profile returns the user's Gmail address: the From of what they send.
func (c *Client) Profile(ctx context.Context) (string, error) {
	users, err := c.service(ctx, c.http)
	if err != nil {
		return "", err
	}
	p, err := users.GetProfile("me").Fields("emailAddress").Context(ctx).Do()
	if err != nil {
		return "", wrapErr("getProfile", err)
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
	return c.upload(ctx, "messages.send", write, opts, func(users *gm.UsersService, r io.Reader, opts []googleapi.MediaOption) func() (Sent, error) {
		call := users.Messages.Send("me", &gm.Message{ThreadId: threadID}).
			Fields("id,threadId").Context(ctx).Media(r, opts...)
		return func() (Sent, error) {
			m, err := call.Do()
			if err != nil {
				return Sent{}, err
			}
			return Sent{ID: m.Id, ThreadID: m.ThreadId}, nil
		}
	})
}

// CreateDraft is Send for a draft; it needs the gmail.compose scope.
func (c *Client) CreateDraft(ctx context.Context, threadID string, write WriteFunc, opts ...UploadOption) (Sent, error) {
	return c.upload(ctx, "drafts.create", write, opts, func(users *gm.UsersService, r io.Reader, opts []googleapi.MediaOption) func() (Sent, error) {
		call := users.Drafts.Create("me", &gm.Draft{Message: &gm.Message{ThreadId: threadID}}).
			Context(ctx).Media(r, opts...)
		return func() (Sent, error) {
			d, err := call.Do()
			if err != nil {
				return Sent{}, err
			}
			s := Sent{DraftID: d.Id}
			if d.Message != nil {
				s.ID, s.ThreadID = d.Message.Id, d.Message.ThreadId
			}
			return s, nil
		}
	})
}

// prepareFunc builds the call with Media (which reads the first chunk)
// and returns the function that sends it.
type prepareFunc func(users *gm.UsersService, r io.Reader, opts []googleapi.MediaOption) func() (Sent, error)

// upload runs write into a pipe that the Google client reads. The writer
// goroutine must run before the call is built: Media() reads the first
// chunk itself. Every failure closes the pipe with an error, never with a
// plain Close, which would finalize a truncated message.
func (c *Client) upload(ctx context.Context, op string, write WriteFunc, opts []UploadOption, prepare prepareFunc) (Sent, error) {
	var u upload
	for _, o := range opts {
		o(&u)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	w := &finalWatch{timeout: c.chunkTimeout, throttle: &chunkThrottle{wait: c.rateLimitWait, now: time.Now}}
	hc := *c.http
	w.base = hc.Transport
	if w.base == nil {
		w.base = http.DefaultTransport
	}
	hc.Transport = w
	users, err := c.service(ctx, &hc)
	if err != nil {
		return Sent{}, err
	}

	pr, pw := io.Pipe()
	p := &producer{done: make(chan struct{})}
	go p.run(ctx, pw, write)

	do := prepare(users, &ctxReader{ctx: ctx, r: pr}, []googleapi.MediaOption{
		googleapi.ContentType("message/rfc822"),
		googleapi.ChunkSize(c.chunkFor(u.size)),
		// A chunk that takes longer is cancelled and retried; the retry
		// deadline leaves room for one retry of a chunk that times out.
		googleapi.ChunkTransferTimeout(c.chunkTimeout),
		googleapi.ChunkRetryDeadline(2 * c.chunkTimeout),
	})
	var sent Sent
	// If the writer already failed while the first chunk filled, make no
	// request at all: not even a session is opened.
	if perr, finished := p.result(); !finished || perr == nil {
		sent, err = do()
	}
	// The chunk timeout ends a chunk with context.DeadlineExceeded while
	// the send's own context is still alive.
	stalled := errors.Is(err, ErrStalled) || errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil
	// The writer's verdict counts only if it came before the upload
	// ended: the producer records it before closing the pipe, so a writer
	// failure that ended the upload is visible here. A writer still
	// running is stopped (its pipe closed, its context cancelled, which
	// ends a Drive read it waits on) and what it then returns is ignored.
	perr, finished := p.result()
	pr.CloseWithError(errUploadEnded)
	cancel()
	<-p.done

	switch {
	case finished && perr != nil:
		// The writer failed: the client never saw EOF, so it never sent
		// the final chunk.
		return Sent{}, &WriteError{Err: perr, Contacted: w.contacted.Load()}
	case err != nil:
		e := wrapErr(op, err)
		if stalled {
			e.Err = ErrStalled
		}
		// An HTTP error answer is Gmail saying no. Only a request that
		// carried the end of the message and got no answer at all leaves
		// the outcome unknown; one that found no token never left.
		var ge *googleapi.Error
		e.MaybeSent = w.final.Load() && !errors.As(err, &ge) && !errors.Is(err, google.ErrNoToken)
		// A 200 to the final request is Gmail saying yes; only its body
		// (the ids) was lost.
		if e.MaybeSent && w.finalStatus.Load() == http.StatusOK {
			e.Accepted = true
		}
		return Sent{}, e
	}
	return sent, nil
}

// WriteError is a send abandoned because the message writer failed: the
// upload was never finalized, so nothing was sent.
type WriteError struct {
	Err error
	// Contacted is false when no request reached Gmail at all (the writer
	// failed while the first chunk was still filling), so a retry of the
	// whole send cannot duplicate anything, not even an open session.
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

// finalWatch notes whether a request that could complete the upload (a
// multipart request, or a resumable chunk with its total length) left us:
// before that, a failure provably sent nothing. It also bounds the
// requests the chunk timeout does not cover (the session open and a
// multipart upload) by the same timeout, and stops the client's retries
// of a chunk answered 429 when they cannot help (chunkThrottle).
type finalWatch struct {
	base        http.RoundTripper
	timeout     time.Duration
	throttle    *chunkThrottle
	final       atomic.Bool
	contacted   atomic.Bool
	finalStatus atomic.Int32 // the status of the last final request's answer
}

func (f *finalWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	f.contacted.Store(true)
	cr := r.Header.Get("Content-Range")
	chunk := cr != "" // a resumable chunk, bounded by the client's chunk timeout
	final := r.URL.Query().Get("uploadType") == "multipart" || chunk && !strings.HasSuffix(cr, "/*")
	if final {
		f.final.Store(true)
	}
	var res *http.Response
	var err error
	if chunk || f.timeout <= 0 {
		res, err = f.base.RoundTrip(r)
	} else {
		res, err = f.timed(r)
	}
	if chunk && err == nil && res.StatusCode == http.StatusTooManyRequests {
		// The Google client retries a chunk's 429 until its deadline.
		res, err = f.throttle.check(res)
	}
	if final && err == nil {
		f.finalStatus.Store(int32(res.StatusCode))
	}
	return res, err
}

// errTimedOut cancels a request that took longer than the timeout.
var errTimedOut = errors.New("gmail: request timeout")

// timed runs r within f.timeout, its answer's body included. A request
// the timeout ends fails with an error wrapping ErrStalled.
func (f *finalWatch) timed(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(r.Context())
	t := time.AfterFunc(f.timeout, func() { cancel(errTimedOut) })
	end := func() bool {
		t.Stop()
		timedOut := errors.Is(context.Cause(ctx), errTimedOut)
		cancel(nil)
		return timedOut
	}
	res, err := f.base.RoundTrip(r.WithContext(ctx))
	if err != nil {
		if end() {
			return nil, fmt.Errorf("no answer within %s: %w", f.timeout, ErrStalled)
		}
		return nil, err
	}
	res.Body = &timedBody{rc: res.Body, ctx: ctx, end: end, timeout: f.timeout}
	return res, nil
}

// timedBody is an answer read under finalWatch.timed's clock; Close
// stops the clock.
type timedBody struct {
	rc      io.ReadCloser
	ctx     context.Context
	end     func() bool
	timeout time.Duration
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF && errors.Is(context.Cause(b.ctx), errTimedOut) {
		err = fmt.Errorf("answer not read within %s: %w", b.timeout, ErrStalled)
	}
	return n, err
}

func (b *timedBody) Close() error {
	b.end()
	return b.rc.Close()
}
