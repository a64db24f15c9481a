// Package memnet is an in-memory network for tests: listeners on made-up
// loopback addresses, and connections between them whose every wait is on
// a channel or a timer. A client and the servers it calls can then run
// inside one testing/synctest bubble, where time moves on only when every
// goroutine waits: an idle timeout or a retry pause passes at once, and a
// stalled server is seen as stalled, never as slow. A real socket would
// not do: a goroutine blocked on it does not let the bubble's clock move.
//
// A connection buffers BufferSize bytes in each direction, as a loopback
// socket's buffers do, so a writer whose reader has stopped blocks, and
// it keeps net.Conn's deadline and close semantics (a timeout is
// os.ErrDeadlineExceeded, a write to a closed peer fails).
package memnet

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// BufferSize is how many written bytes a connection holds unread in each
// direction before a writer waits: about a loopback TCP socket's.
const BufferSize = 256 << 10

// backlog is how many dialled connections wait for Accept.
const backlog = 128

// Network is a set of listeners reached by port; every host name
// resolves to them, as if every name were loopback.
type Network struct {
	mu        sync.Mutex
	listeners map[int]*listener
	nextPort  int
}

// New is an empty network.
func New() *Network {
	return &Network{listeners: map[int]*listener{}, nextPort: 10000}
}

// Listen opens a listener on a new address, 127.0.0.1 and a port of its
// own.
func (n *Network) Listen() net.Listener {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.nextPort++
	l := &listener{n: n, addr: loopback(n.nextPort), queue: make(chan *conn, backlog), done: make(chan struct{})}
	n.listeners[n.nextPort] = l
	return l
}

// DialContext connects to the listener on address's port, as a
// net.Dialer would; with no listener there, the connection is refused.
func (n *Network) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	_, p, err := net.SplitHostPort(address)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	refused := &net.OpError{Op: "dial", Net: network, Addr: loopback(port), Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	n.mu.Lock()
	defer n.mu.Unlock()
	l, ok := n.listeners[port]
	if !ok {
		return nil, refused
	}
	n.nextPort++
	client, server := pair(loopback(n.nextPort), l.addr)
	select {
	case l.queue <- server:
		return client, nil
	default: // a full backlog refuses, as a kernel's may
		return nil, refused
	}
}

// Transport is net/http's default transport, with no proxy and every
// connection dialled on the network.
func (n *Network) Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = n.DialContext
	return t
}

// Client is a client over Transport whose idle connections close as tb
// ends, so that a bubble's goroutines can end with it.
func (n *Network) Client(tb testing.TB) *http.Client {
	t := n.Transport()
	tb.Cleanup(t.CloseIdleConnections)
	return &http.Client{Transport: t}
}

// Serve runs h on the network until tb ends, and returns the server and
// a Client that reaches it.
func (n *Network) Serve(tb testing.TB, h http.Handler) (*httptest.Server, *http.Client) {
	s := n.NewServer(h)
	tb.Cleanup(s.Close)
	return s, n.Client(tb)
}

// NewUnstartedServer is httptest.NewUnstartedServer listening on the
// network: Start or StartTLS it. Reach it through Transport, not the
// server's own Client, which dials real sockets.
func (n *Network) NewUnstartedServer(h http.Handler) *httptest.Server {
	return &httptest.Server{Listener: n.Listen(), Config: &http.Server{Handler: h}}
}

// NewServer is a started NewUnstartedServer.
func (n *Network) NewServer(h http.Handler) *httptest.Server {
	s := n.NewUnstartedServer(h)
	s.Start()
	return s
}

func loopback(port int) *net.TCPAddr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
}

// listener is one address's queue of dialled connections.
type listener struct {
	n     *Network
	addr  *net.TCPAddr
	queue chan *conn
	done  chan struct{}
	once  sync.Once
}

func (l *listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.queue:
		return c, nil
	case <-l.done:
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.addr, Err: net.ErrClosed}
	}
}

// Close stops the listener; the connections it had not accepted are
// closed, so their clients see the connection end.
func (l *listener) Close() error {
	l.once.Do(func() {
		l.n.mu.Lock()
		delete(l.n.listeners, l.addr.Port)
		close(l.done)
		l.n.mu.Unlock()
		for {
			select {
			case c := <-l.queue:
				c.shut()
			default:
				return
			}
		}
	})
	return nil
}

func (l *listener) Addr() net.Addr { return l.addr }
