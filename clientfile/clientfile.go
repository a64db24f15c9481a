// Package clientfile fetches a file that an MCP client holds and hands to
// a tool as a short-lived signed download URL: ChatGPT's file parameters
// (`_meta["openai/fileParams"]`), {download_url, file_id, mime_type?,
// file_name?}. The URL is untrusted input (the model wrote the call), so
// the fetch is held to a strict policy:
//
//   - https only, on a host of the allowlist (Config.Hosts), at every
//     redirect hop (at most MaxRedirects);
//   - public addresses only (internal/safedial), checked on the address
//     actually dialled, so DNS rebinding cannot reach a private one;
//   - no Authorization header and no cookies: the URL's signature is the
//     only credential, and nothing of the user's goes with it;
//   - the size from Content-Length checked against the caller's limit
//     before any of the body is read, and counted as it streams when the
//     header is absent;
//   - a body that sends nothing for IdleTimeout, or takes longer than
//     MaxDuration of reading in all, fails its reader.
//
// Open returns once the headers are in, with the body unread: the caller
// streams it where it goes (a message, a Drive upload). Failures are
// *Error values whose Failure the caller words for the model.
package clientfile

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/drivemail/drivemail/internal/safedial"
)

// Defaults of Config.
const (
	DefaultHeaderTimeout = 20 * time.Second
	DefaultIdleTimeout   = 30 * time.Second
	DefaultMaxDuration   = 3 * time.Minute
	DefaultMaxRedirects  = 3
	// MaxURLLength bounds a download URL: signed blob URLs run to a few
	// hundred characters.
	MaxURLLength = 4096
)

// DefaultHosts are the hosts ChatGPT's download URLs have been seen on
// (docs/clients.md has the evidence): its file storage
// (files.oaiusercontent.com and regional sdmntpr*.oaiusercontent.com,
// signed Azure blob URLs) and chatgpt.com's own file endpoint
// (/backend-api/estuary/…, UNCERTAIN: seen once, and it may want a
// cookie drivemail never sends, in which case it reads as expired).
var DefaultHosts = []string{"*.oaiusercontent.com", "chatgpt.com"}

// deniedSuffix hosts pages an app writes (ChatGPT's widget sandboxes),
// never a user's file: a wildcard entry does not reach it.
const deniedSuffix = ".web-sandbox.oaiusercontent.com"

// Config tunes a Fetcher.
type Config struct {
	// Hosts is the allowlist: exact host names, or "*.example.com" for
	// any name below example.com. Default DefaultHosts.
	Hosts []string
	// Policy decides which addresses may be dialled; its zero value
	// allows public addresses only. Tests set AllowLoopback.
	Policy safedial.Policy
	// RootCAs replaces the system roots (tests trust their own CA).
	RootCAs *x509.CertPool
	// HeaderTimeout bounds the wait for the response headers, each hop.
	HeaderTimeout time.Duration
	// IdleTimeout fails a body read that gets no byte for this long;
	// MaxDuration fails a body whose reads took longer in all (a trickle).
	// Time the caller spends elsewhere between reads does not count.
	IdleTimeout time.Duration
	MaxDuration time.Duration
	// MaxRedirects bounds the hops after the first request.
	MaxRedirects int
}

// Fetcher opens client files. It is safe for concurrent use.
type Fetcher struct {
	cfg    Config
	hosts  []hostPattern
	client *http.Client
}

// hostPattern is one allowlist entry.
type hostPattern struct {
	host     string // lower case; for a wildcard, the suffix with its dot
	wildcard bool
}

func (p hostPattern) matches(host string) bool {
	if p.wildcard {
		return strings.HasSuffix(host, p.host) && len(host) > len(p.host)
	}
	return host == p.host
}

// ParseHosts reads an allowlist: host names or "*.suffix" entries, in
// any case, without schemes, ports or paths.
func ParseHosts(entries []string) ([]string, error) {
	var out []string
	for _, e := range entries {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		name := strings.TrimPrefix(e, "*.")
		if strings.ContainsAny(name, "/:*@ ") || !strings.Contains(name, ".") && name != "localhost" {
			return nil, fmt.Errorf("clientfile: %q is not a host name or a *.domain pattern", e)
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, errors.New("clientfile: the host allowlist is empty")
	}
	return out, nil
}

// New returns a Fetcher.
func New(cfg Config) (*Fetcher, error) {
	if cfg.Hosts == nil {
		cfg.Hosts = DefaultHosts
	}
	hosts, err := ParseHosts(cfg.Hosts)
	if err != nil {
		return nil, err
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = DefaultHeaderTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxDuration <= 0 {
		cfg.MaxDuration = DefaultMaxDuration
	}
	if cfg.MaxRedirects <= 0 {
		cfg.MaxRedirects = DefaultMaxRedirects
	}
	f := &Fetcher{cfg: cfg}
	for _, h := range hosts {
		if name, ok := strings.CutPrefix(h, "*"); ok {
			f.hosts = append(f.hosts, hostPattern{host: name, wildcard: true})
		} else {
			f.hosts = append(f.hosts, hostPattern{host: h})
		}
	}
	transport := &http.Transport{
		Proxy:                  nil, // a proxy would dial on our behalf, past the address checks
		DialContext:            cfg.Policy.DialContext,
		TLSClientConfig:        &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    cfg.HeaderTimeout,
		ResponseHeaderTimeout:  cfg.HeaderTimeout,
		MaxResponseHeaderBytes: 64 << 10,
		ForceAttemptHTTP2:      true,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        30 * time.Second,
		// The body is counted as it arrives; a gzip layer would make
		// Content-Length say nothing about the bytes the caller gets.
		DisableCompression: true,
	}
	f.client = &http.Client{
		Transport: transport,
		// No Jar: no cookie is ever sent or kept.
		CheckRedirect: f.checkRedirect,
	}
	return f, nil
}

// Hosts is the allowlist in force.
func (f *Fetcher) Hosts() []string {
	out := make([]string, len(f.hosts))
	for i, h := range f.hosts {
		out[i] = h.host
		if h.wildcard {
			out[i] = "*" + h.host
		}
	}
	return out
}

// CheckURL applies the URL rules that need no network: https, a host of
// the allowlist, no credentials in the URL, bounded length.
func (f *Fetcher) CheckURL(raw string) error {
	_, err := f.parse(raw)
	return err
}

func (f *Fetcher) parse(raw string) (*url.URL, error) {
	if len(raw) > MaxURLLength {
		return nil, &Error{Failure: BadURL, detail: fmt.Sprintf("longer than %d characters", MaxURLLength)}
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return nil, &Error{Failure: BadURL, detail: "not an absolute URL"}
	}
	return u, f.checkLocation(u)
}

// checkLocation holds one URL (the first, or a redirect's) to the rules.
func (f *Fetcher) checkLocation(u *url.URL) error {
	switch {
	case !strings.EqualFold(u.Scheme, "https"):
		return &Error{Failure: NotHTTPS}
	case u.User != nil:
		return &Error{Failure: BadURL, detail: "credentials in the URL"}
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if strings.HasSuffix(host, deniedSuffix) {
		return &Error{Failure: HostNotAllowed, Host: host}
	}
	for _, p := range f.hosts {
		if p.matches(host) {
			return nil
		}
	}
	return &Error{Failure: HostNotAllowed, Host: host}
}

func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > f.cfg.MaxRedirects {
		return &Error{Failure: TooManyRedirects}
	}
	if err := f.checkLocation(req.URL); err != nil {
		return err
	}
	// Nothing travels to the next hop but the URL: net/http would copy
	// headers set on the first request; none are set but Accept.
	req.Header.Del("Authorization")
	req.Header.Del("Cookie")
	return nil
}

// File is an opened client file: its headers read, its body not yet.
type File struct {
	// Body streams the file; its reads fail with an *Error past the
	// limit, on a stall or a trickle, and on a body cut short. Close it.
	Body *Body
	// Size is the Content-Length, or -1 when the host sent none.
	Size int64
	// MimeType is the Content-Type's media type, "" when absent or
	// generic (application/octet-stream, binary/octet-stream).
	MimeType string
	// Name is the Content-Disposition file name, "" when absent.
	Name string
}

// Open GETs rawURL and returns once its headers are in. maxBytes is the
// largest body accepted: a Content-Length past it is refused before any
// of the body is read, and a body without one fails its read once it
// passes it. The body's reads stay bound to ctx.
func (f *Fetcher) Open(ctx context.Context, rawURL string, maxBytes int64) (*File, error) {
	u, err := f.parse(rawURL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		cancel(nil)
		return nil, &Error{Failure: BadURL, detail: "cannot be requested"}
	}
	req.Header.Set("Accept", "*/*")
	resp, err := f.client.Do(req)
	if err != nil {
		cancel(nil)
		return nil, requestError(err)
	}
	if err := checkStatus(resp); err != nil {
		resp.Body.Close()
		cancel(nil)
		return nil, err
	}
	file := &File{Size: resp.ContentLength, MimeType: mediaType(resp.Header.Get("Content-Type")), Name: dispositionName(resp.Header.Get("Content-Disposition"))}
	if file.Size > maxBytes {
		resp.Body.Close()
		cancel(nil)
		return nil, &Error{Failure: TooLarge, Size: file.Size, Limit: maxBytes}
	}
	file.Body = newBody(resp.Body, cancel, file.Size, maxBytes, f.cfg.IdleTimeout, f.cfg.MaxDuration)
	return file, nil
}

// checkStatus sorts an answer: 200 goes on; a refusal of the signed URL
// (401, 403, 404, 410) means it expired or was revoked; a redirect that
// was not followed, anything else, is the host's failure.
func checkStatus(resp *http.Response) error {
	switch c := resp.StatusCode; {
	case c == http.StatusOK:
		return nil
	case c == http.StatusUnauthorized || c == http.StatusForbidden || c == http.StatusNotFound || c == http.StatusGone:
		return &Error{Failure: Expired, Status: c}
	case c == http.StatusPartialContent:
		return &Error{Failure: Unavailable, Status: c, detail: "a partial answer to a whole-file request"}
	}
	return &Error{Failure: Unavailable, Status: resp.StatusCode}
}

// requestError sorts a request that got no answer: a policy refusal (at
// a redirect or at the dial), a timeout, or the host's failure.
func requestError(err error) error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	var ae *safedial.AddressError
	if errors.As(err, &ae) {
		return &Error{Failure: PrivateAddress} // which block it is, the policy's log says
	}
	if errors.Is(err, safedial.ErrNoAddress) {
		return &Error{Failure: Unavailable, detail: "the host does not resolve", err: err}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Failure: Stalled, detail: "no answer", err: err}
	}
	return &Error{Failure: Unavailable, err: err}
}

// mediaType is a Content-Type's media type, "" when it says nothing.
func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	switch mt {
	case "application/octet-stream", "binary/octet-stream", "application/x-download", "application/force-download":
		return ""
	}
	return mt
}

// dispositionName is Content-Disposition's file name (filename* or
// filename), "" when absent.
func dispositionName(cd string) string {
	if cd == "" {
		return ""
	}
	_, params, err := mime.ParseMediaType(cd)
	if err != nil {
		return ""
	}
	return params["filename"]
}

// Failure sorts a failed fetch by what the user can do about it.
type Failure int

// The failures.
const (
	// BadURL: not a URL a file can be fetched from.
	BadURL Failure = iota + 1
	// NotHTTPS: a URL, or a redirect, that is not https.
	NotHTTPS
	// HostNotAllowed: a host off the allowlist, at the start or a hop.
	HostNotAllowed
	// PrivateAddress: the host resolves to an address that is not public.
	PrivateAddress
	// TooManyRedirects: more hops than Config.MaxRedirects.
	TooManyRedirects
	// Expired: the host refused the signed URL (401, 403, 404, 410): it
	// expired, or the file was taken back.
	Expired
	// TooLarge: the file is larger than the limit (Size says how large,
	// when the host said so in advance).
	TooLarge
	// Stalled: no byte for IdleTimeout, or no answer in time.
	Stalled
	// TooSlow: the body took longer than MaxDuration to read.
	TooSlow
	// Truncated: the body ended before its Content-Length.
	Truncated
	// Unavailable: any other failure of the host (5xx, a reset).
	Unavailable
)

// Error is a failed fetch. Its text names the failure and, for a host off
// the allowlist, the host: never the URL, whose query is a credential.
type Error struct {
	Failure Failure
	Status  int    // the HTTP status, when one came
	Host    string // HostNotAllowed: the host
	Size    int64  // TooLarge: the announced or counted size
	Limit   int64  // TooLarge: the limit
	detail  string
	err     error
}

func (e *Error) Error() string {
	var s string
	switch e.Failure {
	case BadURL:
		s = "not a download URL"
	case NotHTTPS:
		s = "not an https URL"
	case HostNotAllowed:
		s = "host " + strconv.Quote(e.Host) + " is not on the allowlist"
	case PrivateAddress:
		s = "the host is not on a public address"
	case TooManyRedirects:
		s = "too many redirects"
	case Expired:
		s = "the URL was refused"
	case TooLarge:
		s = fmt.Sprintf("larger than %d bytes", e.Limit)
	case Stalled:
		s = "the host stopped sending"
	case TooSlow:
		s = "the download took too long"
	case Truncated:
		s = "the download ended early"
	default:
		s = "the host failed"
	}
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.detail != "" {
		s += ": " + e.detail
	}
	return "clientfile: " + s
}

func (e *Error) Unwrap() error { return e.err }

// FailureOf is the failure of the *Error in err's chain, or 0.
func FailureOf(err error) Failure {
	var e *Error
	if errors.As(err, &e) {
		return e.Failure
	}
	return 0
}
