package server

import (
	"context"
	"io"
	"log/slog"

	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/internal/google"
)

// userMailReader is tools.MailReader over the caller's own Google token.
type userMailReader struct {
	clients   GoogleClients
	endpoints google.Endpoints
	logger    *slog.Logger // for what the operator must fix (a disabled API)
}

func (m userMailReader) client(ctx context.Context) (*gmail.Client, error) {
	hc, err := userHTTPClient(ctx, m.clients)
	if err != nil {
		return nil, err
	}
	return gmail.New(ctx, hc, m.endpoints, 0, gmail.WithLogger(m.logger))
}

func (m userMailReader) Search(ctx context.Context, q string, max int, pageToken string) (gmail.Page, error) {
	c, err := m.client(ctx)
	if err != nil {
		return gmail.Page{}, err
	}
	return c.Search(ctx, q, max, pageToken)
}

func (m userMailReader) Message(ctx context.Context, id string) (gmail.Message, error) {
	c, err := m.client(ctx)
	if err != nil {
		return gmail.Message{}, err
	}
	return c.Message(ctx, id, false)
}

func (m userMailReader) OpenAttachment(ctx context.Context, msgID string, a gmail.Attachment) (io.ReadCloser, error) {
	c, err := m.client(ctx)
	if err != nil {
		return nil, err
	}
	return c.OpenAttachment(ctx, msgID, a)
}
