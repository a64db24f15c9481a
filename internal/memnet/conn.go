package memnet

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// pipe is one direction of a connection: the bytes one end wrote and the
// other has not read yet. Its lock is a channel and its waits are on
// channels, so a goroutine waiting on it is durably blocked in a bubble.
type pipe struct {
	lock    chan struct{} // holding it: a value sent
	changed chan struct{} // closed, and replaced, at each change
	buf     []byte
	eof     bool // the writing end closed: reads drain buf, then io.EOF
	reset   bool // ... and it closed with bytes unread: ECONNRESET, not io.EOF
	gone    bool // the reading end closed: writes fail, buf is dropped
}

func newPipe() *pipe {
	return &pipe{lock: make(chan struct{}, 1), changed: make(chan struct{})}
}

// hold locks p; the caller calls release.
func (p *pipe) hold()    { p.lock <- struct{}{} }
func (p *pipe) release() { <-p.lock }

// wake tells waiters p changed; p is held.
func (p *pipe) wake() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// conn is one end of a connection.
type conn struct {
	in, out       *pipe
	local, remote *net.TCPAddr
	rd, wd        deadline
}

// pair is a connection between a client at local and a server at remote:
// the client's end and the server's.
func pair(local, remote *net.TCPAddr) (client, server *conn) {
	up, down := newPipe(), newPipe()
	client = &conn{in: down, out: up, local: local, remote: remote}
	server = &conn{in: up, out: down, local: remote, remote: local}
	return client, server
}

func (c *conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
}

func (c *conn) Read(b []byte) (int, error) {
	p := c.in
	for {
		if c.rd.passed() {
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		}
		p.hold()
		switch {
		case p.gone:
			p.release()
			return 0, c.opError("read", net.ErrClosed)
		case len(p.buf) > 0:
			n := copy(b, p.buf)
			p.buf = p.buf[n:]
			if len(p.buf) == 0 {
				p.buf = nil
			}
			p.wake()
			p.release()
			return n, nil
		case p.reset:
			p.release()
			return 0, c.opError("read", os.NewSyscallError("read", syscall.ECONNRESET))
		case p.eof:
			p.release()
			return 0, io.EOF
		}
		changed := p.changed
		p.release()
		select {
		case <-changed:
		case <-c.rd.done():
		}
	}
}

func (c *conn) Write(b []byte) (int, error) {
	p := c.out
	n := 0
	for {
		if c.wd.passed() {
			return n, c.opError("write", os.ErrDeadlineExceeded)
		}
		p.hold()
		switch {
		case p.eof:
			p.release()
			return n, c.opError("write", net.ErrClosed)
		case p.gone:
			p.release()
			c.in.resetIfEnded() // bytes sent to a closed end draw an RST
			return n, c.opError("write", os.NewSyscallError("write", syscall.EPIPE))
		case n == len(b):
			p.release()
			return n, nil
		case len(p.buf) < BufferSize:
			k := min(BufferSize-len(p.buf), len(b)-n)
			p.buf = append(p.buf, b[n:n+k]...)
			n += k
			p.wake()
			p.release()
			continue
		}
		changed := p.changed
		p.release()
		select {
		case <-changed:
		case <-c.wd.done():
		}
	}
}

// Close ends both directions: the peer reads what was written, then EOF,
// and its writes fail; this end's reads and writes fail.
func (c *conn) Close() error {
	c.shut()
	return nil
}

// shut closes both directions. An end that closes with bytes unread
// resets the connection, as TCP sends an RST then: the peer reads what
// it was sent, then ECONNRESET rather than EOF.
func (c *conn) shut() {
	unread := c.in.drop()
	c.out.hold()
	c.out.eof, c.out.reset = true, unread
	c.out.wake()
	c.out.release()
}

// CloseWrite ends this end's writing: the peer reads EOF after the bytes
// already written, as after a TCP FIN.
func (c *conn) CloseWrite() error {
	c.out.end()
	return nil
}

// CloseRead ends this end's reading; what the peer writes is dropped with
// an error.
func (c *conn) CloseRead() error {
	c.in.drop()
	return nil
}

// end is the writing end closing p.
func (p *pipe) end() {
	p.hold()
	p.eof = true
	p.wake()
	p.release()
}

// resetIfEnded turns p's end, once its writer closed, into a reset.
func (p *pipe) resetIfEnded() {
	p.hold()
	if p.eof && !p.reset {
		p.reset = true
		p.wake()
	}
	p.release()
}

// drop is the reading end closing p; it reports whether bytes were
// left unread.
func (p *pipe) drop() (unread bool) {
	p.hold()
	unread = len(p.buf) > 0
	p.gone, p.buf = true, nil
	p.wake()
	p.release()
	return unread
}

func (c *conn) LocalAddr() net.Addr  { return c.local }
func (c *conn) RemoteAddr() net.Addr { return c.remote }

func (c *conn) SetDeadline(t time.Time) error {
	c.rd.set(t)
	c.wd.set(t)
	return nil
}

func (c *conn) SetReadDeadline(t time.Time) error  { c.rd.set(t); return nil }
func (c *conn) SetWriteDeadline(t time.Time) error { c.wd.set(t); return nil }

// deadline is a read or write deadline: a channel closed once it passes.
// Its zero value is no deadline.
type deadline struct {
	mu     sync.Mutex
	timer  *time.Timer
	passes chan struct{} // nil: no deadline set yet
}

// set moves the deadline to t; a zero t removes it.
func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && !d.timer.Stop() {
		<-d.passes // the timer fired: wait for it to close the channel
	}
	d.timer = nil
	if d.passes == nil || isClosed(d.passes) {
		d.passes = make(chan struct{})
	}
	if t.IsZero() {
		return
	}
	wait := time.Until(t)
	if wait <= 0 {
		close(d.passes)
		return
	}
	passes := d.passes
	d.timer = time.AfterFunc(wait, func() { close(passes) })
}

// done is closed once the deadline passes; nil (never ready) while none
// is set.
func (d *deadline) done() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.passes
}

func (d *deadline) passed() bool {
	ch := d.done()
	return ch != nil && isClosed(ch)
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
