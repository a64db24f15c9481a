package googleauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/store"
)

// sealedToken is the plaintext form of a stored Google token. Its own type
// (rather than oauth2.Token) keeps the stored shape stable.
type sealedToken struct {
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	Expiry       time.Time `json:"expiry"`
}

func fromOAuth2(t *oauth2.Token) sealedToken {
	return sealedToken{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, TokenType: t.TokenType, Expiry: t.Expiry}
}

func (t sealedToken) oauth2() *oauth2.Token {
	return &oauth2.Token{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, TokenType: t.TokenType, Expiry: t.Expiry}
}

// aad binds a sealed token to its user: a ciphertext moved to another
// user's row does not open.
func aad(userID string) []byte { return []byte("drivemail google token v1\x00" + userID) }

func (s *Service) seal(userID string, t sealedToken) (store.GoogleToken, error) {
	plain, err := json.Marshal(t)
	if err != nil {
		return store.GoogleToken{}, fmt.Errorf("seal Google token: %w", err)
	}
	keyID, sealed, err := s.cfg.Keys.Seal(plain, aad(userID))
	if err != nil {
		return store.GoogleToken{}, fmt.Errorf("seal Google token: %w", err)
	}
	return store.GoogleToken{UserID: userID, KeyID: keyID, Ciphertext: sealed}, nil
}

// load reads and opens the user's token; a missing one is ErrReconnect.
func (s *Service) load(ctx context.Context, userID string) (sealedToken, int64, error) {
	row, err := s.cfg.Store.GetGoogleToken(ctx, userID)
	if errors.Is(err, store.ErrNotFound) {
		return sealedToken{}, 0, fmt.Errorf("no Google token stored for this user: %w", ErrReconnect)
	}
	if err != nil {
		return sealedToken{}, 0, fmt.Errorf("load Google token: %w", err)
	}
	if row.Dead {
		//lint:ignore ST1005 "Google" is a name, not a capitalized word
		return sealedToken{}, 0, fmt.Errorf("Google refused this user's grant before: %w", ErrReconnect)
	}
	plain, err := s.cfg.Keys.Open(row.KeyID, row.Ciphertext, aad(userID))
	if err != nil {
		// No key opens it (its --secret was dropped, or the row is damaged):
		// the grant is lost to us, and signing in again replaces the row.
		// The operator learns why here; the user is asked to reconnect.
		s.logger.WarnContext(ctx, "a stored Google token cannot be opened; the user must reconnect", "user", userID, "err", err)
		return sealedToken{}, 0, fmt.Errorf("load Google token: %w: %w", err, ErrReconnect)
	}
	var t sealedToken
	if err := json.Unmarshal(plain, &t); err != nil {
		return sealedToken{}, 0, fmt.Errorf("load Google token: %w", err)
	}
	return t, row.Version, nil
}

// Client returns an *http.Client that calls Google as the user. Its token
// refreshes when it expires, and the refreshed token is stored, so other
// requests and replicas reuse it. A user without a usable grant gets an
// error that errors.Is ErrReconnect, now or on a later request.
func (s *Service) Client(ctx context.Context, userID string) (*http.Client, error) {
	t, _, err := s.load(ctx, userID)
	if err != nil {
		return nil, err
	}
	if t.RefreshToken == "" && !t.Expiry.IsZero() && !s.cfg.Now().Before(t.Expiry) {
		return nil, fmt.Errorf("the stored Google token expired and cannot be refreshed: %w", ErrReconnect)
	}
	src := &persistingSource{s: s, ctx: ctx, userID: userID}
	base := s.cfg.HTTPClient.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	// The guard sits under oauth2.Transport, which adds the token to every
	// request and every redirect hop: it sees each of them.
	return &http.Client{Transport: &oauth2.Transport{
		Source: oauth2.ReuseTokenSource(t.oauth2(), src),
		Base:   s.cfg.Endpoints.GuardToken(base),
	}}, nil
}

// persistingSource refreshes a user's Google token and writes it back.
// oauth2's own refreshing source keeps the new token in memory only.
type persistingSource struct {
	s      *Service
	ctx    context.Context
	userID string
}

// refreshBudget bounds one refresh and its write, detached from the
// caller's cancellation so a token Google already issued is not lost.
const refreshBudget = 30 * time.Second

// minValidity is how long a stored token must still live to be reused.
const minValidity = time.Minute

// Token returns the user's token, refreshed when due. Its errors wrap
// google.ErrNoToken: the request that asked for it is not sent.
func (p *persistingSource) Token() (*oauth2.Token, error) {
	t, err := p.token()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, google.ErrNoToken)
	}
	return t, nil
}

func (p *persistingSource) token() (*oauth2.Token, error) {
	s := p.s
	unlock := s.locks.lock(p.userID)
	defer unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), refreshBudget)
	defer cancel()

	// Another request (or replica) may have refreshed while we waited.
	cur, version, err := s.load(ctx, p.userID)
	if err != nil {
		return nil, err
	}
	if cur.Expiry.After(s.cfg.Now().Add(minValidity)) {
		return cur.oauth2(), nil
	}
	if cur.RefreshToken == "" {
		return nil, fmt.Errorf("the stored Google token has no refresh token: %w", ErrReconnect)
	}
	if err := s.clientRefused(); err != nil {
		return nil, err
	}
	fresh, err := s.oauth.TokenSource(s.clientContext(ctx), &oauth2.Token{RefreshToken: cur.RefreshToken}).Token()
	if err != nil {
		return nil, s.refreshFailed(ctx, p.userID, version, err)
	}
	next := fromOAuth2(fresh)
	if next.RefreshToken == "" {
		next.RefreshToken = cur.RefreshToken // Google usually keeps the refresh token
	}
	sealed, err := s.seal(p.userID, next)
	if err != nil {
		return nil, err
	}
	if _, err := s.cfg.Store.SwapGoogleToken(ctx, sealed, version); err != nil {
		if errors.Is(err, store.ErrConflict) {
			// Another replica refreshed first; theirs is as good as ours.
			if t, _, err := s.load(ctx, p.userID); err == nil {
				return t.oauth2(), nil
			}
			return next.oauth2(), nil
		}
		// Storing failed but the token is valid: use it, say so.
		s.logger.WarnContext(ctx, "could not store a refreshed Google token", "user", p.userID, "err", err)
	}
	return next.oauth2(), nil
}

// refreshFailed handles a refresh Google refused. invalid_grant is final
// (the user revoked access, changed their password, or the grant expired):
// the token is marked dead at once, so neither this request's retries nor
// any replica asks Google again, and the user's drivemail tokens stop
// working until they sign in again. invalid_client is the operator's to
// fix; it is logged once and remembered for a while (see clientRefused).
func (s *Service) refreshFailed(ctx context.Context, userID string, version int64, err error) error {
	var re *oauth2.RetrieveError
	code := ""
	if errors.As(err, &re) {
		code = re.ErrorCode
	}
	err = safeTokenError(err)
	switch code {
	case "invalid_grant":
		switch markErr := s.cfg.Store.MarkGoogleTokenDead(ctx, userID, version); {
		case markErr == nil:
			s.logger.InfoContext(ctx, "Google refused a refresh (invalid_grant); the grant is marked dead until the user signs in again", "user", userID)
		case !errors.Is(markErr, store.ErrConflict): // a conflict: a new sign-in replaced the token
			s.logger.WarnContext(ctx, "could not mark a refused Google grant dead", "user", userID, "err", markErr)
		}
	case "invalid_client", "unauthorized_client":
		s.refuseClient(ctx, code)
		return fmt.Errorf("refresh Google token: %w: %w", err, ErrClientRefused)
	}
	return fmt.Errorf("refresh Google token: %w", err)
}

// ErrClientRefused (via errors.Is) means Google refused drivemail's own
// OAuth client: a wrong --google-client-secret, a deleted or disabled
// client. Only the operator can fix it; retrying does not help.
//
//lint:ignore ST1005 "Google" is a name, not a capitalized word
var ErrClientRefused = errors.New("Google refused drivemail's OAuth client credentials")

// clientRefusedFor is how long a refused client fails refreshes without
// asking Google again: every user's refresh would fail the same way.
const clientRefusedFor = time.Minute

// refuseClient remembers that Google refused the client, and logs it the
// first time in each period. The line names the flags to check and never
// the secret.
func (s *Service) refuseClient(ctx context.Context, code string) {
	s.refusedMu.Lock()
	defer s.refusedMu.Unlock()
	now := s.cfg.Now()
	if now.Before(s.refusedUntil) {
		return
	}
	s.refusedUntil = now.Add(clientRefusedFor)
	s.logger.ErrorContext(ctx, "Google refused drivemail's OAuth client ("+code+"): check --google-client-id and --google-client-secret "+
		"against the OAuth client in Google Cloud (see docs/google-cloud-setup.md); refreshes fail until it is fixed",
		"google_error", code)
}

// clientRefused fails a refresh at once while Google's refusal of the
// client is recent.
func (s *Service) clientRefused() error {
	s.refusedMu.Lock()
	defer s.refusedMu.Unlock()
	if s.cfg.Now().Before(s.refusedUntil) {
		return fmt.Errorf("refresh Google token: not asked, as Google refused the client less than %v ago: %w", clientRefusedFor, ErrClientRefused)
	}
	return nil
}

// userLocks serializes refreshes per user within this process.
type userLocks struct {
	mu    sync.Mutex
	locks map[string]*userLock
}

type userLock struct {
	mu   sync.Mutex
	refs int
}

func newUserLocks() *userLocks { return &userLocks{locks: map[string]*userLock{}} }

// lock takes the user's lock and returns its release; entries are dropped
// when nobody holds or waits for them, so the map stays small.
func (l *userLocks) lock(userID string) func() {
	l.mu.Lock()
	ul := l.locks[userID]
	if ul == nil {
		ul = &userLock{}
		l.locks[userID] = ul
	}
	ul.refs++
	l.mu.Unlock()
	ul.mu.Lock()
	return func() {
		ul.mu.Unlock()
		l.mu.Lock()
		ul.refs--
		if ul.refs == 0 {
			delete(l.locks, userID)
		}
		l.mu.Unlock()
	}
}
