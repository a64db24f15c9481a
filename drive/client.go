// Package drive is drivemail's use of Google Drive v3 and Sheets v4: search,
// file metadata (shortcuts followed, shared drives, resource keys), download
// and export streams, Range reads and uploads.
//
// Every call passes supportsAllDrives=true, sends the resource key when one
// is known, and returns errors that never carry Google's error body.
package drive

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	gdrive "google.golang.org/api/drive/v3"
	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"

	"github.com/drivemail/drivemail/internal/google"
)

// Mime types of Drive's own kinds of file.
const (
	MimeFolder      = "application/vnd.google-apps.folder"
	MimeShortcut    = "application/vnd.google-apps.shortcut"
	MimeSpreadsheet = "application/vnd.google-apps.spreadsheet"
	nativePrefix    = "application/vnd.google-apps."
)

// fileFields is what drivemail reads of a file: enough to plan a message
// without a second call.
const fileFields = "id,name,mimeType,size,md5Checksum,sha256Checksum,modifiedTime,webViewLink," +
	"resourceKey,driveId,trashed,capabilities(canDownload,canShare),isAppAuthorized,exportLinks," +
	"shortcutDetails(targetId,targetMimeType,targetResourceKey)"

// Client calls Drive and Sheets as one user.
type Client struct {
	http      *http.Client
	endpoints google.Endpoints
	files     *gdrive.FilesService
	perms     *gdrive.PermissionsService
	ops       *gdrive.OperationsService
	sheets    *sheets.SpreadsheetsService
	idle      time.Duration // see WithIdleTimeout
	poll      pollPolicy    // see WithOperationPolling
	log       *slog.Logger  // see WithLogger
}

// New returns a Client that calls Google (or the emulator named by
// endpoints) with httpClient, which must add the user's Google token.
func New(ctx context.Context, httpClient *http.Client, endpoints google.Endpoints, opts ...Option) (*Client, error) {
	dopts := append([]option.ClientOption{option.WithHTTPClient(httpClient)}, endpoints.DriveOptions()...)
	ds, err := gdrive.NewService(ctx, dopts...)
	if err != nil {
		return nil, fmt.Errorf("drive: new service: %w", err)
	}
	sopts := append([]option.ClientOption{option.WithHTTPClient(httpClient)}, endpoints.SheetsOptions()...)
	ss, err := sheets.NewService(ctx, sopts...)
	if err != nil {
		return nil, fmt.Errorf("drive: new sheets service: %w", err)
	}
	c := &Client{
		http: httpClient, endpoints: endpoints, files: ds.Files, perms: ds.Permissions, ops: ds.Operations, sheets: ss.Spreadsheets,
		idle: DefaultIdleTimeout, poll: pollPolicy{defaultPollFirst, defaultPollMost, defaultPollTotal},
		log: slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// WithLogger gives the client a logger for what the operator must act
// on: an API drivemail needs that its Google Cloud project has not
// enabled (see DisabledAPI). Default: no logging.
func WithLogger(l *slog.Logger) Option {
	return func(c *Client) {
		if l != nil {
			c.log = l
		}
	}
}

// wrap is wrapErr, logging a disabled API for the operator: the user's
// sentence cannot fix it, the project's owner can.
func (c *Client) wrap(op string, err error) error {
	err = wrapErr(op, err)
	if service, ok := DisabledAPI(err); ok {
		c.log.Error("Google API not enabled: enable it in the Google Cloud project of drivemail's OAuth client",
			"api", service, "op", op, "enable_at", "https://console.cloud.google.com/apis/library/"+service)
	}
	return err
}

// File is a Drive file as drivemail sees it.
type File struct {
	ID       string
	Name     string
	MimeType string
	// Size is the content length of a binary file; natives have none (0).
	Size         int64
	MD5          string // hex, binary files only
	SHA256       string // hex, binary files only
	ModifiedTime time.Time
	WebViewLink  string
	ResourceKey  string // for link-shared files; sent back on every call
	DriveID      string // the shared drive holding the file, if any
	Trashed      bool
	CanDownload  bool
	// CanShare says the user may change the file's sharing (its owner, a
	// writer when writersCanShare, a shared drive's organizer); only then
	// does Drive show them its permissions.
	CanShare bool
	// AppAuthorized says drivemail created the file or the user opened it
	// with drivemail (the Picker): what the drive.file scope reaches.
	AppAuthorized bool
	// ExportLinks maps an export MIME type to a URL that serves it without
	// files.export's size cap.
	ExportLinks map[string]string
	// ShortcutID is the id the caller gave when it named a shortcut to
	// this file; empty otherwise.
	ShortcutID string
	// Sheets lists a spreadsheet's tabs in order (filled by Get).
	Sheets []Sheet
	// TabsUnknown: Get could not list the tabs because the Sheets API is
	// not enabled for drivemail (everything else about the file works).
	TabsUnknown bool

	shortcut shortcutTarget
}

// Sheet is one tab of a spreadsheet.
type Sheet struct {
	ID    int64 // Sheets' sheetId, the gid of export URLs
	Title string
	// Rows and Cols are the tab's grid size (gridProperties), which
	// bound the reads of TabExport.
	Rows, Cols int64
}

// Native reports whether the file is a Google-native document (Doc, Sheet,
// Slides, Drawing, folder, form…) with no binary content of its own.
func (f File) Native() bool { return isNative(f.MimeType) }

// IsFolder reports whether the file is a folder.
func (f File) IsFolder() bool { return f.MimeType == MimeFolder }

func isNative(mimeType string) bool {
	return len(mimeType) > len(nativePrefix) && mimeType[:len(nativePrefix)] == nativePrefix
}

func fromAPI(f *gdrive.File) File {
	out := File{
		ID:          f.Id,
		Name:        f.Name,
		MimeType:    f.MimeType,
		Size:        f.Size,
		MD5:         f.Md5Checksum,
		SHA256:      f.Sha256Checksum,
		WebViewLink: f.WebViewLink,
		ResourceKey: f.ResourceKey,
		DriveID:     f.DriveId,
		Trashed:     f.Trashed,
		CanDownload: true,
		ExportLinks: f.ExportLinks,
	}
	out.AppAuthorized = f.IsAppAuthorized
	if f.Capabilities != nil {
		out.CanDownload = f.Capabilities.CanDownload
		out.CanShare = f.Capabilities.CanShare
	}
	if t, err := time.Parse(time.RFC3339Nano, f.ModifiedTime); err == nil {
		out.ModifiedTime = t
	}
	return out
}

// resourceKeyHeader is how Drive learns the resource key of a link-shared
// file: "id/key" pairs, comma separated.
const resourceKeyHeader = "X-Goog-Drive-Resource-Keys"

func setResourceKey(h http.Header, id, key string) {
	if key != "" {
		h.Set(resourceKeyHeader, id+"/"+key)
	}
}
