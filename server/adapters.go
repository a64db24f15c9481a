package server

import (
	"context"
	"errors"
	"io"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/tools"
	"github.com/drivemail/drivemail/upload"
)

// The edge's side of the door to the user's Google account: the caller
// the bearer check let in (the identity it puts in the request's
// context, which only this file and the request log read) becomes their
// account, opened once for each tool call and each direct upload, and
// handed to the tools, compose and upload. Errors from the account's
// clients pass through as they are: a lost Google grant is already a
// refusal (googleauth.ErrReconnect), which the tools show as it is.

// errNoCaller: a request reached a signed-in route without the bearer
// check's identity (a wiring mistake).
var errNoCaller = errors.New("no authenticated user in the request context")

// callerAccount is the account of the caller of the request ctx belongs
// to.
func callerAccount(ctx context.Context, door *account.Door) (*account.Account, error) {
	u, ok := identity.FromContext(ctx)
	if !ok {
		return nil, errNoCaller
	}
	return door.Open(u), nil
}

// accountDrive is tools.Drive over the account's Drive client.
type accountDrive struct{}

func (accountDrive) Search(ctx context.Context, acct *account.Account, q drive.Query) (drive.Page, error) {
	c, err := acct.Drive(ctx)
	if err != nil {
		return drive.Page{}, err
	}
	return c.Search(ctx, q)
}

func (accountDrive) Get(ctx context.Context, acct *account.Account, ref drive.Ref) (drive.File, error) {
	c, err := acct.Drive(ctx)
	if err != nil {
		return drive.File{}, err
	}
	return c.Get(ctx, ref)
}

// accountMail is tools.Mail: compose, from the call's account.
type accountMail struct{ compose *compose.Service }

func (m accountMail) Send(ctx context.Context, acct *account.Account, req compose.Request, opts tools.SendOptions) (compose.Result, error) {
	return m.compose.Send(ctx, acct, req, compose.Options{Draft: opts.Draft, Progress: opts.Progress, ReadMail: opts.ReadMail, Confirm: opts.Confirm})
}

func (m accountMail) SendDraft(ctx context.Context, acct *account.Account, draftID string, confirm func(context.Context, compose.Summary) error) (compose.DraftSent, error) {
	return m.compose.SendDraft(ctx, acct, draftID, confirm)
}

// accountMailReader is tools.MailReader over the account's Gmail client.
type accountMailReader struct{}

func (accountMailReader) Search(ctx context.Context, acct *account.Account, q string, max int, pageToken string) (gmail.Page, error) {
	c, err := acct.Gmail(ctx)
	if err != nil {
		return gmail.Page{}, err
	}
	return c.Search(ctx, q, max, pageToken)
}

func (accountMailReader) Message(ctx context.Context, acct *account.Account, id string) (gmail.Message, error) {
	c, err := acct.Gmail(ctx)
	if err != nil {
		return gmail.Message{}, err
	}
	return c.Message(ctx, id, false)
}

func (accountMailReader) OpenAttachment(ctx context.Context, acct *account.Account, msgID string, a gmail.Attachment) (io.ReadCloser, error) {
	c, err := acct.Gmail(ctx)
	if err != nil {
		return nil, err
	}
	return c.OpenAttachment(ctx, msgID, a)
}

// callerTransfers is the file-transfer methods' Transfers: upload's, for
// the caller of each request.
type callerTransfers struct {
	uploads *upload.Service
	door    *account.Door
}

func (t callerTransfers) PrepareTransfer(ctx context.Context, req upload.TransferRequest) (upload.TransferTicket, error) {
	acct, err := callerAccount(ctx, t.door)
	if err != nil {
		return upload.TransferTicket{}, err
	}
	return t.uploads.PrepareTransfer(ctx, acct, req)
}
