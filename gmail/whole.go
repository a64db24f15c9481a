package gmail

//lint:file-ignore ST1005 these errors begin with the name Gmail, which staticcheck takes for a capitalized word

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// A message whose exact length is known before its first byte (every
// part's size known: Length) goes in one request of that Content-Length
// on the resumable session, streamed as it is written, instead of one
// request per chunk: each chunk is a round trip, and a chunk filled
// before it goes makes the writer and Gmail take turns. The session still
// lets a failure be resumed: a ring keeps the most recent bytes of the
// message (as many as a chunk buffer would hold), and after a failure
// Gmail is asked how far it got; from an offset inside the ring the rest
// goes in a new request, from one before it the upload starts over on a
// new session (restart), the writer run again from its first byte. The
// old session holds an unfinished message, which nothing completes.
//
// The last byte is handed on only once the writer has returned and its
// message turned out exactly that long: a writer that fails, ends short
// or runs long fails the request before its last byte, so Gmail never
// completes a message other than the one announced.

// errLonger is a message that ran past the length it was announced with.
var errLonger = errors.New("the message ran past the length it was announced with")

// ring is the message of one upload attempt as it is read from src, its
// most recent len(buf) bytes kept: bytes [end-len(buf), end) of the
// message are at buf[i % len(buf)]. Requests read it through a wholeBody
// each, one at a time; every access holds mu, since the transport may
// read a request's body after RoundTrip returns.
type ring struct {
	mu    sync.Mutex
	src   io.Reader
	buf   []byte
	total int64 // the message's announced length
	end   int64 // bytes read from src
	eof   bool  // src ended, exactly at total
	err   error // src failed (the writer's error), or its length was not total
}

func newRing(src io.Reader, buf []byte, total int64) *ring {
	return &ring{src: src, buf: buf, total: total}
}

// holds reports whether a request may resume from byte off: it is one
// the ring still has, or the next to read.
func (r *ring) holds(off int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return off <= r.end && off >= r.end-int64(len(r.buf))
}

// failed is src's failure, or the length error, once there is one.
func (r *ring) failed() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// read is how many bytes src has given.
func (r *ring) read() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.end
}

// from returns the body of a request carrying the message from off,
// which the ring must hold.
func (r *ring) from(off int64) *wholeBody { return &wholeBody{r: r, pos: off} }

// fill reads more of the message from src into the ring, at most n
// bytes; at the announced end it reads once more to see src end there.
// r.mu is held.
func (r *ring) fill(n int, wait func(bool)) {
	at := int(r.end % int64(len(r.buf)))
	n = int(min(int64(n), int64(len(r.buf)-at), r.total-r.end))
	if wait != nil {
		wait(true)
		defer wait(false)
	}
	if n > 0 {
		k, err := r.src.Read(r.buf[at : at+n])
		r.end += int64(k)
		switch {
		case err == io.EOF && r.end < r.total:
			r.err = fmt.Errorf("%w: %d of its %d bytes", errShort, r.end, r.total)
		case err != nil && err != io.EOF:
			r.err = err
		}
		if r.err != nil || r.end < r.total {
			return
		}
	}
	var one [1]byte
	for r.err == nil && !r.eof {
		k, err := r.src.Read(one[:])
		switch {
		case k > 0:
			r.err = fmt.Errorf("%w (%d bytes)", errLonger, r.total)
		case err == io.EOF:
			r.eof = true
		case err != nil:
			r.err = err
		}
	}
}

// wholeBody is the body of one request on the session: the message from
// pos to its end, from the ring and then from src as it is written. Its
// last byte is handed on only once src has ended exactly there.
type wholeBody struct {
	r        *ring
	pos      int64
	out      bool // the message's last byte was handed on
	detached bool
	sent     func()     // called at the first byte handed on
	wait     func(bool) // called with true when a read waits on src, false when it is done
}

func (b *wholeBody) Read(p []byte) (int, error) {
	r := b.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if b.detached {
		return 0, errDetached
	}
	for {
		if b.pos == r.total {
			return 0, io.EOF
		}
		limit := r.end
		if !r.eof {
			limit = min(limit, r.total-1) // the last byte waits for src's end
		}
		if b.pos < limit {
			break
		}
		if r.err != nil {
			return 0, r.err
		}
		r.fill(len(p), b.wait)
	}
	limit := r.end
	if !r.eof {
		limit = min(limit, r.total-1)
	}
	n := 0
	for n < len(p) && b.pos < limit {
		at := int(b.pos % int64(len(r.buf)))
		k := copy(p[n:], r.buf[at:min(len(r.buf), at+int(limit-b.pos))])
		n += k
		b.pos += int64(k)
	}
	if b.sent != nil {
		b.sent()
		b.sent = nil
	}
	b.out = b.pos == r.total
	return n, nil
}

// Close leaves src open: a later request may carry the rest.
func (b *wholeBody) Close() error { return nil }

func (b *wholeBody) onSent(f func())     { b.r.mu.Lock(); b.sent = f; b.r.mu.Unlock() }
func (b *wholeBody) onWait(f func(bool)) { b.r.mu.Lock(); b.wait = f; b.r.mu.Unlock() }

// detach takes the body back from the transport and reports whether the
// message's last byte was handed on.
func (b *wholeBody) detach() (out bool) {
	b.r.mu.Lock()
	defer b.r.mu.Unlock()
	b.detached = true
	return b.out
}

// whole sends the message in rg as one request and returns Gmail's
// answer. After a failure that may pass (a 5xx, 408 or 429 answer, or
// none) it pauses, asks Gmail how far the upload got, and sends the rest
// from there when the ring holds it; otherwise it returns a *restart
// (the session to be cancelled). A completed upload is taken as sent, so
// the message never goes twice; one whose last byte left with no answer
// and no status after it is left unsettled (it may have been sent).
// The writer's failure, or a length other than the announced one, is
// returned as rg has it, before the last byte left.
func (s *session) whole(ctx context.Context, rg *ring) (Sent, error) {
	var from int64
	rt := s.retries()
	query := false
	for stuck := 0; ; {
		var a answer
		if query {
			a = s.put(ctx, nil, 0, -1)
		} else {
			a = s.sendFrom(ctx, rg, from)
			if err := rg.failed(); err != nil {
				return Sent{}, err
			}
		}
		s.note(a, query)
		switch {
		case a.done:
			sent, err, again := s.settle(a, !s.finalSent)
			if again {
				query = true
				continue
			}
			return sent, err
		case a.code == http.StatusPermanentRedirect && a.err != nil:
			return Sent{}, a.err
		case a.err == nil && a.received > rg.read():
			return Sent{}, fmt.Errorf("Gmail holds %d bytes of the %d sent: %w", a.received, rg.read(), errProtocol)
		case a.err == nil && !query && a.received <= from:
			stuck++ // the request went whole, yet Gmail took none of it
			a.err, a.retry = fmt.Errorf("Gmail took none of the message: %w", errProtocol), stuck < 3
		case a.err == nil && !rg.holds(a.received):
			return Sent{}, &restart{err: fmt.Errorf("Gmail holds %d bytes, before the %d kept for a resume", a.received, len(rg.buf)), cancel: true}
		case a.err == nil:
			from, query = a.received, false // the rest, at once
			continue
		}
		if err := s.failed(ctx, &rt, a, query); err != nil {
			return Sent{}, err
		}
		query = true
	}
}

// sendFrom sends the message from off to its end in one request and
// records whether its last byte left.
func (s *session) sendFrom(ctx context.Context, rg *ring, off int64) answer {
	body := rg.from(off)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, s.uri, body)
	if err != nil {
		return answer{err: err}
	}
	a := s.do(ctx, req, off, rg.total-off, rg.total)
	if body.detach() && !a.unsent {
		s.finalSent = true
	}
	return a
}
