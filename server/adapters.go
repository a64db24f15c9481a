package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/google"
	"github.com/drivemail/drivemail/identity"
	"github.com/drivemail/drivemail/oauth/googleauth"
	"github.com/drivemail/drivemail/tools"
)

// GoogleClients gives the Google-authenticated HTTP client of a user
// (googleauth.Service).
type GoogleClients interface {
	Client(ctx context.Context, userID string) (*http.Client, error)
}

// userHTTPClient is the Google client of the user in ctx.
func userHTTPClient(ctx context.Context, clients GoogleClients) (*http.Client, error) {
	u, ok := identity.FromContext(ctx)
	if !ok {
		return nil, errors.New("no authenticated user in the request context")
	}
	hc, err := clients.Client(ctx, u.ID)
	if err != nil {
		return nil, reconnectRefusal(fmt.Errorf("google client: %w", err))
	}
	return hc, nil
}

// reconnectRefusal shows a lost Google grant to the model as the sentence
// that tells the user to sign in again; other errors pass unchanged.
func reconnectRefusal(err error) error {
	if errors.Is(err, googleauth.ErrReconnect) {
		return &tools.Refusal{Reason: googleauth.ErrReconnect.Error()}
	}
	return err
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
	p, err := c.Search(ctx, q)
	return p, reconnectRefusal(err)
}

func (d userDrive) Get(ctx context.Context, id string) (drive.File, error) {
	c, err := d.client(ctx)
	if err != nil {
		return drive.File{}, err
	}
	f, err := c.Get(ctx, id)
	return f, reconnectRefusal(err)
}

// userMail is tools.Mail: compose with the caller's own Google token.
type userMail struct {
	clients GoogleClients
	compose *compose.Service
}

func (m userMail) Send(ctx context.Context, req compose.Request, opts tools.SendOptions) (compose.Result, error) {
	hc, err := userHTTPClient(ctx, m.clients)
	if err != nil {
		return compose.Result{}, unsent(err)
	}
	res, err := m.compose.Send(ctx, hc, req, compose.Options{Draft: opts.Draft, Progress: opts.Progress})
	return res, sendReconnectRefusal(err, opts.Draft)
}

// sendReconnectRefusal is reconnectRefusal for a send or a draft. A lost
// grant stops each Google request before it leaves (google.ErrNoToken),
// so unless Gmail may already have had the message, nothing went out,
// and the sentence says so.
func sendReconnectRefusal(err error, draft bool) error {
	var ge *gmail.Error
	if !errors.Is(err, googleauth.ErrReconnect) || errors.As(err, &ge) && (ge.MaybeSent || ge.Accepted) {
		return err
	}
	nothing := "Nothing was sent."
	if draft {
		nothing = "Nothing was saved."
	}
	return &tools.Refusal{Reason: googleauth.ErrReconnect.Error() + " " + nothing}
}

// unsent marks a failure before compose ran, when nothing can have
// reached Gmail, so the tools say that a retry cannot send twice. A
// refusal keeps its own sentence.
func unsent(err error) error {
	var r *tools.Refusal
	if errors.As(err, &r) {
		return err
	}
	return &compose.Unsent{Err: err}
}
