// Package clientfiletest stands in for a chat client's file host in
// tests: an HTTPS server with a certificate only the test trusts, whose
// names (*.example.com) resolve to loopback through the Fetcher's test
// policy, on loopback or on an in-memory network (NewHostOn). Nothing
// here is reachable from a server's flags: the loopback, CA and
// connection seams are set only by the Fetcher this package builds.
package clientfiletest

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drivemail/drivemail/clientfile"
	"github.com/drivemail/drivemail/internal/memnet"
	"github.com/drivemail/drivemail/internal/safedial"
)

// PrivateHost resolves to a private address under the test policy: a
// fetch that reaches for it must be refused.
const PrivateHost = "private.example.com"

// Host is a test file host.
type Host struct {
	srv  *httptest.Server
	port string
	net  *memnet.Network // nil: loopback
	mu   sync.Mutex
	// Requests records each request's headers, by path.
	requests []*http.Request
	mux      *http.ServeMux
}

// NewHost starts a file host; handlers are added with Handle.
func NewHost(tb testing.TB) *Host {
	tb.Helper()
	return NewHostOn(tb, nil)
}

// NewHostOn starts a file host on n, an in-memory network, so that a test
// inside a testing/synctest bubble (which starts it there) fetches from
// it in the bubble; the Fetcher of Config connects through n. A nil n is
// NewHost's loopback.
func NewHostOn(tb testing.TB, n *memnet.Network) *Host {
	tb.Helper()
	h := &Host{mux: http.NewServeMux(), net: n}
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.requests = append(h.requests, r.Clone(context.Background()))
		h.mu.Unlock()
		h.mux.ServeHTTP(w, r)
	})
	if n != nil {
		h.srv = n.NewUnstartedServer(record)
		h.srv.StartTLS()
	} else {
		h.srv = httptest.NewTLSServer(record)
	}
	tb.Cleanup(h.srv.Close)
	h.port = h.srv.URL[strings.LastIndex(h.srv.URL, ":")+1:]
	return h
}

// Handle serves path (with a leading /) with fn.
func (h *Host) Handle(path string, fn http.HandlerFunc) { h.mux.HandleFunc(path, fn) }

// URL is https://host:port/path on this server, host any name under
// example.com (files.example.com unless given).
func (h *Host) URL(host, path string) string {
	if host == "" {
		host = "files.example.com"
	}
	return "https://" + host + ":" + h.port + path
}

// Requests returns the requests served so far.
func (h *Host) Requests() []*http.Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*http.Request(nil), h.requests...)
}

// Roots trusts the host's certificate.
func (h *Host) Roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(h.srv.Certificate())
	return p
}

// Config is a Fetcher configuration for this host: the allowlist
// *.example.com, names resolving to loopback (PrivateHost to 10.0.0.5),
// loopback allowed, the host's certificate trusted, short timeouts.
func (h *Host) Config() clientfile.Config {
	cfg := clientfile.Config{
		Hosts: []string{"*.example.com"},
		Policy: safedial.Policy{AllowLoopback: true, LookupNetIP: func(_ context.Context, host string) ([]netip.Addr, error) {
			if host == PrivateHost {
				return []netip.Addr{netip.MustParseAddr("10.0.0.5")}, nil
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}},
		RootCAs:       h.Roots(),
		HeaderTimeout: 5 * time.Second,
		IdleTimeout:   2 * time.Second,
		MaxDuration:   20 * time.Second,
	}
	if h.net != nil {
		cfg.Policy.Connect = h.net.DialContext
	}
	return cfg
}

// Fetcher is a Fetcher with Config, changed by adjust when given.
func (h *Host) Fetcher(tb testing.TB, adjust func(*clientfile.Config)) *clientfile.Fetcher {
	tb.Helper()
	cfg := h.Config()
	if adjust != nil {
		adjust(&cfg)
	}
	f, err := clientfile.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// Serve answers with data, its Content-Length, a type and a file name.
func Serve(data []byte, mimeType, name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", mimeType)
		if name != "" {
			w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		_, _ = w.Write(data)
	}
}
