// Package tools defines drivemail's MCP tools: their hand-written schemas,
// the lenient-but-strict parsing of what models send, and the shaping of
// results. The work itself (Drive, Gmail, uploads) sits behind the small
// interfaces below, so the tools stay thin and testable with fakes. Each
// call is handed the caller's account (Deps.Account), which every piece
// of work is given in turn.
package tools

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/prepared"
	"github.com/drivemail/drivemail/upload"
)

// Drive finds and describes files in the Google Drive of acct, the
// caller.
type Drive interface {
	Search(ctx context.Context, acct *account.Account, q drive.Query) (drive.Page, error)
	// Get returns one file (a spreadsheet with its tabs).
	Get(ctx context.Context, acct *account.Account, ref drive.Ref) (drive.File, error)
}

// Mail sends or drafts one message from acct, the caller, or sends one
// of their drafts; confirm, when set, is shown the draft before Gmail
// sends it (compose.Service.SendDraft).
type Mail interface {
	Send(ctx context.Context, acct *account.Account, req compose.Request, opts SendOptions) (compose.Result, error)
	SendDraft(ctx context.Context, acct *account.Account, draftID string, confirm func(context.Context, compose.Summary) error) (compose.DraftSent, error)
}

// Uploads issues short-lived upload tickets for acct, the caller.
type Uploads interface {
	RequestUpload(ctx context.Context, acct *account.Account, req upload.Request) (upload.Ticket, error)
}

// SendOptions tunes one Mail.Send call.
type SendOptions struct {
	// Draft saves the message as a Gmail draft instead of sending it.
	Draft bool
	// Progress, when set, is called as message bytes stream to Gmail; total
	// is 0 while the final size is unknown.
	Progress func(done, total int64)
	// ReadMail says the server asks for a Gmail read scope and the user
	// granted it: a thread_id reply may then read its thread (its latest
	// message, when thread_id comes alone, and its subject).
	ReadMail bool
	// Confirm, when set, is shown the message once every check has
	// passed, before anything is downloaded: nil sends, an error ends the
	// send with it, nothing sent (compose.Options.Confirm).
	Confirm func(ctx context.Context, s compose.Summary) error
}

// SearchResult is drive_search's structuredContent.
type SearchResult struct {
	Files         []File `json:"files"`
	NextPageToken string `json:"next_page_token,omitempty"`
	// PickURL, in file mode when nothing matched, is a link for the user
	// to choose files with Google's Picker.
	PickURL string `json:"pick_url,omitempty"`
}

// File is a Drive file as the tools show it.
type File struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	MimeType     string    `json:"mime_type"`
	Size         *int64    `json:"size,omitempty"` // absent for native Google files
	ModifiedTime time.Time `json:"modified_time"`
	// Native is true for Google Docs, Sheets, Slides, Drawings and other
	// Google-native types, which have no bytes until exported.
	Native        bool     `json:"native"`
	ExportFormats []string `json:"export_formats,omitempty"`
	WebViewLink   string   `json:"web_view_link"`
	// Sheets lists a spreadsheet's tab names (drive_get_file only).
	Sheets []string `json:"sheets,omitempty"`
}

// UploadResult is request_upload's structuredContent: the ticket, and a
// curl command that uses it.
type UploadResult struct {
	UploadURL string    `json:"upload_url"`
	Method    string    `json:"method"`
	ExpiresAt time.Time `json:"expires_at"`
	Handle    string    `json:"handle,omitempty"`
	Curl      string    `json:"curl"`
}

// Deps is what the tools need from the rest of the program.
type Deps struct {
	// Account opens the account of the caller of one tool call (and of
	// a tools/list, for Filter), from what the server learnt at its
	// edge; an error means no one signed in (a wiring mistake).
	Account func(ctx context.Context) (*account.Account, error)
	Drive   Drive
	Mail    Mail
	Uploads Uploads // nil: request_upload answers that uploads are not available
	// Saver puts a file into the caller's Drive (save_to_drive); nil: the
	// tool answers that it is not available.
	Saver  Saver
	Logger *slog.Logger
	// DraftsEnabled is true when the server asks Google for gmail.compose
	// (serve --drafts), so a user can grant it by reconnecting; send_draft
	// is listed only then.
	DraftsEnabled bool
	// FileTransfer adds file_uris to send_email and create_draft, for the
	// MCP file-transfer draft (serve --file-transfer).
	FileTransfer bool
	// ReadMailEnabled is true when the server asks Google for
	// gmail.readonly (serve --read-mail): the mail tools are listed to a
	// user who granted it (Filter).
	ReadMailEnabled bool
	// ConfirmSends says when send_email asks its user before sending
	// (serve --confirm-sends; the zero value is auto).
	ConfirmSends ConfirmSends
	// Confirmed, when set, counts each send_email question by how it
	// ended: accepted, declined, cancelled, unanswered, or unaskable (the
	// client could not be asked).
	Confirmed func(answer string)
	// Prepared keeps the messages that wait in the compose view for their
	// user (compose_view.go); nil: no client is shown the view.
	Prepared *prepared.Store
	// MailReader reads the caller's Gmail (search_mail, save_to_drive).
	MailReader MailReader
	// Picks gives links to Google's Picker (serve --drive-scope file):
	// with it drive_pick is listed, drive_search says it searches the
	// files the user handed drivemail, and an answer that finds no file,
	// or names one drivemail cannot see, carries a link. nil: drivemail
	// reads the user's whole Drive.
	Picks Picks
	// RequestID returns the id the HTTP layer gave the current request, for
	// error messages a user can quote and logs an operator can find.
	RequestID func(ctx context.Context) string
}

// Tools returns every tool, ready for (*server.MCPServer).AddTools.
func Tools(d Deps) []server.ServerTool {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.RequestID == nil {
		d.RequestID = func(context.Context) string { return "" }
	}
	h := &handlers{deps: d}
	list := []server.ServerTool{
		{Tool: driveSearchTool(), Handler: h.guard("drive_search", h.driveSearch)},
		{Tool: driveGetFileTool(), Handler: h.guard("drive_get_file", h.driveGetFile)},
		// Filter swaps in send_email's, create_draft's and save_to_drive's
		// mail definitions, and lists search_mail, where mail can be read.
		{Tool: sendEmailTool(d.FileTransfer, false), Handler: h.guard("send_email", h.sendEmail)},
		{Tool: createDraftTool(d.FileTransfer, false), Handler: h.guard("create_draft", h.createDraft)},
		{Tool: requestUploadTool(), Handler: h.guard("request_upload", h.requestUpload)},
		{Tool: searchMailTool(), Handler: h.guard("search_mail", h.searchMail)},
		{Tool: saveToDriveTool(false), Handler: h.guard("save_to_drive", h.saveToDrive)},
		{Tool: sendDraftTool(), Handler: h.guard("send_draft", h.sendDraft)},
		// Listed by Filter only to a client that renders views.
		{Tool: sendPreparedTool(), Handler: h.guard("send_prepared", h.sendPrepared)},
	}
	if d.Picks != nil {
		// File mode: drive_search searches the files handed to drivemail,
		// and drive_pick hands it more.
		list[0].Tool = driveSearchFileTool()
		list = slices.Insert(list, 2, server.ServerTool{Tool: drivePickTool(), Handler: h.guard("drive_pick", h.drivePick)})
	}
	return list
}

// handlers holds the tool handlers' shared dependencies.
type handlers struct {
	deps Deps
}
