package upload

import (
	"context"
	"encoding/hex"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/handle"
)

// Request asks for a ticket to put one file into the caller's Drive: the
// request_upload tool's arguments.
type Request struct {
	Name     string
	MimeType string
	Size     *int64 // nil when unknown; 0 is an empty file
	SHA256   string // hex, "" when unknown
	FolderID string // a folder id, link or mcp-file:// handle (package handle); "" for the default folder
}

// Ticket is where and how to send the file's bytes.
type Ticket struct {
	UploadURL string
	Method    string
	ExpiresAt time.Time
	// Handle is the mcp-file:// handle the file will have, or "" when
	// Drive reserved no id (the upload's answer then carries it).
	Handle string
}

// RequestUpload issues a ticket for acct, the caller, to put one file in
// their Drive (the request_upload tool). The
// ticket is bound to the user, the cleaned name and, when given, the type,
// size, SHA-256 and folder. When Drive reserves an id for the file, the
// result carries the file's handle already, so the model can attach it as
// soon as the upload is done. Refusals are *Error (model-facing).
func (s *Service) RequestUpload(ctx context.Context, acct *account.Account, req Request) (Ticket, error) {
	if err := checkScopes(acct); err != nil {
		return Ticket{}, err
	}
	c, err := s.claimsFor(req)
	if err != nil {
		return Ticket{}, err
	}
	c.User = acct.ID()
	if err := s.rateLimit(ctx, "upload-ticket", acct.ID(), 2*s.cfg.RatePerWindow); err != nil {
		return Ticket{}, err
	}
	dc, err := s.driveFor(ctx, acct)
	if err != nil {
		return Ticket{}, err
	}
	if c.Folder != "" {
		// Refused now, not when the bytes arrive: drive.file lets
		// drivemail write only into its own folders.
		if err := dc.CheckUploadFolder(ctx, c.Folder); err != nil {
			e := googleRefusal(err, true)
			if e.Operator != "" {
				// The tool's own log line is INFO; this is theirs to lift.
				s.cfg.Logger.LogAttrs(ctx, slog.LevelError, "upload refused", slog.String("user", acct.ID()),
					slog.String("refusal", string(e.Kind)), slog.String("operator", e.Operator), slog.String("cause", err.Error()))
			}
			return Ticket{}, e
		}
	}
	// Without a reserved id the ticket still works; the handle then comes
	// back from the upload itself.
	if id, err := dc.GenerateID(ctx); err == nil {
		c.FileID = id
	} else {
		s.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "upload: Drive reserved no file id; the ticket has no handle",
			slog.String("user", acct.ID()), slog.String("error", err.Error()))
	}
	exp := s.cfg.Now().Add(s.cfg.TicketTTL).Truncate(time.Second)
	c.Expires = exp.Unix()
	tok, err := s.signer.sign(c)
	if err != nil {
		return Ticket{}, err
	}
	t := Ticket{UploadURL: s.uploadURL(tok), Method: http.MethodPut, ExpiresAt: exp.UTC()}
	if c.FileID != "" {
		t.Handle = s.handle(c.FileID)
	}
	return t, nil
}

// maxMimeTypeLen bounds a declared type (RFC 6838: type and subtype names
// of at most 127 characters each), which the ticket carries.
const maxMimeTypeLen = 255

// claimsFor checks a ticket request and returns the claims it fixes.
func (s *Service) claimsFor(req Request) (claims, error) {
	var c claims
	if strings.TrimSpace(req.Name) == "" {
		return c, refuse(http.StatusBadRequest, kindNoName, "Give the file's name, such as \"report.pdf\".")
	}
	c.Name = cleanName(req.Name)
	if req.MimeType != "" {
		if len(req.MimeType) > maxMimeTypeLen {
			return c, refuse(http.StatusBadRequest, kindBadMimeType, "mime_type is %d characters long; a MIME type such as \"application/pdf\" has at most %d. Leave it out to guess it from the name.", len(req.MimeType), maxMimeTypeLen)
		}
		mt, _, err := mime.ParseMediaType(req.MimeType)
		if err != nil || !strings.Contains(mt, "/") {
			return c, refuse(http.StatusBadRequest, kindBadMimeType, "mime_type %q is not a MIME type such as \"application/pdf\"; leave it out to guess it from the name.", truncate(req.MimeType, 60))
		}
		if err := checkType(mt); err != nil {
			return c, err
		}
		c.MimeType = mt
	}
	if req.Size != nil {
		switch size := *req.Size; {
		case size < 0:
			return c, refuse(http.StatusBadRequest, kindBadSize, "size %d is not a file size; give the size in bytes, or leave it out.", size)
		case size > s.cfg.MaxBytes:
			return c, refuse(http.StatusRequestEntityTooLarge, kindTooLarge, "The file is %d bytes, larger than this server's upload limit of %s (%d bytes). Send a smaller file, or share a link to it instead.", size, byteSize(s.cfg.MaxBytes), s.cfg.MaxBytes)
		}
		c.Size = req.Size
	}
	if req.SHA256 != "" {
		sum := strings.ToLower(strings.TrimSpace(req.SHA256))
		if b, err := hex.DecodeString(sum); err != nil || len(b) != 32 {
			return c, refuse(http.StatusBadRequest, kindBadSHA256, "sha256 must be 64 hexadecimal characters (the output of sha256sum), or left out.")
		}
		c.SHA256 = sum
	}
	if req.FolderID != "" {
		id := folderID(req.FolderID)
		if !drive.ValidID(id) {
			return c, refuse(http.StatusBadRequest, kindBadFolderID, "folder_id %q is not a Drive folder id. Leave it out to use the %q folder.", truncate(req.FolderID, 60), s.cfg.FolderName)
		}
		c.Folder = id
	}
	return c, nil
}

// folderID is the id of the folder s names (a folder id, a Drive link, or
// an mcp-file:// handle: see package handle), or "" when it names none.
func folderID(s string) string {
	h, err := handle.Parse(s)
	if err != nil {
		return ""
	}
	ref, _ := handle.DriveRef(h)
	return ref.ID
}
