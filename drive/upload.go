package drive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	gdrive "google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"
)

// UploadChunkSize is the resumable chunk size of Upload: the memory one
// upload holds, and the size below which it is one multipart request.
// 4 MiB (16 × Drive's 256 KiB unit) keeps the upload endpoint's memory
// per upload, with its read-ahead, near 8 MiB; larger chunks save round
// trips to Google but cost memory for every upload running.
const UploadChunkSize = 4 << 20

// Known sizes: a file whose size is known before the upload
// (NewFile.Size) past UploadChunkSize goes in the fewest chunks of at most
// MaxKnownChunk, at least two, evened out, instead of in chunks of
// UploadChunkSize: each chunk is a round trip to Drive (~0.23 s at
// Google), five of them for a 20 MiB save_to_drive (three now, of
// 6.7 MiB) against the Google client's two of 16 MiB, and a chunk waits
// to fill before it goes. The cost is memory for such an upload, at most
// MaxKnownChunk instead of UploadChunkSize (12 MiB with its read-ahead
// instead of 8), which only files of known size pay, up to MaxKnownSize:
// a larger one (a long /upload) keeps UploadChunkSize. Two chunks at
// least, because a single request of the Google client's holds the whole
// file. (Its unchunked upload, googleapi.ChunkSize(0), is never used: when
// its reader fails it still writes the multipart body's closing boundary,
// so Drive would store the file cut short.)
const (
	MaxKnownChunk = 8 << 20
	MaxKnownSize  = 4 * MaxKnownChunk
)

// chunkFor is the chunk size of an upload of size bytes (0: unknown).
func chunkFor(size int64) int {
	if size <= UploadChunkSize || size > MaxKnownSize {
		return UploadChunkSize
	}
	const unit = googleapi.MinUploadChunkSize
	n := max((size+MaxKnownChunk-1)/MaxKnownChunk, 2)
	each := (size + n - 1) / n
	return int((each + unit - 1) / unit * unit)
}

// NewFile describes a file to create with Upload.
type NewFile struct {
	// ID is an id from GenerateID, so the caller could name the file
	// before it existed; empty lets Drive choose.
	ID       string
	Name     string
	MimeType string // the content's type; empty lets Drive decide
	ParentID string // a folder id; empty for My Drive's root
	// Size is the content's length when it is known before the upload
	// (0: unknown), which sets its chunks (chunkFor). The reader must
	// still yield exactly that many bytes, or fail.
	Size int64
}

// Upload creates a file in the user's Drive from r, streaming it: one
// multipart request below UploadChunkSize, resumable chunks above (each
// retried on 5xx, 429 and cut connections), larger ones for a file of
// known size (chunkFor). It needs only the drive.file scope.
//
// The upload is finalized only when r returns io.EOF. If r returns any
// other error, the final chunk is never sent and no file is created, so a
// caller that must check the content (a digest, a size) reports a mismatch
// as an error from Read instead of io.EOF. The caller's error is kept in
// the returned error's chain.
func (c *Client) Upload(ctx context.Context, nf NewFile, r io.Reader) (File, error) {
	const op = "files.create"
	if nf.ParentID != "" && !ValidID(nf.ParentID) {
		return File{}, &Error{Op: op, Err: ErrBadID}
	}
	if nf.ID != "" && !ValidID(nf.ID) {
		return File{}, &Error{Op: op, Err: ErrBadID}
	}
	if nf.Name == "" {
		return File{}, &Error{Op: op, Err: errors.New("a file needs a name")}
	}
	meta := &gdrive.File{Id: nf.ID, Name: nf.Name, MimeType: nf.MimeType}
	if nf.ParentID != "" {
		meta.Parents = []string{nf.ParentID}
	}
	opts := []googleapi.MediaOption{googleapi.ChunkSize(chunkFor(nf.Size))}
	if nf.MimeType != "" {
		opts = append(opts, googleapi.ContentType(nf.MimeType))
	}
	gf, err := c.files.Create(meta).SupportsAllDrives(true).Fields(fileFields).
		Context(ctx).Media(r, opts...).Do()
	if err != nil {
		return File{}, c.wrap(op, err)
	}
	return fromAPI(gf), nil
}

// GenerateID reserves one file id in the user's My Drive for a later
// Upload (files.generateIds; drive.file is enough).
func (c *Client) GenerateID(ctx context.Context) (string, error) {
	const op = "files.generateIds"
	res, err := c.files.GenerateIds().Count(1).Space("drive").Type("files").Context(ctx).Do()
	if err != nil {
		return "", c.wrap(op, err)
	}
	if len(res.Ids) != 1 || !ValidID(res.Ids[0]) {
		//lint:ignore ST1005 "Drive" is a name, not a capitalized word
		return "", &Error{Op: op, Err: errors.New("Drive returned no usable id")}
	}
	return res.Ids[0], nil
}

// DeleteFile deletes a file the app created (files.delete; drive.file is
// enough). It is for undoing an upload that must not stand.
func (c *Client) DeleteFile(ctx context.Context, id string) error {
	const op = "files.delete"
	if !ValidID(id) {
		return &Error{Op: op, Err: ErrBadID}
	}
	return c.wrap(op, c.files.Delete(id).SupportsAllDrives(true).Context(ctx).Do())
}

// Bounds of FolderInRoot's listing: folders of the name per page, and
// pages read looking for one this app may write to.
const (
	maxFolderMatches = 100
	maxFolderPages   = 3
)

// FolderInRoot returns the id of a folder called name at the top of My
// Drive that this app may add files to, creating one if there is none.
// With the drive.file scope the app may write only into folders it
// created or the user opened with it, which Drive reports as
// isAppAuthorized; a folder of the same name made by hand, or by another
// app, is visible through drive.readonly but would refuse every upload,
// so it is passed over.
//
// Two callers racing (two uploads of a new user, on one replica or two)
// may each create one. Each then lists again and takes the oldest (by
// createdTime, then id; see oldestFirst), so once the race is over every
// caller settles on the same folder. The duplicates stay: files.delete
// takes a folder's contents with it, and a caller that listed before
// another's folder was visible may already be uploading into its own.
// Two folders of the same name lose nothing; deleting one could.
func (c *Client) FolderInRoot(ctx context.Context, name string) (string, error) {
	if name == "" {
		return "", &Error{Op: "files.list", Err: errors.New("a folder needs a name")}
	}
	found, err := c.foldersInRoot(ctx, name)
	if err != nil {
		return "", err
	}
	if len(found) > 0 {
		return found[0], nil
	}
	created, err := c.files.Create(&gdrive.File{Name: name, MimeType: MimeFolder, Parents: []string{"root"}}).
		Fields("id").Context(ctx).Do()
	if err != nil {
		return "", c.wrap("files.create", err)
	}
	found, err = c.foldersInRoot(ctx, name)
	if err != nil || len(found) == 0 {
		// Ours exists even if the list failed or does not show it yet.
		return created.Id, nil
	}
	return found[0], nil
}

// foldersInRoot lists the untrashed folders called name at the top of My
// Drive that this app may write to, oldest first. Drive sorts by
// createdTime, so the oldest are on the first pages.
func (c *Client) foldersInRoot(ctx context.Context, name string) ([]string, error) {
	q := fmt.Sprintf("name = %s and mimeType = %s and 'root' in parents and trashed = false",
		quote(name), quote(MimeFolder))
	var mine []*gdrive.File
	token := ""
	for page := 0; page < maxFolderPages && len(mine) == 0; page++ {
		call := c.files.List().Q(q).Spaces("drive").Corpora("user").OrderBy("createdTime").
			PageSize(maxFolderMatches).Fields("nextPageToken,files(id,createdTime,isAppAuthorized)").Context(ctx)
		if token != "" {
			call = call.PageToken(token)
		}
		res, err := call.Do()
		if err != nil {
			return nil, c.wrap("files.list", err)
		}
		for _, f := range res.Files {
			if f != nil && f.IsAppAuthorized {
				mine = append(mine, f)
			}
		}
		if token = res.NextPageToken; token == "" {
			break
		}
	}
	return oldestFirst(mine), nil
}

// ErrNotFolder: an id given as a folder names a file that is not one.
var ErrNotFolder = errors.New("not a folder")

// CheckUploadFolder makes sure files can be uploaded into folder id
// before any byte is read: it must be a folder, not in the trash, one
// the user may add files to (capabilities.canAddChildren), and one this
// app may write to under drive.file (isAppAuthorized: created by or
// opened with drivemail). Otherwise Drive would refuse the upload at its
// end. The errors are ErrBadID, ErrNotFound (missing, hidden or
// trashed), ErrNotFolder, ErrFilePermission and ErrAppNotAuthorized.
func (c *Client) CheckUploadFolder(ctx context.Context, id string) error {
	const op = "files.get"
	if !ValidID(id) {
		return &Error{Op: op, Err: ErrBadID}
	}
	f, err := c.files.Get(id).SupportsAllDrives(true).
		Fields("id,mimeType,trashed,isAppAuthorized,capabilities(canAddChildren)").Context(ctx).Do()
	if err != nil {
		return c.wrap(op, err)
	}
	switch {
	case f.MimeType != MimeFolder:
		return &Error{Op: op, Err: ErrNotFolder}
	case f.Trashed:
		return &Error{Op: op, Err: fmt.Errorf("the folder is in the trash: %w", ErrNotFound)}
	case f.Capabilities != nil && !f.Capabilities.CanAddChildren:
		return &Error{Op: op, Err: ErrFilePermission}
	case !f.IsAppAuthorized:
		return &Error{Op: op, Err: ErrAppNotAuthorized}
	}
	return nil
}

// oldestFirst returns the ids of folders (valid ids only) by createdTime,
// ties broken by id, so every caller that sees the same folders picks the
// same first one. A folder whose createdTime does not parse sorts last.
func oldestFirst(folders []*gdrive.File) []string {
	type folder struct {
		id      string
		created time.Time
		known   bool
	}
	fs := make([]folder, 0, len(folders))
	for _, f := range folders {
		if f == nil || !ValidID(f.Id) {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, f.CreatedTime)
		fs = append(fs, folder{id: f.Id, created: t, known: err == nil})
	}
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		switch {
		case a.known != b.known:
			return a.known
		case !a.created.Equal(b.created):
			return a.created.Before(b.created)
		}
		return a.id < b.id
	})
	ids := make([]string, len(fs))
	for i, f := range fs {
		ids[i] = f.id
	}
	return ids
}
