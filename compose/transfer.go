package compose

import (
	"context"
	"errors"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/handle"
)

// TransferResolver finds the Drive file behind a file-transfer URI (the
// MCP file-transfer draft) for the signed-in user, acct. Its errors are
// handle.ErrUnknownTransfer (also for another user's URI) and
// handle.ErrTransferPending; *upload.Service satisfies it.
type TransferResolver interface {
	ResolveTransfer(ctx context.Context, acct *account.Account, id string) (drive.Ref, error)
}

// resolveTransfers replaces each file-transfer URI among the attachments
// with the Drive file it became, before validate: from there on it is a
// Drive file like any other. r nil refuses such URIs.
func resolveTransfers(ctx context.Context, r TransferResolver, acct *account.Account, req Request) (Request, error) {
	var out []Attachment
	for i, a := range req.Attachments {
		src, ok := a.Source.(DriveFile)
		if !ok {
			continue
		}
		t, ok := src.Handle.(handle.Transfer)
		if !ok {
			continue
		}
		if out == nil {
			out = append([]Attachment(nil), req.Attachments...)
		}
		ref, err := resolveTransfer(ctx, r, acct, t, i+1)
		if err != nil {
			return req, err
		}
		src.Handle = handle.Upload{Host: t.Host, File: ref}
		out[i].Source = src
	}
	if out != nil {
		req.Attachments = out
	}
	return req, nil
}

func resolveTransfer(ctx context.Context, r TransferResolver, acct *account.Account, t handle.Transfer, index int) (drive.Ref, error) {
	if r == nil {
		return drive.Ref{}, refuse(kindUnknownTransfer, "Attachment %d is a file-transfer URI, which this drivemail server does not take (it runs without --file-transfer). "+
			"Attach the file by its Drive id, or upload it with request_upload and attach the handle that gives.", index)
	}
	ref, err := r.ResolveTransfer(ctx, acct, t.ID)
	switch {
	case errors.Is(err, handle.ErrUnknownTransfer):
		return ref, refuseErr(err, kindUnknownTransfer, "Attachment %d: no file has the URI %s for this sign-in: it was never prepared here, it expired, or it belongs to another account. "+
			"Upload the file again (files/prepareUpload) and pass the URI that gives.", index, t.String())
	case errors.Is(err, handle.ErrTransferPending):
		return ref, refuseErr(err, kindTransferPending, "Attachment %d: the file for %s has not finished uploading (or its upload failed). "+
			"Upload it as the transfer descriptor says, then call again with the same URI.", index, t.String())
	}
	return ref, err
}
