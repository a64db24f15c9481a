package upload

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/clientfile"
)

// A file a chat client hands over by signed URL (ChatGPT's file
// parameters) can be saved into the user's Drive (the save_to_drive
// tool): fetched under clientfile's rules and streamed into Drive like an
// upload, with the same limits, folder and rate limit, so that it can be
// attached by id later, or shared as a link.

// SaveRequest is a client file to save.
type SaveRequest struct {
	URL      string // the signed download URL
	MimeType string // the client's; "" lets the download's headers decide
	Name     string // the name to save under; "" takes the client's or the download's
	FolderID string // a folder drivemail may write to; "" for the default folder
}

// SaveClientFile fetches a client file and stores it in the Drive of
// acct, the caller, through Save's path: the scope, folder and rate limit
// are checked before the file is fetched, its headers' size and type
// before its body is read. Refusals are *Error.
func (s *Service) SaveClientFile(ctx context.Context, acct *account.Account, req SaveRequest) (Result, error) {
	if s.cfg.Files == nil {
		return Result{}, refuse(http.StatusNotImplemented, clientfile.KindOff, "This drivemail server does not fetch files from the conversation. Put the file in Google Drive another way, or use request_upload.")
	}
	f := SaveFile{Name: req.Name, MimeType: strings.TrimSpace(req.MimeType), Size: -1, FolderID: req.FolderID}
	res, err := s.store(ctx, acct, f, func(ctx context.Context, f *SaveFile) (io.ReadCloser, error) {
		cf, err := s.cfg.Files.Open(ctx, req.URL, s.cfg.MaxBytes)
		if err != nil {
			return nil, err
		}
		f.Name, f.Size = savedName(req, cf), cf.Size
		if f.MimeType == "" {
			f.MimeType = cf.MimeType
		}
		return cf.Body, nil
	})
	return res, s.clientFileRefusal(err)
}

// savedName is the name given, else the client's, else the download's,
// else the URL's last segment when it looks like a file name.
func savedName(req SaveRequest, f *clientfile.File) string {
	name := strings.TrimSpace(req.Name)
	if name == "" {
		name = f.Name
	}
	if name == "" {
		name = clientfile.URLName(req.URL)
	}
	if name = cleanName(name); name == "" {
		name = "attachment"
	}
	return name
}

// clientFileRefusal words a client file that could not be fetched, in
// clientfile's sentence but for a file past this server's limit.
func (s *Service) clientFileRefusal(err error) error {
	var fe *clientfile.Error
	var own *Error
	if !errors.As(err, &fe) || errors.As(err, &own) {
		return err
	}
	if r := (clientfile.Wording{File: "the file", Done: "Nothing was saved."}).Refusal(err); r != nil {
		return &Error{Refusal: r, Status: clientFileStatus(fe.Failure)}
	}
	return refuse(http.StatusRequestEntityTooLarge, clientfile.KindTooLarge, "The file is larger than this server's upload limit of %s, so nothing was saved.",
		byteSize(s.cfg.MaxBytes)).because(err)
}

// clientFileStatus is the HTTP status of a fetch that failed so.
func clientFileStatus(f clientfile.Failure) int {
	switch f {
	case clientfile.Expired:
		return http.StatusGone
	case clientfile.Stalled, clientfile.TooSlow:
		return http.StatusGatewayTimeout
	case clientfile.Unavailable, clientfile.Truncated:
		return http.StatusBadGateway
	}
	return http.StatusBadRequest
}
