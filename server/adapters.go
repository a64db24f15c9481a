package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/tools"
)

// GoogleClients gives the Google-authenticated HTTP client of a user
// (googleauth.Service).
type GoogleClients interface {
	Client(ctx context.Context, userID string) (*http.Client, error)
}

// The tools' Drive and Mail over the caller's own Google token. Errors
// pass through as they are: a lost Google grant is already a refusal
// (googleauth.ErrReconnect), which the tools show as it is.

// userHTTPClient is the Google client of the user in ctx.
func userHTTPClient(ctx context.Context, clients GoogleClients) (*http.Client, error) {
	u, ok := identity.FromContext(ctx)
	if !ok {
		return nil, errors.New("no authenticated user in the request context")
	}
	hc, err := clients.Client(ctx, u.ID)
	if err != nil {
		return nil, fmt.Errorf("google client: %w", err)
	}
	return hc, nil
}

// userDrive is tools.Drive over the caller's own Google token.
type userDrive struct {
	clients   GoogleClients
	endpoints google.Endpoints
	logger    *slog.Logger // for what the operator must fix (a disabled API)
}

func (d userDrive) client(ctx context.Context) (*drive.Client, error) {
	hc, err := userHTTPClient(ctx, d.clients)
	if err != nil {
		return nil, err
	}
	return drive.New(ctx, hc, d.endpoints, drive.WithLogger(d.logger))
}

func (d userDrive) Search(ctx context.Context, q drive.Query) (drive.Page, error) {
	c, err := d.client(ctx)
	if err != nil {
		return drive.Page{}, err
	}
	return c.Search(ctx, q)
}

func (d userDrive) Get(ctx context.Context, ref drive.Ref) (drive.File, error) {
	c, err := d.client(ctx)
	if err != nil {
		return drive.File{}, err
	}
	return c.Get(ctx, ref)
}

// userMail is tools.Mail: compose with the caller's own Google token.
type userMail struct {
	clients GoogleClients
	compose *compose.Service
}

// Send sends with compose. When the user's Google client cannot be had,
// compose never ran, so nothing can have reached Gmail: the error says so
// (refusal.Unsent), and a lost grant keeps its own sentence.
func (m userMail) Send(ctx context.Context, req compose.Request, opts tools.SendOptions) (compose.Result, error) {
	hc, err := userHTTPClient(ctx, m.clients)
	if err != nil {
		return compose.Result{}, &refusal.Unsent{Err: err}
	}
	return m.compose.Send(ctx, hc, req, compose.Options{Draft: opts.Draft, Progress: opts.Progress, ReadMail: opts.ReadMail})
}
