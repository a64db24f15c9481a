// Package store persists drivemail's authorization state: registered
// clients, pending authorization requests, users and their (encrypted)
// Google tokens, grants with their codes and tokens, single-use keys and
// rate-limit counters.
//
// Every secret a caller hands over as a lookup key (codes, access and
// refresh tokens, authorization request ids, Google state values, nonces)
// is stored only as its SHA-256 hash: a copy of the database does not
// contain a usable drivemail credential. Google tokens arrive already
// sealed by the caller (see oauth/keyring) and are stored as ciphertext.
//
// Implementations: store/sqlite (embedded default) and store/postgres
// (shared by replicas); store/backend opens either from a URL, and
// store/storetest is the conformance suite both pass.
package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"
)

var (
	// ErrNotFound means no live row has that key.
	ErrNotFound = errors.New("store: not found")
	// ErrUsed means a single-use value was presented again. Operations that
	// return it also return the row, so the caller can revoke what it
	// belonged to.
	ErrUsed = errors.New("store: already used")
	// ErrConflict means a compare-and-swap lost to a concurrent writer.
	ErrConflict = errors.New("store: changed concurrently")
	// ErrDuplicate means a row with that key already exists.
	ErrDuplicate = errors.New("store: duplicate key")
)

// Hash is the at-rest form of a secret: hex SHA-256. Stores apply it to
// every key they are given; callers use it for values they compare
// themselves (a browser-binding cookie, a CSRF token, a client secret).
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Client is an OAuth client registered through dynamic client registration.
type Client struct {
	ID           string
	SecretHash   string // Hash of the client secret; empty for public clients
	Name         string
	RedirectURIs []string
	GrantTypes   []string
	AuthMethod   string // token_endpoint_auth_method
	CreatedAt    time.Time
}

// AuthRequest is an authorization request between /oauth/authorize and
// Google's callback: what the MCP client asked for, which browser may
// consent to it, and, once approved, the PKCE verifier we use toward Google.
type AuthRequest struct {
	ClientID       string
	RedirectURI    string
	ClientState    string // the MCP client's state, echoed back verbatim
	CodeChallenge  string // the MCP client's S256 challenge
	Resource       string
	Scope          string
	BrowserHash    string // Hash of the browser-binding cookie
	CSRFHash       string // Hash of the consent form's CSRF token
	Approved       bool
	GoogleVerifier string // PKCE verifier toward Google, set on approval
	ExpiresAt      time.Time
}

// User is a person who signed in with Google.
type User struct {
	ID            string // drivemail's stable id, assigned on first sign-in
	GoogleSubject string // Google's "sub": the account's stable id
	Email         string
	GoogleScopes  []string // the scopes the user actually granted, last time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// GoogleGrantDead reports (on read) that the user's stored Google
	// token is marked dead: the user must sign in again.
	GoogleGrantDead bool
}

// GoogleToken is a user's Google token, sealed by the caller.
type GoogleToken struct {
	UserID     string
	KeyID      string // which key of the ring sealed it
	Ciphertext []byte
	Version    int64 // bumped on every write; the compare-and-swap handle
	UpdatedAt  time.Time
	// Dead is set when Google refused the grant (invalid_grant) or it
	// was revoked there: only a new sign-in (PutGoogleToken) clears it.
	Dead bool
}

// Grant is one consented authorization of one client by one user for one
// resource. Codes and tokens hang off it; revoking it kills them all.
type Grant struct {
	ID        string
	UserID    string
	ClientID  string
	Resource  string
	Scope     string
	CreatedAt time.Time
	Revoked   bool
}

// Code is a single-use authorization code.
type Code struct {
	GrantID       string
	ClientID      string
	UserID        string
	RedirectURI   string
	CodeChallenge string
	Resource      string
	Scope         string
	ExpiresAt     time.Time
	Used          bool
}

// TokenKind tells access tokens from refresh tokens.
type TokenKind string

// The token kinds.
const (
	AccessToken  TokenKind = "access"
	RefreshToken TokenKind = "refresh"
)

// Token is a drivemail access or refresh token.
type Token struct {
	Kind      TokenKind
	GrantID   string
	ClientID  string
	UserID    string
	Resource  string
	Scope     string
	ExpiresAt time.Time
	Used      bool // a refresh token that was already rotated
	// SpentAt is when a used refresh token was rotated, and Reuses how
	// often it was presented again within its grace window since.
	SpentAt time.Time
	Reuses  int
	// Successor is the sealed pair issued when the token was spent; set
	// only by RotateRefreshToken, for a reuse within the grace window.
	Successor Sealed
}

// Sealed is a secret sealed by the caller (see oauth/keyring): the store
// keeps it as ciphertext and never sees the key.
type Sealed struct {
	KeyID      string
	Ciphertext []byte
}

// MaxRefreshGrace is the longest grace window a rotation may ask for. The
// sweeper forgets a spent refresh token's sealed successor this long after
// the token was spent, so the ciphertext does not outlive its use.
const MaxRefreshGrace = time.Hour

// Rotation is what RotateRefreshToken stores in a refresh token's place.
type Rotation struct {
	// Tokens are the new tokens, stored hashed.
	Tokens []NewToken
	// Successor is Tokens' secrets sealed by the caller, kept with the
	// spent token so that a reuse within Grace gets the same pair back.
	// Empty: nothing is kept and no reuse is allowed.
	Successor Sealed
	// Grace is how long after its spending a refresh token may be
	// presented again (at most MaxRefreshGrace), and MaxReuses how often.
	Grace     time.Duration
	MaxReuses int
}

// NewToken is a token issued in place of a spent refresh token.
type NewToken struct {
	Raw       string // the secret; stored as its Hash
	Kind      TokenKind
	ExpiresAt time.Time
}

// Clients stores dynamically registered clients.
type Clients interface {
	// CreateClient stores c; ErrDuplicate if its id exists.
	CreateClient(ctx context.Context, c Client) error
	// GetClient returns the client with that id, or ErrNotFound.
	GetClient(ctx context.Context, id string) (Client, error)
}

// AuthRequests stores authorization requests awaiting consent and Google.
type AuthRequests interface {
	// CreateAuthRequest stores r under the secret id.
	CreateAuthRequest(ctx context.Context, id string, r AuthRequest) error
	// GetAuthRequest returns the live request with that id, or ErrNotFound.
	GetAuthRequest(ctx context.Context, id string) (AuthRequest, error)
	// ApproveAuthRequest records consent once: it attaches the state and
	// PKCE verifier sent to Google. ErrUsed if already approved,
	// ErrNotFound if missing or expired.
	ApproveAuthRequest(ctx context.Context, id, googleState, googleVerifier string) error
	// TakeAuthRequestByState returns and deletes the approved request
	// that Google's state names: a state works once. ErrNotFound otherwise.
	TakeAuthRequestByState(ctx context.Context, googleState string) (AuthRequest, error)
	// DeleteAuthRequest forgets a request (denied or abandoned).
	DeleteAuthRequest(ctx context.Context, id string) error
}

// Users stores users and their sealed Google tokens.
type Users interface {
	// UpsertUser creates the user with u.GoogleSubject or updates its email
	// and scopes, and returns the stored user (with its id).
	UpsertUser(ctx context.Context, u User) (User, error)
	// GetUser returns the user with that id, or ErrNotFound.
	GetUser(ctx context.Context, id string) (User, error)
	// PutGoogleToken stores t for t.UserID whatever was there, and returns
	// the new version.
	PutGoogleToken(ctx context.Context, t GoogleToken) (int64, error)
	// GetGoogleToken returns the user's sealed token, or ErrNotFound.
	GetGoogleToken(ctx context.Context, userID string) (GoogleToken, error)
	// SwapGoogleToken replaces the token only if its version is still
	// version, and returns the new version; ErrConflict if another writer
	// got there first.
	SwapGoogleToken(ctx context.Context, t GoogleToken, version int64) (int64, error)
	// MarkGoogleTokenDead records that Google no longer accepts the
	// user's token, if its version is still version (a sign-in since
	// replaced it otherwise: ErrConflict). ErrNotFound without a token.
	MarkGoogleTokenDead(ctx context.Context, userID string, version int64) error
}

// Grants stores grants and the codes and tokens issued under them.
type Grants interface {
	CreateGrant(ctx context.Context, g Grant) error
	// GetGrant returns the grant (revoked ones too), or ErrNotFound.
	GetGrant(ctx context.Context, id string) (Grant, error)
	// RevokeGrant marks the grant revoked and deletes its codes and tokens.
	RevokeGrant(ctx context.Context, id string) error
	// PutCode stores an authorization code; ErrNotFound if the grant is
	// missing or revoked.
	PutCode(ctx context.Context, code string, c Code) error
	// TakeCode marks the code used and returns it. A code presented twice
	// gives the code and ErrUsed; an unknown one ErrNotFound. The caller
	// checks expiry.
	TakeCode(ctx context.Context, code string) (Code, error)
	// PutToken stores an access or refresh token; ErrNotFound if the grant
	// is missing or revoked (so a token cannot outlive a racing revoke).
	PutToken(ctx context.Context, token string, t Token) error
	// GetToken returns the token, or ErrNotFound. The caller checks kind,
	// expiry and audience.
	GetToken(ctx context.Context, token string) (Token, error)
	// RotateRefreshToken spends the refresh token old and stores r.Tokens
	// in its place, in one transaction: when anything fails nothing is
	// written and old stays unspent, so the client may retry with it. The
	// new tokens inherit old's grant, client, user, resource and scope;
	// old keeps r.Successor. It returns old as it was (Used false).
	// Spent before, at most r.Grace ago, with a successor kept and fewer
	// than r.MaxReuses reuses: it counts the reuse, stores nothing new,
	// and returns old with Used set and its Successor, for the caller to
	// hand back. Spent otherwise: old and ErrUsed. Unknown, not a refresh
	// token, or of a revoked grant: ErrNotFound. The caller checks expiry
	// and client first.
	RotateRefreshToken(ctx context.Context, old string, r Rotation) (Token, error)
	// DeleteToken forgets one token; deleting an unknown one is no error.
	DeleteToken(ctx context.Context, token string) error
	// LiveGrants counts the user's grants that are not revoked and still
	// hold an unexpired code or token.
	LiveGrants(ctx context.Context, userID string) (int, error)
}

// Limits backs single-use keys and rate limits, shared by replicas.
type Limits interface {
	// UseOnce records the first use of key, valid until expires. A second
	// use before then gives ErrUsed.
	UseOnce(ctx context.Context, key string, expires time.Time) error
	// ReleaseOnce forgets the use of key, so that it may be used once
	// more: for a use that turned out to do nothing (an upload refused
	// before anything was stored). A key never used is no error.
	ReleaseOnce(ctx context.Context, key string) error
	// Hit counts one event for key in the current fixed window of the
	// given length and returns the count so far in that window.
	Hit(ctx context.Context, key string, window time.Duration) (int64, error)
}

// Transfer is a file a client uploads through the MCP file-transfer
// draft (SEP-2631): whose its URI is, and, once the upload finished, the
// Drive file it became.
type Transfer struct {
	UserID    string
	FileID    string // "" until the upload finished
	ExpiresAt time.Time
}

// Transfers stores file-transfer URIs, each bound to one user.
type Transfers interface {
	// CreateTransfer stores t under the id (kept as its Hash); ErrDuplicate
	// if the id exists.
	CreateTransfer(ctx context.Context, id string, t Transfer) error
	// CompleteTransfer records the Drive file the upload made. ErrNotFound
	// if the transfer is missing or expired, ErrUsed if it was completed.
	CompleteTransfer(ctx context.Context, id, fileID string) error
	// GetTransfer returns the live transfer, or ErrNotFound.
	GetTransfer(ctx context.Context, id string) (Transfer, error)
}

// Store is everything drivemail persists.
type Store interface {
	Clients
	AuthRequests
	Users
	Grants
	Limits
	Transfers
	// Sweep deletes expired and orphaned rows and reports how many.
	Sweep(ctx context.Context) (int64, error)
	// Ping checks the database is reachable.
	Ping(ctx context.Context) error
	Close() error
}

// Options tune a store.
type Options struct {
	// Now is the clock (default time.Now).
	Now func() time.Time
}
