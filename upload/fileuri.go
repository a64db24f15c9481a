package upload

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/store"
)

// The MCP file-transfer draft (SEP-2631): a client asks for an upload
// (files/prepareUpload, files/authorizeUpload), gets a file URI and a
// descriptor of where to send the bytes, uploads out of band, and passes
// the URI to a tool. Here the descriptor is an ordinary single-use ticket
// for /upload/<ticket>, and the URI (handle.Transfer) is a store record
// bound to the user that learns its Drive file when the upload finishes.

// DefaultTransferTTL is how long a file-transfer URI can be used: long
// enough for a conversation to come back to the file.
const DefaultTransferTTL = 24 * time.Hour

// Transfers is what file-transfer URIs need of the store; store.Store
// satisfies it.
type Transfers = store.Transfers

// TransferRequest is what a client says of the file it will upload: the
// draft's name, mimeType, size and (later revisions) digest.
type TransferRequest struct {
	Name     string
	MimeType string
	Size     *int64 // nil when not said
	SHA256   string // hex; "" when not said
}

// TransferTicket is the answer: the file's URI and where its bytes go.
type TransferTicket struct {
	URI       string
	Name      string
	MimeType  string
	Size      *int64
	UploadURL string
	// Token is the ticket again, for the multipart form's token field the
	// draft's descriptor shows; the URL alone carries it too.
	Token     string
	ExpiresAt time.Time
}

// PrepareTransfer issues a file-transfer URI and a single-use upload
// ticket for acct, the caller. Refusals are *Error.
func (s *Service) PrepareTransfer(ctx context.Context, acct *account.Account, req TransferRequest) (TransferTicket, error) {
	if s.cfg.Transfers == nil {
		return TransferTicket{}, refuse(http.StatusNotImplemented, kindTransfersOff, "This drivemail server does not take file transfers (it runs without --file-transfer).")
	}
	if err := checkScopes(acct); err != nil {
		return TransferTicket{}, err
	}
	c, err := s.claimsFor(Request{Name: req.Name, MimeType: req.MimeType, Size: req.Size, SHA256: req.SHA256})
	if err != nil {
		return TransferTicket{}, err
	}
	c.User = acct.ID()
	if err := s.rateLimit(ctx, "upload-ticket", acct.ID(), 2*s.cfg.RatePerWindow); err != nil {
		return TransferTicket{}, err
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return TransferTicket{}, fmt.Errorf("upload: transfer id: %w", err)
	}
	id := base64.RawURLEncoding.EncodeToString(raw[:])
	now := s.cfg.Now()
	if err := s.cfg.Transfers.CreateTransfer(ctx, id, store.Transfer{UserID: acct.ID(), ExpiresAt: now.Add(s.cfg.TransferTTL)}); err != nil {
		return TransferTicket{}, fmt.Errorf("upload: store transfer: %w", err)
	}
	c.Transfer = id
	exp := now.Add(s.cfg.TicketTTL).Truncate(time.Second)
	c.Expires = exp.Unix()
	tok, err := s.signer.sign(c)
	if err != nil {
		return TransferTicket{}, err
	}
	uri := handle.Transfer{Host: s.cfg.BaseURL.Host, ID: id}
	return TransferTicket{URI: uri.String(), Name: c.Name, MimeType: c.MimeType, Size: c.Size,
		UploadURL: s.uploadURL(tok), Token: tok, ExpiresAt: exp.UTC()}, nil
}

// ResolveTransfer is the Drive file behind a file-transfer URI of acct,
// the caller (compose.TransferResolver). Another user's URI, an expired
// one and one never issued are all handle.ErrUnknownTransfer.
func (s *Service) ResolveTransfer(ctx context.Context, acct *account.Account, id string) (drive.Ref, error) {
	if s.cfg.Transfers == nil {
		return drive.Ref{}, handle.ErrUnknownTransfer
	}
	t, err := s.cfg.Transfers.GetTransfer(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && t.UserID != acct.ID():
		return drive.Ref{}, handle.ErrUnknownTransfer
	case err != nil:
		return drive.Ref{}, fmt.Errorf("upload: transfer: %w", err)
	case t.FileID == "":
		return drive.Ref{}, handle.ErrTransferPending
	}
	return drive.Ref{ID: t.FileID}, nil
}

// completeTransfer records the Drive file a transfer's upload made.
func (s *Service) completeTransfer(ctx context.Context, p permit, fileID string) error {
	if p.transfer == "" {
		return nil
	}
	if s.cfg.Transfers == nil {
		return errors.New("upload: a transfer ticket on a server without transfers")
	}
	if err := s.cfg.Transfers.CompleteTransfer(ctx, p.transfer, fileID); err != nil {
		return fmt.Errorf("upload: complete transfer: %w", err)
	}
	return nil
}

// SHA256FromDigest reads the draft's digest ({algorithm, value}, value
// unpadded base64url) as hex; an algorithm other than sha-256 is ignored.
func SHA256FromDigest(algorithm, value string) (string, error) {
	if !strings.EqualFold(algorithm, "sha-256") || value == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(value, "="))
	if err != nil || len(b) != 32 {
		return "", refuse(http.StatusBadRequest, kindBadSHA256, "The digest is not a SHA-256 in unpadded base64url (43 characters).")
	}
	return hex.EncodeToString(b), nil
}
