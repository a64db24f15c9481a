package google

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// A user's Google token opens their mail and their Drive, so it goes to
// Google's API hosts and nowhere else. This file is the one place that
// decides where it may go; GuardToken enforces it under the transport
// that adds the token, so it holds for every request and for every
// redirect hop (oauth2.Transport adds the header again on each hop) and
// for upload session URLs (a resumable upload's Location gets the token).

// tokenHosts are the hosts that may receive a user's Google token: those
// of the APIs drivemail calls (their discovery documents' rootUrl, which
// is also where upload sessions live) and Google's OAuth hosts, plus the
// hosts Drive's exportLinks name.
var tokenHosts = map[string]bool{
	"www.googleapis.com":           true, // Drive v3, its uploads
	"gmail.googleapis.com":         true, // Gmail v1, its uploads
	"sheets.googleapis.com":        true, // Sheets v4
	"oauth2.googleapis.com":        true, // token and revoke
	"openidconnect.googleapis.com": true, // userinfo
	"docs.google.com":              true, // exportLinks of Docs, Sheets, Slides
	"drive.google.com":             true, // exportLinks of other types
	"drive.usercontent.google.com": true, // files.download's downloadUri
}

// contentHosts are where files.download's operation may send drivemail
// for the bytes (its downloadUri): Google's download hosts, apart from
// the API hosts that merely accept the token.
var contentHosts = map[string]bool{
	"www.googleapis.com":           true,
	"drive.usercontent.google.com": true,
}

// downloadDomains are the domains a host of --download-hosts must be
// under: Google's. The flag lets an operator follow Google to a new
// download host without a release, never send the token elsewhere.
var downloadDomains = []string{".google.com", ".googleapis.com", ".googleusercontent.com"}

// MaxDownloadHosts bounds --download-hosts.
const MaxDownloadHosts = 16

// ParseDownloadHosts reads --download-hosts: comma-separated host names
// (no scheme, port or path) under google.com, googleapis.com or
// googleusercontent.com, at most MaxDownloadHosts; empty is none.
func ParseDownloadHosts(s string) ([]string, error) {
	var hosts []string
	for _, h := range strings.Split(s, ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" {
			continue
		}
		if !isHostName(h) || !underGoogle(h) {
			return nil, fmt.Errorf("%q is not a host name under %s: give Google's download hosts only, comma-separated, such as drive.usercontent.google.com",
				h, strings.Join(downloadDomains, ", "))
		}
		hosts = append(hosts, h)
	}
	if len(hosts) > MaxDownloadHosts {
		return nil, fmt.Errorf("%d download hosts; at most %d: give only the Google hosts files.download names", len(hosts), MaxDownloadHosts)
	}
	return hosts, nil
}

func underGoogle(h string) bool {
	for _, d := range downloadDomains {
		if strings.HasSuffix(h, d) && len(h) > len(d) {
			return true
		}
	}
	return false
}

// isHostName reports a DNS name of letters, digits and hyphens in dotted
// labels, as a URL's host would carry it.
func isHostName(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// extraDownloadHost reports whether u is https, default port, on a host
// of --download-hosts.
func (e Endpoints) extraDownloadHost(u *url.URL) bool {
	return u.Scheme == "https" && (u.Port() == "" || u.Port() == "443") && slices.Contains(e.DownloadHosts, strings.ToLower(u.Hostname()))
}

// ErrTokenHost is the error (via errors.Is) of a request that GuardToken
// stopped because its host may not receive the user's Google token.
var ErrTokenHost = errors.New("this host may not receive the user's Google token")

// TokenHostError names the host a request was stopped for.
type TokenHostError struct {
	Origin string // scheme://host[:port]
}

func (e *TokenHostError) Error() string {
	return "refused to send the Google token to " + e.Origin + ": only Google's API hosts (or --google-endpoint) may receive it"
}

func (e *TokenHostError) Is(target error) bool { return target == ErrTokenHost }

// TokenAllowed reports whether a request to u may carry a user's Google
// token: with an emulator, only its origin may; with Google, only https
// to the hosts above, or to a host of --download-hosts, on the default
// port. Anything else is a
// *TokenHostError naming the origin.
func (e Endpoints) TokenAllowed(u *url.URL) error {
	if u == nil {
		return &TokenHostError{Origin: "(no URL)"}
	}
	if u.User == nil {
		if e.Emulated() {
			if e.sameEmulator(u) {
				return nil
			}
		} else if u.Scheme == "https" && (u.Port() == "" || u.Port() == "443") && tokenHosts[strings.ToLower(u.Hostname())] || e.extraDownloadHost(u) {
			return nil
		}
	}
	return &TokenHostError{Origin: u.Scheme + "://" + u.Host}
}

// ContentURLAllowed reports whether u may be fetched as a download's
// content (files.download's downloadUri): https on Google's download hosts,
// a host of --download-hosts, or a signed *.googleusercontent.com URL, or,
// with an emulator, its own listener. Anything else is a *TokenHostError naming the origin.
func (e Endpoints) ContentURLAllowed(u *url.URL) error {
	if u == nil {
		return &TokenHostError{Origin: "(no URL)"}
	}
	if u.User == nil {
		if e.Emulated() {
			if e.sameEmulator(u) {
				return nil
			}
		} else if u.Scheme == "https" && (u.Port() == "" || u.Port() == "443") &&
			(contentHosts[strings.ToLower(u.Hostname())] || signedContentHost(u)) || e.extraDownloadHost(u) {
			return nil
		}
	}
	return &TokenHostError{Origin: u.Scheme + "://" + u.Host}
}

// sameEmulator reports whether u is on the emulator's origin, or on its
// port under another loopback name: the same listener, which answers
// there as Google's content hosts (a second host name, as Google serves
// content apart from its APIs).
func (e Endpoints) sameEmulator(u *url.URL) bool {
	base, err := url.Parse(e.Base)
	if err != nil || u.Scheme != base.Scheme {
		return false
	}
	if strings.EqualFold(u.Host, base.Host) {
		return true
	}
	return u.Port() != "" && u.Port() == base.Port() && isLoopback(u.Hostname()) && isLoopback(base.Hostname())
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// signedContentHost reports whether u is where Google sends a download
// or export on to (a redirect from docs.google.com or the Drive API to a
// short-lived signed URL on *.googleusercontent.com or
// drive.usercontent.google.com). Such a URL needs no token, so the hop is
// followed without one.
func signedContentHost(u *url.URL) bool {
	if u.Scheme != "https" || u.User != nil || u.Port() != "" && u.Port() != "443" {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return strings.HasSuffix(h, ".googleusercontent.com") || h == "drive.usercontent.google.com"
}

// GuardToken wraps base, the transport under the one that adds a user's
// Google token (oauth2.Transport's Base), so that every request, every
// redirect hop and every upload session URL goes out only if TokenAllowed
// says so. A redirect from Google to its signed content hosts is followed
// without the token; anything else fails before any byte leaves, with a
// *TokenHostError.
func (e Endpoints) GuardToken(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &tokenGuard{base: base, endpoints: e}
}

type tokenGuard struct {
	base      http.RoundTripper
	endpoints Endpoints
}

func (g *tokenGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	err := g.endpoints.TokenAllowed(req.URL)
	if err == nil {
		return g.base.RoundTrip(req)
	}
	// A signed content URL needs no token: Google redirects there, and a
	// downloadUri may name one.
	if !g.endpoints.Emulated() && signedContentHost(req.URL) {
		bare := req.Clone(req.Context())
		bare.Header.Del("Authorization")
		return g.base.RoundTrip(bare)
	}
	if req.Body != nil {
		req.Body.Close() // a RoundTripper closes the body, even on error
	}
	return nil, err
}
