package core

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// A delayed request's body is read ahead in the background. net/http
// notices a client that goes away (and cancels the request's context)
// only once the body is read to its end: left unread, a delayed upload
// chunk would hold its connection and goroutine for the whole delay after
// the client gave up. Reading ahead sees the end (then the context ends
// with the client) or the connection fail (the client left mid-body).
const (
	delayChunk = 64 << 10
	// delayAhead bounds the bytes read ahead of the handler, above any
	// upload chunk the clients send (Gmail's 5 MiB, Drive's 4 MiB). A
	// longer body's client is noticed leaving only after the delay.
	delayAhead = 8 << 20
)

// sleep waits d, or until ctx ends or gone closes; it reports whether the
// whole delay passed.
func sleep(ctx context.Context, d time.Duration, gone <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-gone:
		return false
	}
}

// hasBody reports whether r has a body worth reading ahead. A client that
// expects 100 Continue sends nothing until the handler reads, and reading
// ahead would answer it before the delay ends.
func hasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 && r.Header.Get("Expect") == ""
}

// bodyPump reads a request body in its own goroutine, at most delayAhead
// bytes ahead of its reader. It stands in for the request's Body; the
// original is read by the pump only, so net/http sees one reader.
type bodyPump struct {
	src    io.Reader
	chunks chan []byte
	cur    []byte
	err    error         // the body's last error; set before chunks closes
	broken chan struct{} // closed when the body failed (not io.EOF)
	closed chan struct{} // closed by Close: nobody reads any more
	once   sync.Once
}

func newBodyPump(src io.Reader) *bodyPump {
	p := &bodyPump{src: src, chunks: make(chan []byte, delayAhead/delayChunk),
		broken: make(chan struct{}), closed: make(chan struct{})}
	go p.run()
	return p
}

// run copies the body into chunks until it ends or fails, or the reader
// closes. A read it is in when the handler returns is ended by net/http,
// which interrupts any body read still running once the handler is done.
func (p *bodyPump) run() {
	for {
		buf := make([]byte, delayChunk)
		n, err := p.src.Read(buf)
		if n > 0 {
			select {
			case p.chunks <- buf[:n]:
			case <-p.closed:
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				close(p.broken)
			}
			p.err = err
			close(p.chunks)
			return
		}
	}
}

// Read returns the body's bytes as the pump read them, then its error.
func (p *bodyPump) Read(b []byte) (int, error) {
	for len(p.cur) == 0 {
		select {
		case c, ok := <-p.chunks:
			if !ok {
				return 0, p.err
			}
			p.cur = c
		case <-p.closed:
			return 0, http.ErrBodyReadAfterClose
		}
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

// Close stops the pump at its next chunk. The request's own body is
// closed by net/http after the handler, as always.
func (p *bodyPump) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}
