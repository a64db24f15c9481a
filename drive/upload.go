package drive

import (
	"context"
	"errors"
	"io"

	gdrive "google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"
)

// UploadChunkSize is the resumable chunk size of Upload: the memory one
// upload holds, and the size below which it is one multipart request.
const UploadChunkSize = 8 << 20

// NewFile describes a file to create with Upload.
type NewFile struct {
	Name     string
	MimeType string // the content's type; empty lets Drive decide
	ParentID string // a folder id; empty for My Drive's root
}

// Upload creates a file in the user's Drive from r, streaming it: one
// multipart request below UploadChunkSize, resumable chunks above. If r
// fails, the upload is abandoned and no file is created. It needs only the
// drive.file scope.
func (c *Client) Upload(ctx context.Context, nf NewFile, r io.Reader) (File, error) {
	if nf.ParentID != "" && !ValidID(nf.ParentID) {
		return File{}, &Error{Op: "files.create", Err: ErrBadID}
	}
	if nf.Name == "" {
		return File{}, &Error{Op: "files.create", Err: errors.New("a file needs a name")}
	}
	meta := &gdrive.File{Name: nf.Name, MimeType: nf.MimeType}
	if nf.ParentID != "" {
		meta.Parents = []string{nf.ParentID}
	}
	opts := []googleapi.MediaOption{googleapi.ChunkSize(UploadChunkSize)}
	if nf.MimeType != "" {
		opts = append(opts, googleapi.ContentType(nf.MimeType))
	}
	gf, err := c.files.Create(meta).SupportsAllDrives(true).Fields(fileFields).
		Context(ctx).Media(r, opts...).Do()
	if err != nil {
		return File{}, wrapErr("files.create", err)
	}
	return fromAPI(gf), nil
}
