package upload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net/http"
	"path"
	"strings"

	"github.com/drivemail/drivemail/clientfile"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/exportfmt"
	"github.com/drivemail/drivemail/internal/identity"
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

// SaveClientFile fetches a client file and stores it in the Drive of the
// caller in ctx. Refusals are *Error.
func (s *Service) SaveClientFile(ctx context.Context, req SaveRequest) (Result, error) {
	if s.cfg.Files == nil {
		return Result{}, refuse(http.StatusNotImplemented, "client_files_off", "This drivemail server does not fetch files from the conversation. Put the file in Google Drive another way, or use request_upload.")
	}
	u, ok := identity.FromContext(ctx)
	if !ok {
		return Result{}, errNoUser
	}
	if err := checkScopes(u); err != nil {
		return Result{}, err
	}
	if req.FolderID != "" && !drive.ValidID(req.FolderID) {
		return Result{}, refuse(http.StatusBadRequest, "bad_folder_id", "folder_id %q is not a Drive folder id. Leave it out to use the %q folder.", truncate(req.FolderID, 60), s.cfg.FolderName)
	}
	if err := s.rateLimit(ctx, "upload", u.ID, s.cfg.RatePerWindow); err != nil {
		return Result{}, err
	}
	release, err := s.slots.take(u.ID)
	if err != nil {
		return Result{}, err
	}
	defer release()
	dc, err := s.driveFor(ctx, u.ID)
	if err != nil {
		return Result{}, err
	}
	nf := drive.NewFile{ParentID: req.FolderID}
	if nf.ParentID != "" {
		err = dc.CheckUploadFolder(ctx, nf.ParentID)
	} else {
		nf.ParentID, err = dc.FolderInRoot(ctx, s.cfg.FolderName)
	}
	if err != nil {
		return Result{}, googleRefusal(err, req.FolderID != "")
	}
	f, err := s.cfg.Files.Open(ctx, req.URL, s.cfg.MaxBytes)
	if err != nil {
		return Result{}, s.clientFileRefusal(err)
	}
	// Closing a download: its read errors are the ones that count.
	defer func() { _ = f.Body.Close() }()
	nf.Name = savedName(req, f)
	nf.MimeType = strings.TrimSpace(req.MimeType)
	if nf.MimeType == "" {
		nf.MimeType = f.MimeType
	}
	if nf.MimeType == "" {
		if t := exportfmt.MimeTypeByName(nf.Name); t != exportfmt.OctetStream {
			nf.MimeType = t
		}
	}
	if err := checkType(nf.MimeType); err != nil {
		return Result{}, err
	}
	body := &counted{r: f.Body, h: sha256.New()}
	stored, err := dc.Upload(ctx, nf, body)
	if body.err != nil {
		return Result{}, s.clientFileRefusal(body.err)
	}
	if err != nil {
		return Result{}, googleRefusal(err, req.FolderID != "")
	}
	c := &content{n: body.n, sum: hex.EncodeToString(body.h.Sum(nil))}
	if err := s.checkStored(ctx, dc, stored, c); err != nil {
		return Result{}, err
	}
	return Result{FileID: stored.ID, Name: stored.Name, MimeType: stored.MimeType, Size: c.n, SHA256: c.sum, Handle: s.handle(stored.ID)}, nil
}

// savedName is the name given, else the client's, else the download's,
// else the URL's last segment when it looks like a file name.
func savedName(req SaveRequest, f *clientfile.File) string {
	name := strings.TrimSpace(req.Name)
	if name == "" {
		name = f.Name
	}
	if name == "" {
		raw, _, _ := strings.Cut(req.URL, "?")
		if base := path.Base(raw); strings.Contains(base, ".") && !strings.ContainsAny(base, "%:") {
			name = base
		}
	}
	if name = cleanName(name); name == "" {
		name = "attachment"
	}
	return name
}

// counted counts and hashes a download on its way to Drive and keeps its
// first read failure: a failed read makes the Drive client abandon the
// upload, so nothing is created.
type counted struct {
	r   io.Reader
	h   hash.Hash
	n   int64
	err error
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.h.Write(p[:n])
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// clientFileRefusal words a client file that could not be fetched.
func (s *Service) clientFileRefusal(err error) error {
	var fe *clientfile.Error
	if !errors.As(err, &fe) {
		return err
	}
	const again = "Ask the user to attach the file to the conversation again, then call again with the new file."
	switch fe.Kind {
	case clientfile.Expired:
		return refuse(http.StatusGone, "client_file_expired", "The file's download link has expired or was withdrawn (its host refused it); nothing was saved. %s", again).because(err)
	case clientfile.TooLarge:
		return refuse(http.StatusRequestEntityTooLarge, "client_file_too_large", "The file is larger than this server's upload limit of %s, so nothing was saved.", byteSize(s.cfg.MaxBytes)).because(err)
	case clientfile.Stalled, clientfile.TooSlow:
		return refuse(http.StatusGatewayTimeout, "client_file_stalled", "The file's host stopped sending it, or sent it too slowly; nothing was saved. Try again in a minute; if it fails again, %s", strings.ToLower(again[:1])+again[1:]).because(err)
	case clientfile.Unavailable, clientfile.Truncated:
		return refuse(http.StatusBadGateway, "client_file_unavailable", "The file's host failed while it was fetched; nothing was saved. Try again in a minute.").because(err)
	}
	return refuse(http.StatusBadRequest, "client_file_refused", "The file's download_url is not one drivemail fetches (%s). Pass the file object exactly as the client gave it.", strings.TrimPrefix(fe.Error(), "clientfile: ")).because(err)
}
