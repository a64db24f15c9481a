package gmail

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
)

// A chunk that surely does not end the message (AtLeast says the message
// goes past it) is sent while it is written: its request carries the
// chunk's bytes as the writer produces them, and keeps a copy in the
// chunk buffer, so a retry can send them again. So the upload does not
// wait for a whole chunk before its request, and the writer (Drive,
// base64) works while Gmail receives, where a filled chunk would have
// Drive's bytes wait in the transport during each request. Such a
// request never ends the message ("bytes A-B/*"): a writer that fails, or
// ends early, leaves it unfinished, never a truncated message sent.

// streamBody is the body of a chunk sent while it is written: it reads
// the message from src into buf and hands the same bytes on. The
// transport may read it after RoundTrip returns (net/http's RoundTrip
// contract), so every access holds mu, and detach ends the transport's
// part before the chunk is filled for a retry.
type streamBody struct {
	mu       sync.Mutex
	src      io.Reader
	buf      []byte
	n        int   // bytes of buf read from src
	err      error // src's failure, errShort when it ended before buf filled
	detached bool
	sent     func()     // called at the first byte handed on
	wait     func(bool) // called with true when a read waits on src, false when it hands bytes on
}

var errDetached = errors.New("gmail: the chunk's request is over")

func (b *streamBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.detached:
		return 0, errDetached
	case b.n == len(b.buf):
		return 0, io.EOF
	case b.err != nil:
		return 0, b.err
	}
	if b.wait != nil {
		b.wait(true)
		defer b.wait(false)
	}
	k, err := b.src.Read(b.buf[b.n:min(len(b.buf), b.n+len(p))])
	copy(p, b.buf[b.n:b.n+k])
	b.n += k
	if k > 0 && b.sent != nil {
		b.sent()
		b.sent = nil
	}
	switch {
	case err == io.EOF && b.n < len(b.buf):
		b.err = errShort
	case err != nil && err != io.EOF:
		b.err = err
	}
	if b.err != nil {
		return k, b.err
	}
	return k, nil
}

// onSent sets the call made at the first byte handed on; onWait the one
// made when a read begins to wait on src (true) and when it is done
// (false): the time between is the writer's, not Gmail's.
func (b *streamBody) onSent(f func())     { b.mu.Lock(); b.sent = f; b.mu.Unlock() }
func (b *streamBody) onWait(f func(bool)) { b.mu.Lock(); b.wait = f; b.mu.Unlock() }

// Close leaves src open: the message goes on in the next chunk.
func (b *streamBody) Close() error { return nil }

// detach takes the body back from the transport and fills the rest of
// the chunk from src. It returns how many bytes the chunk has, whether
// the message ended inside it, and the writer's failure if it failed.
func (b *streamBody) detach() (n int, ended bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.detached = true
	if b.err == nil && b.n < len(b.buf) {
		k, rerr := io.ReadFull(b.src, b.buf[b.n:])
		b.n += k
		switch {
		case rerr == io.EOF || rerr == io.ErrUnexpectedEOF:
			b.err = errShort
		case rerr != nil:
			b.err = rerr
		}
	}
	if b.err != nil && !errors.Is(b.err, errShort) {
		return b.n, false, b.err
	}
	return b.n, errors.Is(b.err, errShort), nil
}

// stream sends buf's worth of the message from src, at off, while it is
// written. It returns Gmail's answer when the message turned out to end
// inside the chunk (then sent as the last one), ended set; otherwise
// nothing once Gmail holds the chunk, or the failure: the writer's (as
// src gave it), or Gmail's after the chunk's retries (see send).
func (s *session) stream(ctx context.Context, src io.Reader, buf []byte, off int64) (sent Sent, ended bool, err error) {
	body := &streamBody{src: src, buf: buf}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, s.uri, body)
	if err != nil {
		return Sent{}, false, err
	}
	req.ContentLength = int64(len(buf))
	a := s.do(ctx, req, off, int64(len(buf)), -1)
	if r := s.restartAfter(a, false); r != nil {
		return Sent{}, false, r
	}
	if a.err != nil && !a.retry {
		// Gmail refused the chunk: nothing to send again, so no need to
		// wait for the rest of it. (A read the transport may still have
		// under way ends when the upload closes the pipe.)
		return Sent{}, false, a.err
	}
	n, ended, werr := body.detach()
	switch {
	case werr != nil:
		return Sent{}, false, werr
	case ended:
		// Fewer bytes than promised: the last chunk, sent as any other
		// (Gmail skips what the broken request brought).
		sent, err := s.send(ctx, buf[:n], off, true, false)
		return sent, true, err
	case a.err == nil && a.received == off+int64(len(buf)):
		return Sent{}, false, nil
	}
	// A failure that may pass, or Gmail short of the chunk: on from what
	// Gmail holds, as for any chunk.
	_, err = s.send(ctx, buf, off, false, true)
	return Sent{}, false, err
}
