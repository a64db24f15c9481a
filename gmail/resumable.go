package gmail

//lint:file-ignore ST1005 these errors begin with the names Gmail and Range (the header), which staticcheck takes for capitalized words

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/drivemail/drivemail/internal/google"
)

// Gmail's resumable upload protocol, spoken here rather than through the
// Google client, which opens the session only once a whole first chunk
// is in hand: here the session is opened while the writer is still
// waiting for its first bytes (Drive's time to first byte), so that
// round trip costs a send nothing. The protocol is Google's "resumable
// upload" (developers.google.com/workspace/gmail/api/guides/uploads):
// a POST opens the session and answers its URI in Location; each chunk
// is a PUT with Content-Range, 256 KiB multiples but the last, answered
// 308 with the Range Gmail holds (200 with X-HTTP-Status-Code-Override:
// 308 when asked for no 308s) until the last, which is answered with the
// message; an empty PUT with "bytes */*" asks how far the upload got.

// Retry pacing of a chunk: the first pause, the longest, and how long a
// chunk's tries may go on (measured from its first, and at least twice
// the request timeout, so a request that times out is tried again).
const (
	retryFirstPause = 100 * time.Millisecond
	retryMaxPause   = 10 * time.Second
	maxAnswerBytes  = 1 << 20 // a JSON answer: ids, or an error
)

// errProtocol is an answer the protocol does not allow (a Range outside
// what was sent, a session without a Location): not retried.
var errProtocol = errors.New("unexpected answer from Gmail's upload server")

// errShort is a message that ended before the bytes its writer promised.
var errShort = errors.New("the message ended before the size it was expected to reach")

// Restarts: an upload begins again on a new session at most this many
// times in all, after at least restartPause, doubling, when the session
// ended on a rate limit (Google's guides: back off at least a second);
// after a failure that was not a limit, at least retryFirstPause.
const (
	uploadAttempts = 3
	limitPause     = time.Second
)

// restart is an upload to begin again on a new session, from the
// message's first byte, the writer run again: nothing of it can have
// been sent. cancel says the old session may hold some of the message
// and is cancelled first; wait is the least pause before the new one.
type restart struct {
	err    error
	wait   time.Duration
	cancel bool
}

func (r *restart) Error() string { return r.err.Error() }

func (r *restart) Unwrap() error { return r.err }

// target is what one upload opens: the endpoint (with uploadType) and
// the JSON metadata of the opening request, and how to read the answer
// that completes it; length is the message's exact length, 0 unknown.
type target struct {
	url    string
	meta   []byte
	decode func(body []byte) (Sent, error)
	length int64
}

// session is one resumable upload of a message.
type session struct {
	hc     *http.Client // every request under finalWatch: counted, timed, 429s checked
	uri    string       // the session URI; it carries the upload id, so never in a log or error
	decode func(body []byte) (Sent, error)
	// deadline bounds the tries of one chunk; pause is the first wait.
	deadline time.Duration
	pause    time.Duration

	// finalSent is set once a request that ends the message has left:
	// from then on any request may complete the upload, a status query
	// too (Gmail completes an upload that holds every byte when asked).
	finalSent bool
	// unsettled is set while such a request has had no answer that says
	// whether the upload completed: the message may have been sent. A
	// later answer (the message, how far Gmail got, a refusal) settles it.
	unsettled bool
	// accepted is set when Gmail answered the completing request with
	// 200 but its body (the ids) could not be read, even by asking again.
	accepted bool
	// limited is the last rate limit Gmail answered with, the cause of a
	// restart it leads to.
	limited error
}

// openSession opens a resumable upload of t. A failure here sent nothing:
// the request carries only the metadata, and it is not retried (as the
// Google client does not retry it).
func openSession(ctx context.Context, hc *http.Client, t target, deadline time.Duration) (*session, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(t.meta))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	req.Header.Set("X-Upload-Content-Type", "message/rfc822")
	if t.length > 0 {
		req.Header.Set("X-Upload-Content-Length", strconv.FormatInt(t.length, 10))
	}
	res, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer drain(res)
	if err := googleapi.CheckResponse(res); err != nil {
		return nil, err
	}
	loc, err := req.URL.Parse(res.Header.Get("Location"))
	if err != nil || res.Header.Get("Location") == "" || (loc.Scheme != "https" && loc.Scheme != "http") {
		return nil, fmt.Errorf("session without a usable Location: %w", errProtocol)
	}
	return &session{hc: hc, uri: loc.String(), decode: t.decode, deadline: deadline, pause: retryFirstPause}, nil
}

// answer is what one request on the session came back with.
type answer struct {
	done     bool  // the upload completed: sent is Gmail's answer
	sent     Sent  //
	received int64 // the upload goes on: the bytes Gmail holds
	err      error // the request failed
	retry    bool  // err may pass on another try: a 5xx, 408 or 429 answer, or none at all
	code     int   // the HTTP status of the answer, 0 when none came
	unsent   bool  // the request never left (no token could be had)
	limited  bool  // a rate limit (429, or a 403 rate limit) that may lift
	expired  bool  // a 403 rate limit: the session has ended with it
}

// settles reports whether a says if the upload completed: the message, a
// 308 (how far it got), or a refusal of a chunk. A 5xx does not (Gmail
// may have completed the upload and failed to answer), nor does no
// answer, nor a status query's 404 (a completed session may be gone).
func (a answer) settles(query bool) bool {
	switch {
	case a.done:
		return true
	case a.code == 0 || a.code >= 500:
		return false
	case query:
		return !a.gone()
	}
	return true
}

// gone reports an answer saying the session no longer exists.
func (a answer) gone() bool { return a.code == http.StatusNotFound || a.code == http.StatusGone }

// note records what a, the answer to a request or (query) a status
// query, says of whether the upload completed, once a request that may
// complete it has left: no answer, or a 5xx, leaves it unsettled (the
// message may have been sent); the message, a 308 or a refusal settles
// it. A status query's 404 or 410 says the session is gone, not whether
// it completed, so what was known before it stands: after a refusal
// (Gmail answered the last request with a 429, say) nothing was sent.
func (s *session) note(a answer, query bool) {
	if !s.finalSent || a.unsent || query && a.gone() {
		return
	}
	s.unsettled = !a.settles(query)
}

// restartAfter is the restart a calls for, or nil: a 403 rate limit ends
// the session (Google's upload guides: any 4xx during a resumable upload
// means the session has expired and the upload must begin again), and so
// has a session Gmail no longer knows when asked after a failure; then
// nothing of the message can have been sent, unless a request that may
// have completed it got no answer (unsettled).
func (s *session) restartAfter(a answer, query bool) *restart {
	if a.limited {
		s.limited = a.err
	}
	switch {
	case a.expired:
		return &restart{err: a.err, wait: limitPause}
	case query && a.gone() && !s.unsettled && !s.accepted:
		if s.limited != nil {
			return &restart{err: s.limited, wait: limitPause}
		}
		return &restart{err: a.err, wait: retryFirstPause}
	}
	return nil
}

// isRateLimit reports whether err is a rate limit that may lift: per
// user or per project, not the daily ones.
func isRateLimit(err error) bool {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return false
	}
	switch l, _ := limitOf(ge); l {
	case UserRateLimit, ProjectRateLimit, OtherRateLimit:
		return true
	}
	return false
}

// put sends data, the message's bytes from off, on the session; total is
// the message's whole size when this request ends it, else -1. With no
// data and total -1 it asks how far the upload got.
func (s *session) put(ctx context.Context, data []byte, off, total int64) answer {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, s.uri, bytes.NewReader(data))
	if err != nil {
		return answer{err: err}
	}
	return s.do(ctx, req, off, int64(len(data)), total)
}

// do sends req, a PUT on the session carrying n bytes of the message
// from off (its body), and reads Gmail's answer.
func (s *session) do(ctx context.Context, req *http.Request, off, n, total int64) answer {
	req.ContentLength = n
	req.Header.Set("Content-Range", contentRange(off, n, total))
	req.Header.Set("X-GUploader-No-308", "yes")
	if n > 0 {
		req.Header.Set("Content-Type", "message/rfc822")
	}
	res, err := s.hc.Do(req)
	if err != nil {
		var nr *errNoRetry
		switch {
		case errors.As(err, &nr):
			// Gmail answered 429 for a limit that will not lift in time.
			return answer{err: err, code: nr.ge.Code}
		case errors.Is(err, google.ErrNoToken):
			return answer{err: err, unsent: true}
		case errors.Is(err, google.ErrTokenHost):
			// The session's URI names a host that may not see the
			// token: no try would go out, so none is made.
			return answer{err: err}
		}
		return answer{err: err, retry: ctx.Err() == nil}
	}
	defer drain(res)
	code := res.StatusCode
	if code == http.StatusPermanentRedirect || res.Header.Get("X-Http-Status-Code-Override") == "308" {
		got, err := heldBytes(res.Header.Get("Range"))
		return answer{received: got, err: err, code: http.StatusPermanentRedirect}
	}
	if err := googleapi.CheckResponse(res); err != nil {
		// A 429 is tried again on the session; a 403 rate limit ended it
		// (the transport's chunkThrottle has let through only the limits
		// worth waiting for).
		limited := code == http.StatusTooManyRequests || code == http.StatusForbidden && isRateLimit(err)
		return answer{err: err, code: code, limited: limited, expired: limited && code == http.StatusForbidden,
			retry: code >= 500 || code == http.StatusTooManyRequests || code == http.StatusRequestTimeout}
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes))
	if err != nil {
		// Gmail said 200; only its body, the ids, was lost.
		return answer{done: true, err: err, code: code}
	}
	sent, err := s.decode(body)
	return answer{done: true, sent: sent, err: err, code: code}
}

// contentRange is the header of a request carrying n bytes from off, of
// total in all (-1: not yet known).
func contentRange(off, n, total int64) string {
	size := "*"
	if total >= 0 {
		size = strconv.FormatInt(total, 10)
	}
	if n == 0 {
		return "bytes */" + size
	}
	return fmt.Sprintf("bytes %d-%d/%s", off, off+n-1, size)
}

// heldBytes reads the Range of a 308: "bytes=0-N" when Gmail holds N+1
// bytes, absent when it holds none.
func heldBytes(h string) (int64, error) {
	if h == "" {
		return 0, nil
	}
	first, last, ok := strings.Cut(strings.TrimPrefix(h, "bytes="), "-")
	n, err := strconv.ParseInt(last, 10, 64)
	if !ok || first != "0" || err != nil || n < 0 {
		return 0, fmt.Errorf("Range %q: %w", h, errProtocol)
	}
	return n + 1, nil
}

// send delivers data, the message's bytes from off, as the next chunk;
// final says it ends the message. It returns Gmail's answer once the
// message is complete (final), or nothing once Gmail holds the chunk.
// query starts by asking Gmail how far it got (the chunk's first try
// failed already).
//
// A chunk is tried again only when Gmail's state is known: after a 5xx,
// 408 or 429 answer, or no answer at all, send pauses, asks Gmail how far
// the upload got, and goes on from there: a completed upload is taken as
// sent (its answer is Gmail's own), one short of the end is resumed. So
// a final chunk whose answer was lost is never sent twice, and one with
// no answer and no status either leaves the outcome unknown (unsettled).
func (s *session) send(ctx context.Context, data []byte, off int64, final, query bool) (Sent, error) {
	end := off + int64(len(data))
	total := int64(-1)
	if final {
		total = end
	}
	from := off
	rt := s.retries()
	for stuck := 0; ; {
		var a answer
		if query {
			a = s.put(ctx, nil, 0, -1)
		} else {
			a = s.put(ctx, data[from-off:], from, total)
			s.finalSent = s.finalSent || final && !a.unsent
		}
		s.note(a, query)
		switch {
		case a.done:
			sent, err, again := s.settle(a, !final)
			if again {
				query = true
				continue
			}
			return sent, err
		case a.code == http.StatusPermanentRedirect && a.err != nil:
			return Sent{}, a.err
		case a.err == nil && (a.received < off || a.received > end):
			return Sent{}, fmt.Errorf("Gmail holds %d bytes after a chunk of bytes %d-%d: %w", a.received, off, end, errProtocol)
		case a.err == nil && a.received == end && !final:
			return Sent{}, nil
		case a.err == nil && (query || a.received > from):
			// The rest of the chunk, at once. A request that does not end
			// the message must carry a multiple of 256 KiB: when what is
			// left is not, the whole chunk goes again and Gmail skips the
			// bytes it holds (as the Google client's retries do).
			from, query = a.received, false
			if !final && (end-from)%googleapi.MinUploadChunkSize != 0 {
				from = off
			}
			continue
		case a.err == nil:
			// Gmail took none of the chunk: a failed try.
			stuck++
			a.err, a.retry = fmt.Errorf("Gmail took none of a chunk: %w", errProtocol), stuck < 3
		}
		if err := s.failed(ctx, &rt, a, query); err != nil {
			return Sent{}, err
		}
		query = true
	}
}

// settle reads a, an answer that completed the upload: Gmail's message
// (sent), or a 200 whose body (the ids) was lost, to be asked for again
// (again). early says it came before the request that ends the message
// had left, which the protocol does not allow.
func (s *session) settle(a answer, early bool) (sent Sent, err error, again bool) {
	switch {
	case early:
		s.accepted = true
		return Sent{}, fmt.Errorf("Gmail completed the upload before the message's end was sent: %w", errProtocol), false
	case a.err != nil && !s.accepted:
		s.accepted = true
		return Sent{}, nil, true
	}
	if a.err == nil {
		s.accepted = false
	}
	return a.sent, a.err, false
}

// retries paces the tries of one request: pause is the next wait, and
// no try starts past giveUp.
type retries struct {
	pause  time.Duration
	giveUp time.Time
}

func (s *session) retries() retries {
	return retries{pause: s.pause, giveUp: time.Now().Add(s.deadline)}
}

// failed decides what follows the failed answer a: a restart, the end of
// the upload (its error), or, when the failure may pass and the tries'
// deadline allows, a pause (nil: ask Gmail how far it got, then go on).
func (s *session) failed(ctx context.Context, rt *retries, a answer, query bool) error {
	if r := s.restartAfter(a, query); r != nil {
		return r
	}
	if !a.retry || ctx.Err() != nil || time.Now().Add(rt.pause).After(rt.giveUp) {
		return a.err
	}
	if err := sleep(ctx, jitter(rt.pause)); err != nil {
		return a.err
	}
	rt.pause = min(2*rt.pause, retryMaxPause)
	return nil
}

// cancel ends the session at Gmail (DELETE, answered 499), so an upload
// abandoned before its end leaves nothing open. Best effort: the session
// holds no complete message, and Gmail would expire it anyway.
func (s *session) cancel(ctx context.Context) {
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.uri, nil)
	if err != nil {
		return
	}
	if res, err := s.hc.Do(req); err == nil {
		drain(res)
	}
}

// drain reads what is left of an answer (bounded) and closes it, so the
// connection can be used again.
func drain(res *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxAnswerBytes))
	res.Body.Close()
}

func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// uploadURL is the media upload endpoint of path under the service's
// base URL: upload URLs keep only its origin (as the Google client's do).
func uploadURL(basePath, path string, query url.Values) string {
	return googleapi.ResolveRelative(basePath, path) + "?" + query.Encode()
}

// decodeJSON reads one JSON answer into v.
func decodeJSON(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("reading Gmail's answer: %w", err)
	}
	return nil
}
