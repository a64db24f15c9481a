// Package account is the one door to a signed-in user's Google account:
// who they are (drivemail's user id, their address, the Google scopes
// they granted) and their Google clients (Drive with Sheets, and Gmail),
// made in one place with one set of options.
//
// The server opens an account for each tool call and each upload, once
// the bearer check (or an upload ticket) has said who calls, and hands it
// to the tools, compose and upload, which never read the caller from a
// context. A new client option, scope check or per-user setting belongs
// here, and reaches every caller at once.
package account

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/internal/identity"
)

// Options tune every account's Google clients; zero values are the
// clients' defaults.
type Options struct {
	// Endpoints locates Google (or the emulator).
	Endpoints google.Endpoints
	// DriveIdleTimeout fails a Drive download, export or Range read that
	// gets no byte for this long (drive.DefaultIdleTimeout, 60 s).
	DriveIdleTimeout time.Duration
	// GmailIdleTimeout fails a Gmail attachment download (attachments.get)
	// that gets no byte for this long (gmail.DefaultIdleTimeout, 60 s).
	GmailIdleTimeout time.Duration
	// GmailChunkTimeout bounds each Gmail upload request
	// (gmail.DefaultChunkTimeout, 2 minutes).
	GmailChunkTimeout time.Duration
	// GmailChunkSize is the Gmail upload chunk (gmail.DefaultChunkSize,
	// 5 MiB).
	GmailChunkSize int
	// Logger gets what the operator must fix: an API drivemail's Google
	// Cloud project has not enabled.
	Logger *slog.Logger
}

// Tokens gives the HTTP client that adds a user's Google token, refreshed
// when due: *googleauth.Service. Its errors say why there is none (a lost
// grant is googleauth.ErrReconnect, a refusal the user can act on).
type Tokens interface {
	Client(ctx context.Context, userID string) (*http.Client, error)
}

// Door opens accounts. It is safe for concurrent use.
type Door struct {
	tokens Tokens
	opts   Options
}

// NewDoor returns the door to every user's account over tokens; nil
// tokens open accounts whose Google clients cannot be had.
func NewDoor(tokens Tokens, opts Options) *Door {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Door{tokens: tokens, opts: opts}
}

// Open is the account of u, whom the bearer check or an upload ticket
// vouched for. It asks nothing of the store or of Google: the Google
// clients are made when first needed, so a call refused before it
// reaches Google costs no token read.
func (d *Door) Open(u identity.User) *Account {
	return &Account{user: u, door: d}
}

// OpenID is the account of a user known only by drivemail's id: an
// upload ticket's, which the ticket vouches for.
func (d *Door) OpenID(userID string) *Account { return d.Open(identity.User{ID: userID}) }

// Account is one signed-in user and their Google clients, for the length
// of one tool call or upload. It is safe for concurrent use.
type Account struct {
	user identity.User
	door *Door

	once  sync.Once
	drive *drive.Client
	gmail *gmail.Client
	err   error
}

// ID is drivemail's stable id of the user ("" for an account no one
// signed in to, as in some tests): it keys their limits and caches.
func (a *Account) ID() string { return a.user.ID }

// Email is the Google account's address, "" when unknown.
func (a *Account) Email() string { return a.user.Email }

// Drive is the user's Drive and Sheets client. Its error says why there
// is none: a lost Google grant (googleauth.ErrReconnect), or the store.
func (a *Account) Drive(ctx context.Context) (*drive.Client, error) {
	a.open(ctx)
	return a.drive, a.err
}

// Gmail is the user's Gmail client; its error is Drive's.
func (a *Account) Gmail(ctx context.Context) (*gmail.Client, error) {
	a.open(ctx)
	return a.gmail, a.err
}

// errNoTokens: the door has no source of Google tokens (a wiring
// mistake, or a test that needs no Google).
var errNoTokens = errors.New("account: no Google tokens behind this door")

// open makes the Google clients, once: the one place they are made.
func (a *Account) open(ctx context.Context) {
	a.once.Do(func() {
		if a.door.tokens == nil {
			a.err = errNoTokens
			return
		}
		hc, err := a.door.tokens.Client(ctx, a.user.ID)
		if err != nil {
			a.err = fmt.Errorf("google client: %w", err)
			return
		}
		o := a.door.opts
		if a.drive, err = drive.New(ctx, hc, o.Endpoints, drive.WithIdleTimeout(o.DriveIdleTimeout), drive.WithLogger(o.Logger)); err != nil {
			a.err = err
			return
		}
		a.gmail, a.err = gmail.New(ctx, hc, o.Endpoints, o.GmailChunkSize, gmail.WithChunkTimeout(o.GmailChunkTimeout),
			gmail.WithIdleTimeout(o.GmailIdleTimeout), gmail.WithLogger(o.Logger))
	})
}
