// Package pick is drivemail's page for Google's Picker, which is how a
// user of a drive.file deployment hands files to drivemail: drive_pick
// gives a link to BASE/pick/<ticket> (sealed, bound to the user, single
// use, 15 minutes); opening it spends the ticket and shows a page that
// loads Google's Picker with a token that carries drive.file alone; the
// files the user picks are then the app's to read (the Picker grants
// them to the Cloud project named by the App ID), and the page posts
// their ids back, which drivemail reads again with files.get before it
// says they are ready. Nothing from the page but the ids is trusted.
package pick

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/internal/google"
)

// Default lifetimes: a link drive_pick gives, and the page it opens.
const (
	DefaultTTL     = 15 * time.Minute
	DefaultPageTTL = 15 * time.Minute
)

// Once backs single use, shared by replicas (store.Limits).
type Once interface {
	// UseOnce records the first use of key until expires; a second use
	// is store.ErrUsed.
	UseOnce(ctx context.Context, key string, expires time.Time) error
	// ReleaseOnce forgets key's use, so that it may be used once more.
	ReleaseOnce(ctx context.Context, key string) error
}

// Tokens gives the page's Google token (*googleauth.Service): one that
// carries drive.file alone, and when it expires.
type Tokens interface {
	PickerToken(ctx context.Context, userID string) (string, time.Time, error)
}

// Config configures the pick page.
type Config struct {
	// BaseURL is drivemail's public origin: links are BASE/pick/<ticket>.
	BaseURL *url.URL
	// Secrets seal tickets and page keys (--secret; the first seals).
	Secrets [][]byte
	Once    Once
	Tokens  Tokens
	// Accounts opens the ticket's user's account, whose Drive reads the
	// picked ids again.
	Accounts *account.Door
	// Endpoints locates Google's Picker script and origins (or the
	// emulator's).
	Endpoints google.Endpoints
	// APIKey and AppID are the Picker's developer key and the Cloud
	// project number (--google-api-key, --google-app-id).
	APIKey, AppID string
	// MaxFiles is the most files one pick may choose (setMaxItems): a
	// message's file limit.
	MaxFiles int
	// TTL is how long a link works (DefaultTTL); PageTTL how long the
	// page it opened may post its choice (DefaultPageTTL).
	TTL, PageTTL time.Duration
	Logger       *slog.Logger
	Now          func() time.Time
}

// Service issues pick links and serves the page they open.
type Service struct {
	cfg  Config
	seal *sealer
	csp  string
}

// New checks cfg and returns the service.
func New(cfg Config) (*Service, error) {
	switch {
	case cfg.BaseURL == nil:
		return nil, errors.New("pick: the public base URL is required")
	case cfg.Once == nil || cfg.Tokens == nil || cfg.Accounts == nil:
		return nil, errors.New("pick: a store, the Google tokens and the account door are required")
	case cfg.APIKey == "" || cfg.AppID == "":
		return nil, errors.New("pick: the Picker needs --google-api-key and --google-app-id (see docs/google-cloud-setup.md)")
	case cfg.MaxFiles < 1:
		return nil, errors.New("pick: MaxFiles must be 1 or more")
	}
	seal, err := newSealer(cfg.Secrets)
	if err != nil {
		return nil, err
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.PageTTL <= 0 {
		cfg.PageTTL = DefaultPageTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{cfg: cfg, seal: seal, csp: contentSecurityPolicy(cfg.Endpoints)}, nil
}

// Link is a pick link for one user.
type Link struct {
	URL       string
	ExpiresAt time.Time
	// MaxFiles is the most files the page lets the user choose.
	MaxFiles int
}

// errNoUser: an account with no user id cannot be given a link.
var errNoUser = errors.New("pick: the account names no user")

// Link returns a link for acct's user to choose files with. It writes
// nothing: the ticket is sealed, and only its use is recorded.
func (s *Service) Link(acct *account.Account) (Link, error) {
	if acct == nil || acct.ID() == "" {
		return Link{}, errNoUser
	}
	expires := s.cfg.Now().Add(s.cfg.TTL).Truncate(time.Second)
	tok, err := s.seal.seal(claims{User: acct.ID(), Expires: expires.Unix()}, aadTicket)
	if err != nil {
		return Link{}, err
	}
	u := *s.cfg.BaseURL
	u.Path = "/pick/" + tok
	return Link{URL: u.String(), ExpiresAt: expires, MaxFiles: s.cfg.MaxFiles}, nil
}

// ServeHTTP serves /pick/{ticket}: GET the landing, a form POST its
// button (which spends the ticket and shows the Picker), a JSON POST
// the choice. The route gives the ticket as the path value "ticket".
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tok := r.PathValue("ticket")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.servePage(w, r, tok)
	case http.MethodPost:
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
			s.serveChoice(w, r, tok)
			return
		}
		s.serveOpen(w, r, tok)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "Open this link in a browser.", http.StatusMethodNotAllowed)
	}
}

// ticketKey is the single-use key of a ticket; pageKeyKey that of the
// choice a page posts.
func ticketKey(tok string) string  { return "pick-ticket:" + tok }
func pageKeyKey(tok string) string { return "pick-choice:" + tok }

// noncePlaceholder stands in the policy for each response's nonce.
const noncePlaceholder = "{nonce}"

// contentSecurityPolicy is the page's policy: its own script by nonce
// (added per response), Google's Picker origins for what the Picker
// loads, its own origin for the choice it posts, and nothing else.
func contentSecurityPolicy(e google.Endpoints) string {
	src := e.PickerSources()
	directive := func(name string, own ...string) string {
		list := append(own, src[name]...)
		if len(list) == 0 {
			return name + " 'none'"
		}
		return name + " " + strings.Join(list, " ")
	}
	return strings.Join([]string{
		"default-src 'none'",
		directive("script-src", "'nonce-"+noncePlaceholder+"'"),
		directive("frame-src"),
		directive("connect-src", "'self'"),
		directive("img-src"),
		directive("font-src"),
		directive("style-src", "'unsafe-inline'"),
		directive("form-action"),
		"base-uri 'none'",
		"frame-ancestors 'none'",
	}, "; ")
}

// pageHeaders lock the page down: nothing cached, no framing, a
// referrer that names drivemail's origin alone (strict-origin; see
// docs/security.md: the Picker's API key may be restricted to that
// origin, and the path, which holds the ticket, never leaves), and a
// policy: the Picker's with this response's nonce, or for the landing
// and a problem, no script and a form to drivemail alone.
//
// framed is the page opened inside drivemail's pick view (?in=view),
// whose host's origins are not known here: any page may frame it then.
// That gives a framer nothing: the page is cross-origin to it, and the
// ticket in its URL is the whole capability, which opened in a tab of its
// own gives as much.
func (s *Service) pageHeaders(w http.ResponseWriter, nonce string, picker, framed bool) {
	h := w.Header()
	csp := "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
	if picker {
		csp = strings.Replace(s.csp, noncePlaceholder, nonce, 1)
	}
	if framed {
		csp = strings.Replace(csp, "frame-ancestors 'none'", "frame-ancestors *", 1)
	} else {
		h.Set("X-Frame-Options", "DENY")
	}
	h.Set("Content-Security-Policy", csp)
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "strict-origin")
	h.Set("X-Content-Type-Options", "nosniff")
}

// framedInView reports whether the page was opened inside the pick view.
func framedInView(r *http.Request) bool { return r.URL.Query().Get("in") == "view" }
