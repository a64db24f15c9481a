// Package cimd fetches OAuth client ID metadata documents: a client whose
// client_id is an https URL publishes its metadata at that URL, and the
// authorization server fetches it instead of asking the client to register.
//
// The fetch is a request the server makes to a URL an anonymous caller
// chose, so it is guarded against server-side request forgery: the host is
// resolved first and every address must be public (loopback only in test
// mode), the connection goes to the checked address (a second DNS answer
// cannot swap it), redirects are not followed, and time and size are capped.
package cimd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/drivemail/drivemail/internal/safedial"
)

// Limits and cache bounds.
const (
	DefaultTimeout  = 5 * time.Second
	DefaultMaxBytes = 64 << 10
	MaxURLLength    = 2048
	minTTL          = time.Minute
	defaultTTL      = 5 * time.Minute
	maxTTL          = 24 * time.Hour
	// maxStale is how long the last good copy of a document stands in
	// while its URL fails (404, 503, an HTML page, no answer): published
	// documents have been seen doing each for a while.
	maxStale = 24 * time.Hour
	// failureTTL is how long a failed fetch is remembered: requests
	// for the same URL meanwhile get the same answer without a fetch.
	failureTTL = 30 * time.Second
	maxEntries = 1024
	// DefaultMaxConcurrent bounds fetches in flight: each is a connection
	// an anonymous caller made the server open.
	DefaultMaxConcurrent = 8
)

// Document is the metadata a client publishes (RFC 7591 field names).
type Document struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	ClientURI               string   `json:"client_uri"`
	LogoURI                 string   `json:"logo_uri"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope"`
	// JWKSURI is where a private_key_jwt client publishes its public keys
	// (RFC 7591 §2); Keys fetches it.
	JWKSURI string `json:"jwks_uri"`
}

// Config tunes a Fetcher.
type Config struct {
	// AllowLoopback permits documents on loopback addresses, over https
	// or, on a loopback host, plain http: for tests and `serve --demo`,
	// so the flow can be tried with a document served on the same
	// machine. It never permits private or link-local addresses, nor
	// loopback for a request marked FromRemoteCaller.
	AllowLoopback bool
	// Logger gets a line for each address refused, naming it and its
	// block; the refusal itself names neither (default: no log).
	Logger *slog.Logger
	// RootCAs, when set, replaces the system roots (tests use it to trust
	// an httptest TLS server).
	RootCAs *x509.CertPool
	// Timeout bounds one fetch (default 5 s); MaxBytes bounds the body
	// (default 64 KiB).
	Timeout  time.Duration
	MaxBytes int64
	// MaxConcurrent bounds fetches in flight (default 8); more wait.
	MaxConcurrent int
	// LookupNetIP resolves host names (default net.DefaultResolver).
	LookupNetIP func(ctx context.Context, host string) ([]netip.Addr, error)
	Now         func() time.Time
}

// Fetcher fetches and caches client ID metadata documents.
type Fetcher struct {
	cfg    Config
	policy safedial.Policy
	slots  chan struct{}
	mu     sync.Mutex
	cache  map[string]entry
	keys   keySets // jwks.go
}

// entry is what the cache knows of one URL: its last good document, if
// any, and its last failure, if recent.
type entry struct {
	doc        Document
	good       bool      // doc was fetched and passed the checks
	expires    time.Time // doc is fresh until then
	staleUntil time.Time // doc stands in for a failing URL until then
	failure    *Error    // the last fetch's refusal
	retryAt    time.Time // no fetch of the URL before then
	local      bool      // doc came from a loopback address (AllowLoopback)
}

// New returns a Fetcher.
func New(cfg Config) *Fetcher {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	return &Fetcher{cfg: cfg, policy: safedial.Policy{AllowLoopback: cfg.AllowLoopback, LookupNetIP: cfg.LookupNetIP, Logger: cfg.Logger},
		slots: make(chan struct{}, cfg.MaxConcurrent), cache: map[string]entry{}}
}

// IsURL reports whether a client_id names a metadata document (an https
// URL) rather than a registered client.
func IsURL(clientID string) bool { return strings.HasPrefix(clientID, "https://") }

// IsURL is the package's IsURL, and with AllowLoopback also an http URL
// on a loopback host.
func (f *Fetcher) IsURL(clientID string) bool {
	if IsURL(clientID) {
		return true
	}
	if !f.cfg.AllowLoopback || !strings.HasPrefix(clientID, "http://") {
		return false
	}
	u, err := url.Parse(clientID)
	return err == nil && loopbackHost(u.Hostname())
}

func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// Error is a refusal of a client ID URL or its document; its text is safe
// to show the user, and Server tells whose side it is on.
type Error struct {
	msg  string
	kind errorKind
}

type errorKind int

const (
	// kindDocument: the document could not be had or is not acceptable;
	// the application's publisher must fix it. A last good copy stands in.
	kindDocument errorKind = iota
	// kindAddress: the URL leads where the server must not go. No stale
	// copy stands in: the host may have moved somewhere private.
	kindAddress
	// kindServer: this server declined to fetch now (too many fetches).
	kindServer
)

func (e *Error) Error() string { return e.msg }

// Server reports that drivemail, not the document's publisher, declined:
// the caller may try again shortly.
func (e *Error) Server() bool { return e.kind == kindServer }

func refuse(format string, args ...any) error { return &Error{msg: fmt.Sprintf(format, args...)} }

func refuseAddress(format string, args ...any) error {
	return &Error{msg: fmt.Sprintf(format, args...), kind: kindAddress}
}

// Fetch returns the document at clientID: from the cache while fresh,
// else fetched; when a fetch fails, the last good copy (for up to a day),
// else the refusal, which is remembered for half a minute.
func (f *Fetcher) Fetch(ctx context.Context, clientID string) (Document, error) {
	return f.FetchLimited(ctx, clientID, nil)
}

// FetchLimited is Fetch, but when it would go to the network it first
// asks allow, which may refuse (a rate limit): the refusal is returned as
// the server's own (Error.Server), unless a last good copy stands in.
func (f *Fetcher) FetchLimited(ctx context.Context, clientID string, allow func(context.Context) error) (Document, error) {
	u, err := f.checkURL(clientID)
	if err != nil {
		return Document{}, err
	}
	if err := f.localForRemote(ctx, u.Scheme == "http"); err != nil {
		return Document{}, err
	}
	e, _ := f.lookup(clientID)
	if err := f.localForRemote(ctx, e.good && e.local); err != nil {
		return Document{}, err
	}
	now := f.cfg.Now()
	stale := e.good && now.Before(e.staleUntil)
	switch {
	case e.good && now.Before(e.expires):
		return e.doc, nil
	case e.failure != nil && now.Before(e.retryAt) && stale:
		return e.doc, nil
	case e.failure != nil && now.Before(e.retryAt):
		return Document{}, e.failure
	}
	if allow != nil {
		if err := allow(ctx); err != nil {
			if stale {
				return e.doc, nil
			}
			return Document{}, &Error{msg: err.Error(), kind: kindServer}
		}
	}
	select {
	case f.slots <- struct{}{}:
		defer func() { <-f.slots }()
	case <-ctx.Done():
		return Document{}, &Error{msg: "drivemail is fetching too many client metadata documents at once; try again in a moment", kind: kindServer}
	}
	doc, ttl, local, err := f.fetch(ctx, u)
	if err == nil && doc.ClientID != clientID {
		err = refuse("the client metadata document at %s names client_id %q; it must be exactly its own URL", clientID, clip(doc.ClientID))
	}
	if err != nil {
		var refusal *Error
		if !errors.As(err, &refusal) {
			refusal = &Error{msg: err.Error()}
		}
		// drivemail's own refusals, and an address refused only because
		// this caller is remote, say nothing about the document itself.
		if refusal.kind == kindServer || refusal.kind == kindAddress && isRemote(ctx) && f.cfg.AllowLoopback {
			return Document{}, refusal
		}
		f.remember(clientID, func(e *entry) {
			e.failure, e.retryAt = refusal, now.Add(failureTTL)
			if refusal.kind == kindAddress {
				e.good = false // never again from there
			}
		})
		if stale && refusal.kind == kindDocument {
			return e.doc, nil
		}
		return Document{}, refusal
	}
	f.remember(clientID, func(e *entry) {
		*e = entry{}
		if ttl > 0 { // no-store: no copy at all
			*e = entry{doc: doc, good: true, expires: now.Add(ttl), staleUntil: now.Add(maxStale), local: local}
		}
	})
	return doc, nil
}

// checkURL applies the client ID URL rules: https (or http on a loopback
// host with AllowLoopback), a host, a path beyond "/", no credentials,
// fragment or dot segments.
func (f *Fetcher) checkURL(clientID string) (*url.URL, error) {
	if len(clientID) > MaxURLLength {
		return nil, refuse("the client_id URL is longer than %d characters", MaxURLLength)
	}
	u, err := url.Parse(clientID)
	switch {
	case err != nil:
		return nil, refuse("the client_id %q is not a valid URL", clip(clientID))
	case u.Scheme != "https" && !(u.Scheme == "http" && f.IsURL(clientID)):
		return nil, refuse("a client_id URL must use https")
	case u.Host == "" || u.Hostname() == "":
		return nil, refuse("the client_id URL has no host")
	case u.User != nil:
		return nil, refuse("a client_id URL must not contain credentials")
	case u.Fragment != "" || strings.Contains(clientID, "#"):
		return nil, refuse("a client_id URL must not have a fragment")
	case u.Path == "" || u.Path == "/":
		return nil, refuse("a client_id URL must have a path (for example https://app.example/oauth/client.json)")
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return nil, refuse("a client_id URL must not contain . or .. path segments")
		}
	}
	return u, nil
}

// lookup returns the cache's entry for clientID.
func (f *Fetcher) lookup(clientID string) (entry, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.cache[clientID]
	return e, ok
}

// remember applies change to clientID's entry, making room if needed; an
// entry left with neither a document nor a failure is dropped.
func (f *Fetcher) remember(clientID string, change func(*entry)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.cache[clientID]
	if !ok && len(f.cache) >= maxEntries {
		f.evict()
	}
	change(&e)
	if !e.good && e.failure == nil {
		delete(f.cache, clientID)
		return
	}
	f.cache[clientID] = e
}

// evict drops entries nothing needs any more; if none, the one that
// stops being needed soonest. The caller holds f.mu.
func (f *Fetcher) evict() {
	now := f.cfg.Now()
	until := func(e entry) time.Time {
		if e.good {
			return e.staleUntil
		}
		return e.retryAt
	}
	var soonest string
	for k, e := range f.cache {
		if !now.Before(until(e)) {
			delete(f.cache, k)
		} else if soonest == "" || until(e).Before(until(f.cache[soonest])) {
			soonest = k
		}
	}
	if len(f.cache) >= maxEntries {
		delete(f.cache, soonest)
	}
}

// fetch reads the document at u, and says whether it came from a
// loopback address.
func (f *Fetcher) fetch(ctx context.Context, u *url.URL) (Document, time.Duration, bool, error) {
	body, ttl, local, err := f.fetchJSON(ctx, u, "the client metadata document")
	if err != nil {
		return Document{}, 0, false, err
	}
	var doc Document
	if err := json.Unmarshal(body, &doc); err != nil {
		return Document{}, 0, false, refuse("the client metadata document at %s is not valid JSON", u)
	}
	return doc, ttl, local, nil
}

// fetchJSON resolves, checks and dials the host, and reads a JSON body
// of at most MaxBytes, with how long it may be cached and whether it
// came from a loopback address; what names it in refusals ("the client
// metadata document").
func (f *Fetcher) fetchJSON(ctx context.Context, u *url.URL, what string) ([]byte, time.Duration, bool, error) {
	body, ttl, addr, err := f.fetchFrom(ctx, u, what)
	return body, ttl, err == nil && addr.Unmap().IsLoopback(), err
}

// fetchFrom is fetchJSON, with the address it dialled.
func (f *Fetcher) fetchFrom(ctx context.Context, u *url.URL, what string) ([]byte, time.Duration, netip.Addr, error) {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	addr, err := f.resolve(ctx, u.Hostname())
	if err != nil {
		return nil, 0, addr, err
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	target := net.JoinHostPort(addr.String(), port)
	dialer := &net.Dialer{ControlContext: f.control}
	transport := &http.Transport{
		Proxy: nil, // a proxy would dial on our behalf, past the address checks
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, target)
		},
		TLSClientConfig:        &tls.Config{RootCAs: f.cfg.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    f.cfg.Timeout,
		ResponseHeaderTimeout:  f.cfg.Timeout,
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 16 << 10,
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, 0, addr, refuse("the URL of %s cannot be requested", what)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		// The deadline and the transport's header timeout are the same
		// length: whichever fires first, the document was too slow.
		var ne net.Error
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
			return nil, 0, addr, refuse("%s at %s did not arrive within %v", what, u, f.cfg.Timeout)
		}
		var refused *Error
		if errors.As(err, &refused) {
			return nil, 0, addr, refused
		}
		return nil, 0, addr, refuse("%s at %s could not be fetched", what, u)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return nil, 0, addr, refuse("%s at %s redirects; serve it at its URL itself", what, u)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, 0, addr, refuse("%s at %s answered %s", what, u, resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return nil, 0, addr, refuse("%s at %s is not JSON (Content-Type %q)", what, u, clip(resp.Header.Get("Content-Type")))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.cfg.MaxBytes+1))
	if err != nil {
		return nil, 0, addr, refuse("%s at %s could not be read", what, u)
	}
	if int64(len(body)) > f.cfg.MaxBytes {
		return nil, 0, addr, refuse("%s at %s is larger than %d bytes", what, u, f.cfg.MaxBytes)
	}
	return body, cacheTTL(resp.Header.Get("Cache-Control")), addr, nil
}

// resolve returns the address to dial, refusing a host any of whose
// addresses is not allowed (a mixed answer is an attack or a mistake).
func (f *Fetcher) resolve(ctx context.Context, host string) (netip.Addr, error) {
	addr, err := f.policyFor(ctx).Resolve(ctx, host)
	var ae *safedial.AddressError
	switch {
	case errors.As(err, &ae):
		// Which kind of address it is stays out of the text (the log has
		// it): anyone may send a client_id, and would learn what the
		// server's internal names resolve to.
		return netip.Addr{}, refuseAddress("the client_id host %s does not resolve to a public address; a client metadata document must be on one", clip(host))
	case err != nil:
		return netip.Addr{}, refuse("the client_id host %s does not resolve", clip(host))
	}
	return addr, nil
}

// control re-checks the address actually dialed.
func (f *Fetcher) control(ctx context.Context, network, address string, c syscall.RawConn) error {
	if err := f.policyFor(ctx).ControlContext(ctx, network, address, c); err != nil {
		return refuseAddress("refusing to dial an address that is not public")
	}
	return nil
}

// remoteCaller marks a context whose request comes from another machine.
type remoteCaller struct{}

// FromRemoteCaller marks ctx as serving a caller that is not on this
// machine. With AllowLoopback, loopback documents and key sets are then
// refused to it, as without AllowLoopback: a demo that listens beyond
// loopback must not let others make it fetch from its own machine.
func FromRemoteCaller(ctx context.Context) context.Context {
	return context.WithValue(ctx, remoteCaller{}, true)
}

func isRemote(ctx context.Context) bool { return ctx.Value(remoteCaller{}) != nil }

// policyFor is the address policy for ctx's caller.
func (f *Fetcher) policyFor(ctx context.Context) safedial.Policy {
	p := f.policy
	if isRemote(ctx) {
		p.AllowLoopback = false
	}
	return p
}

// localForRemote refuses what is local (a loopback URL or a cached copy
// from a loopback address) to a remote caller.
func (f *Fetcher) localForRemote(ctx context.Context, local bool) error {
	if local && isRemote(ctx) {
		return refuseAddress("a client metadata document must be on a public address, over https")
	}
	return nil
}

// cacheTTL reads max-age from Cache-Control, bounded to [1 min, 24 h];
// no-store, no-cache or max-age=0 means do not cache; no header, 5 min.
func cacheTTL(header string) time.Duration {
	ttl := defaultTTL
	for _, d := range strings.Split(header, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(strings.ToLower(d)), "=")
		switch name {
		case "no-store", "no-cache":
			return 0
		case "max-age":
			secs, err := time.ParseDuration(strings.Trim(value, `"`) + "s")
			if err != nil {
				continue
			}
			if secs <= 0 {
				return 0
			}
			ttl = min(max(secs, minTTL), maxTTL)
		}
	}
	return ttl
}

// clip shortens a caller-supplied value for an error message.
func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
