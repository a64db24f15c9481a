// Package googleauth is drivemail's side of Google OAuth: the consent
// redirect, the code exchange with userinfo, sealed storage of each user's
// Google token, and per-user *http.Client values whose tokens refresh and
// persist. Google tokens never leave this package except into Google
// requests: not into logs, errors, or drivemail's own tokens.
package googleauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/oauth/keyring"
	"github.com/drivemail/drivemail/store"
)

// The Google scopes drivemail asks for.
const (
	ScopeOpenID        = "openid"
	ScopeEmail         = "email"
	ScopeUserinfoEmail = "https://www.googleapis.com/auth/userinfo.email"
	ScopeGmailSend     = "https://www.googleapis.com/auth/gmail.send"
	ScopeGmailCompose  = "https://www.googleapis.com/auth/gmail.compose"
	ScopeGmailReadonly = "https://www.googleapis.com/auth/gmail.readonly"
	ScopeDriveReadonly = "https://www.googleapis.com/auth/drive.readonly"
	ScopeDriveFile     = "https://www.googleapis.com/auth/drive.file"
)

// KeyPurpose is the keyring purpose Google tokens are sealed under.
const KeyPurpose = "google-token"

// ErrReconnect is the error (via errors.Is) for a Google grant that is
// missing, expired or revoked: the user must sign in again. It is a
// refusal, so a tool call that meets it shows the user its sentence
// whatever layer it came through.
var ErrReconnect error = refusal.New("reconnect", "Your Google authorization has expired or was revoked; reconnect drivemail (sign in again) to continue.")

// Config configures the Google side.
type Config struct {
	Endpoints    google.Endpoints
	ClientID     string
	ClientSecret string
	// RedirectURL is BASE/oauth/callback, registered with the Google client.
	RedirectURL string
	// Drafts adds gmail.compose to the scopes asked for.
	Drafts bool
	// ReadMail adds gmail.readonly to the scopes asked for: searching
	// mail, replying, forwarding, Gmail attachments.
	ReadMail bool
	// DriveFile asks for drive.file alone (serve --drive-scope file):
	// never drive.readonly, and no scope granted earlier folded in, so
	// drivemail sees only the files the user hands it.
	DriveFile bool
	Store     store.Store
	// Keys seals Google tokens; build it with keyring.New(secrets, KeyPurpose).
	Keys *keyring.Ring
	// HTTPClient makes the token and userinfo calls, and its transport is
	// the base of per-user clients (default: a client with a 30 s timeout
	// over http.DefaultTransport).
	HTTPClient *http.Client
	Logger     *slog.Logger
	Now        func() time.Time
}

// Service is the Google OAuth client and the per-user Google clients.
type Service struct {
	cfg    Config
	oauth  *oauth2.Config
	locks  *userLocks
	logger *slog.Logger

	refusedMu    sync.Mutex
	refusedUntil time.Time // Google refused the client; see refuseClient
}

// New checks cfg and returns the service.
func New(cfg Config) (*Service, error) {
	switch {
	case cfg.ClientID == "" || cfg.ClientSecret == "":
		return nil, errors.New("google oauth: the Google client id and secret are required (--google-client-id, --google-client-secret; see docs/google-cloud-setup.md)")
	case cfg.RedirectURL == "":
		return nil, errors.New("google oauth: the redirect URL is required (BASE/oauth/callback)")
	case cfg.Store == nil || cfg.Keys == nil:
		return nil, errors.New("google oauth: a store and a keyring are required")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Service{cfg: cfg, locks: newUserLocks(), logger: cfg.Logger}
	s.oauth = &oauth2.Config{
		ClientID:     cfg.ClientID,
		ClientSecret: cfg.ClientSecret,
		Endpoint:     cfg.Endpoints.OAuth2(),
		RedirectURL:  cfg.RedirectURL,
		Scopes:       s.Scopes(),
	}
	return s, nil
}

// Scopes are the Google scopes drivemail asks for: in file mode
// (Config.DriveFile) none that Google classes restricted unless drafts
// or reading mail add one.
func (s *Service) Scopes() []string {
	scopes := []string{ScopeOpenID, ScopeEmail, ScopeGmailSend}
	if !s.cfg.DriveFile {
		scopes = append(scopes, ScopeDriveReadonly)
	}
	scopes = append(scopes, ScopeDriveFile)
	if s.cfg.Drafts {
		scopes = append(scopes, ScopeGmailCompose)
	}
	if s.cfg.ReadMail {
		scopes = append(scopes, ScopeGmailReadonly)
	}
	return scopes
}

// ReadMail reports whether reading mail (gmail.readonly) is asked for.
func (s *Service) ReadMail() bool { return s.cfg.ReadMail }

// Drafts reports whether drafts (gmail.compose) are asked for.
func (s *Service) Drafts() bool { return s.cfg.Drafts }

// DriveFile reports whether Drive is asked for as drive.file alone.
func (s *Service) DriveFile() bool { return s.cfg.DriveFile }

// AuthCodeURL is where the browser goes to consent at Google: offline
// access (a refresh token), a fresh consent screen every time (so Google
// issues that refresh token again), and PKCE toward Google too. In
// readonly mode the token also covers what the user granted before
// (include_granted_scopes); in file mode it does not, so a drive.readonly
// granted to this client in another mode does not come back.
func (s *Service) AuthCodeURL(state, verifier string) string {
	opts := []oauth2.AuthCodeOption{
		oauth2.AccessTypeOffline,
		oauth2.SetAuthURLParam("prompt", "consent"),
		oauth2.S256ChallengeOption(verifier),
	}
	if !s.cfg.DriveFile {
		opts = append(opts, oauth2.SetAuthURLParam("include_granted_scopes", "true"))
	}
	return s.oauth.AuthCodeURL(state, opts...)
}

// ConsentOrigin is the origin of Google's consent page (for a page's
// Content-Security-Policy form-action).
func (s *Service) ConsentOrigin() string {
	u, err := url.Parse(s.oauth.Endpoint.AuthURL)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// Grant is what a Google sign-in yields.
type Grant struct {
	Token   *oauth2.Token
	Subject string // Google's stable account id
	Email   string
	Scopes  []string // granted, which may be fewer than asked
}

// Exchange trades Google's authorization code for tokens and identifies
// the account.
func (s *Service) Exchange(ctx context.Context, code, verifier string) (Grant, error) {
	tok, err := s.oauth.Exchange(s.clientContext(ctx), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return Grant{}, fmt.Errorf("exchange Google code: %w", safeTokenError(err))
	}
	return s.GrantForToken(ctx, tok)
}

// GrantForToken identifies the account behind tok (userinfo) and reads the
// granted scopes from the token response. Demo mode uses it for tokens
// minted by the in-process emulator.
func (s *Service) GrantForToken(ctx context.Context, tok *oauth2.Token) (Grant, error) {
	info, err := s.userinfo(ctx, tok)
	if err != nil {
		return Grant{}, err
	}
	scopes := s.Scopes()
	if granted, ok := tok.Extra("scope").(string); ok && granted != "" {
		scopes = normalizeScopes(strings.Fields(granted))
	}
	return Grant{Token: tok, Subject: info.Sub, Email: info.Email, Scopes: scopes}, nil
}

// normalizeScopes writes Google's long name for the email scope the short
// way, so checks need only one spelling; it sorts and deduplicates.
func normalizeScopes(scopes []string) []string {
	out := make([]string, 0, len(scopes))
	for _, sc := range scopes {
		if sc == ScopeUserinfoEmail {
			sc = ScopeEmail
		}
		out = append(out, sc)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

type userinfo struct {
	Sub           string `json:"sub"`
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
}

func (s *Service) userinfo(ctx context.Context, tok *oauth2.Token) (userinfo, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.Endpoints.UserinfoURL(), nil)
	if err != nil {
		return userinfo{}, fmt.Errorf("google userinfo: %w", err)
	}
	tok.SetAuthHeader(req)
	resp, err := s.cfg.HTTPClient.Do(req)
	if err != nil {
		return userinfo{}, fmt.Errorf("google userinfo: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return userinfo{}, fmt.Errorf("google userinfo: Google answered %s", resp.Status)
	}
	var info userinfo
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&info); err != nil {
		return userinfo{}, fmt.Errorf("google userinfo: unreadable answer: %w", err)
	}
	if info.Sub == "" || info.Email == "" {
		return userinfo{}, errors.New("google userinfo: the answer lacks the account id or email (was the email scope granted?)")
	}
	if !info.EmailVerified {
		return userinfo{}, errors.New("google userinfo: the account's email address is not verified")
	}
	return info, nil
}

// SaveGrant records the user (creating it on first sign-in) and stores the
// Google token sealed. A token without a refresh token keeps the one
// already stored.
func (s *Service) SaveGrant(ctx context.Context, g Grant) (store.User, error) {
	if g.Token == nil || g.Token.AccessToken == "" {
		return store.User{}, errors.New("save Google grant: no access token")
	}
	u, err := s.cfg.Store.UpsertUser(ctx, store.User{GoogleSubject: g.Subject, Email: g.Email, GoogleScopes: g.Scopes})
	if err != nil {
		return store.User{}, fmt.Errorf("save Google grant: %w", err)
	}
	tok := fromOAuth2(g.Token)
	if tok.RefreshToken == "" {
		if old, _, err := s.load(ctx, u.ID); err == nil {
			tok.RefreshToken = old.RefreshToken
		}
	}
	sealed, err := s.seal(u.ID, tok)
	if err != nil {
		return store.User{}, err
	}
	if _, err := s.cfg.Store.PutGoogleToken(ctx, sealed); err != nil {
		return store.User{}, fmt.Errorf("save Google grant: %w", err)
	}
	return u, nil
}

// clientContext carries the configured HTTP client into golang.org/x/oauth2.
func (s *Service) clientContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, s.cfg.HTTPClient)
}

// safeTokenError reduces a token-endpoint error to its status and OAuth
// error code: oauth2.RetrieveError's text includes the response body,
// which must not reach a log or a user.
func safeTokenError(err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return err
	}
	status := 0
	if re.Response != nil {
		status = re.Response.StatusCode
	}
	if re.ErrorCode == "invalid_grant" {
		//lint:ignore ST1005 "Google" is a name, not a capitalized word
		return fmt.Errorf("Google answered %d invalid_grant: %w", status, ErrReconnect)
	}
	code := re.ErrorCode
	if code == "" {
		code = "no error code"
	}
	//lint:ignore ST1005 "Google" is a name, not a capitalized word
	return fmt.Errorf("Google answered %d (%s)", status, code)
}
