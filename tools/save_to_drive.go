package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/exportfmt"
	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/upload"
)

// save_to_drive puts one file into the user's Drive and returns its
// Drive id and mcp-file:// handle, from one of two sources: a file the
// user attached in a chat client that hands files to tools (file, a
// ChatGPT file object declared in _meta["openai/fileParams"]), or a
// Gmail attachment (message_id and attachment). Both go through the
// upload service, whose checks (scope, size, rate limit, folder) run
// before the source is opened.
//
// It is listed to everyone with file alone: the server always fetches
// client files (--client-file-hosts), a tools/list request does not say
// which client asks (the transport is stateless, and a client's name is
// not part of its bearer token), and a client that hands over no file
// gets a refusal that says what to do. The mail arguments are added, by
// Filter, only where mail can be read.

// Saver puts a file into the Drive of acct, the caller: *upload.Service,
// with the folder rules, limits and checks of /upload; a source is
// opened only once those have passed.
type Saver interface {
	// Save stores the stream open gives (a Gmail attachment's).
	Save(ctx context.Context, acct *account.Account, f upload.SaveFile, open func(context.Context) (io.ReadCloser, error)) (upload.Result, error)
	// SaveClientFile fetches a file a chat client hands over, under
	// clientfile's rules, and stores it.
	SaveClientFile(ctx context.Context, acct *account.Account, req upload.SaveRequest) (upload.Result, error)
}

// saveSource is where save_to_drive's bytes come from: a file the chat
// client hands over (clientSource) or a Gmail attachment (mailSource). A
// third source is a type here, its arguments in saveToDriveFields and a
// case in pickSaveSource.
type saveSource interface {
	save(ctx context.Context, acct *account.Account, s Saver, folderID, rename string) (upload.Result, error)
}

// SourceFile is what a source tells of a file before any byte moves.
type SourceFile struct {
	Name     string
	MimeType string
	Size     int64 // -1 when unknown
}

// SaveResult is save_to_drive's structuredContent.
type SaveResult struct {
	FileID   string `json:"file_id"`
	Name     string `json:"name"`
	MimeType string `json:"mime_type"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
	Handle   string `json:"handle"`
}

const saveToDriveDescription = `Save a file the user attached to this chat (file: the client's object, unchanged) into their Google Drive, in folder_id (one drivemail created) or "drivemail uploads". Returns its Drive id and mcp-file:// handle for send_email.`

const saveToDriveMailDescription = `Save a file into the user's Google Drive, streamed from its source: a Gmail attachment (message_id and attachment, from search_mail), or a file the user attached to this chat (file). Returns its Drive file id and mcp-file:// handle: send_email then attaches it by that handle, or sends it as a link (link: true).

It goes into the "drivemail uploads" folder, or into folder_id when that is a folder drivemail created or the user opened with it.`

// saveToDriveTool is save_to_drive's definition: file alone, or with the
// Gmail attachment arguments where mail can be read.
func saveToDriveTool(mail bool) mcp.Tool {
	title, description, input := "Save a chat file to Drive", saveToDriveDescription, schema("save_to_drive.input")
	if mail {
		title, description, input = "Save a Gmail attachment or chat file to Drive", saveToDriveMailDescription, saveToDriveMailInput()
	}
	t := newTool("save_to_drive", title, description, input, schema("save_to_drive.output"),
		hints{readOnly: false, destructive: true, idempotent: false, openWorld: true})
	t.Meta = &mcp.Meta{AdditionalFields: map[string]any{metaFileParams: []string{saveFileArg}}}
	return t
}

// saveFileArg is save_to_drive's client file argument.
const saveFileArg = "file"

// saveToDriveMailArgs are the properties save_to_drive gains where mail
// can be read.
const saveToDriveMailArgs = `{
  "message_id": {"type": "string", "description": "A Gmail attachment's message id, from search_mail."},
  "attachment": {"type": "string", "description": "The attachment's file name in that message."}
}`

// saveToDriveMailInput is save_to_drive's input schema with the Gmail
// attachment arguments. Exactly one source is required, file or
// message_id with attachment, which the parser enforces: a oneOf at the
// top of an input schema is refused by some model APIs (Anthropic's
// among them), so nothing is required here.
func saveToDriveMailInput() json.RawMessage {
	var s map[string]any
	mustUnmarshal(schema("save_to_drive.input"), &s)
	var extra map[string]any
	mustUnmarshal([]byte(saveToDriveMailArgs), &extra)
	props := s["properties"].(map[string]any)
	for k, v := range extra {
		props[k] = v
	}
	delete(s, "required")
	return mustMarshal(s)
}

// saveToDriveFields are save_to_drive's arguments. filename and
// file_name mean the attachment's name for a Gmail attachment, the new
// name for a client file (saveFields picks).
var saveToDriveFields = fields{names: []string{saveFileArg, "message_id", "attachment", "folder_id", "name"}}

// saveFields is saveToDriveFields with filename and file_name read as the
// source given calls for: a Gmail attachment's name, else the new name.
func saveFields(raw json.RawMessage) fields {
	f := saveToDriveFields
	to := "name"
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) == nil {
		for k := range keys {
			if f.nameOf(k) == "message_id" {
				to = "attachment"
			}
		}
	}
	f.aliases = map[string]string{"filename": to, "file_name": to}
	return f
}

func (h *handlers) saveToDrive(ctx context.Context, acct *account.Account, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	raw := req.Params.RawArguments
	m, err := decodeObject(raw, saveFields(raw), "The arguments of save_to_drive")
	if err != nil {
		return nil, err
	}
	src, err := h.pickSaveSource(acct, m)
	if err != nil {
		return nil, err
	}
	folder, err := saveFolder(m)
	if err != nil {
		return nil, err
	}
	rename, err := m.str("name")
	if err != nil {
		return nil, err
	}
	if h.deps.Saver == nil {
		if _, ok := src.(clientSource); ok {
			return nil, refusal.New(kindUploadsUnavailable, "This drivemail server does not save files from the conversation. Put the file in Google Drive another way (drive.google.com), then find it with drive_search.")
		}
		return nil, refusal.New(kindUploadsUnavailable, "This drivemail server does not put files into Drive. Attach the file to a message instead, as {\"message_id\", \"attachment\"}.")
	}
	res, err := src.save(ctx, acct, h.deps.Saver, folder, strings.TrimSpace(rename))
	if err != nil {
		return nil, err
	}
	out := SaveResult{FileID: res.FileID, Name: res.Name, MimeType: res.MimeType, Size: res.Size, SHA256: res.SHA256, Handle: res.Handle}
	text := fmt.Sprintf("Saved %s (%s) to Google Drive: file id %s, handle %s. Attach it with send_email by that handle, or send it as a link with {\"file_id\": %q, \"link\": true}.",
		field(out.Name, ""), humanBytes(out.Size), out.FileID, out.Handle, out.FileID)
	return succeeded(text, out), nil
}

// pickSaveSource reads the one source the arguments name: file, or
// message_id with attachment.
func (h *handlers) pickSaveSource(acct *account.Account, m object) (saveSource, error) {
	hasFile := !isNull(m[saveFileArg])
	hasMail := !isNull(m["message_id"]) || !isNull(m["attachment"])
	switch {
	case hasFile && hasMail:
		return nil, refuse("Give either \"file\" (a file the user attached to this chat) or \"message_id\" with \"attachment\" (a Gmail attachment), not both: save_to_drive saves one file per call.")
	case hasMail:
		return h.mailSaveSource(acct, m)
	case !hasFile && h.deps.ReadMailEnabled && acct.MayReadMail():
		return nil, refuse("Give the file to save: \"file\", the object the client gives for a file the user attached to this chat, or \"message_id\" and \"attachment\" for a Gmail attachment (search_mail finds them).")
	case !hasFile:
		return nil, refuse("\"file\" is required: the file object the client gives for a file the user attached.")
	}
	a, err := parseClientFile(m[saveFileArg], "\"file\"")
	if err != nil {
		return nil, err
	}
	return clientSource(a.Source.(compose.ClientFile)), nil
}

// saveFolder reads folder_id: a Drive folder's id or link, "" for the
// uploads folder.
func saveFolder(m object) (string, error) {
	folder, err := m.str("folder_id")
	if err != nil || strings.TrimSpace(folder) == "" {
		return "", err
	}
	instead := fmt.Sprintf("Give the id of a folder drivemail created, or leave folder_id out to use the %q folder.", upload.DefaultFolderName)
	hd, err := parseHandle(strings.TrimSpace(folder), "\"folder_id\"", instead)
	if err != nil {
		return "", err
	}
	ref, ok := handle.DriveRef(hd)
	if !ok {
		return "", refusal.New(kindBadFileID, "\"folder_id\" is a file-transfer URI, not a folder. Leave folder_id out to use the %q folder.", upload.DefaultFolderName)
	}
	return ref.ID, nil
}

// savedName is the Drive file's name: rename when given (the source's
// extension kept, as send_email keeps it), else the source's own.
func savedName(info SourceFile, rename string) string {
	if strings.TrimSpace(rename) == "" {
		return exportfmt.CleanName(info.Name)
	}
	ext := path.Ext(exportfmt.CleanName(info.Name))
	if ext == "" {
		ext = exportfmt.ExtByMimeType(info.MimeType)
	}
	return exportfmt.WithExt(rename, ext)
}

// clientSource is a file the chat client hands over, fetched by the
// upload service under clientfile's rules (it words their refusals).
type clientSource compose.ClientFile

func (c clientSource) save(ctx context.Context, acct *account.Account, s Saver, folderID, rename string) (upload.Result, error) {
	name := strings.TrimSpace(c.Name)
	if rename != "" {
		name = savedName(SourceFile{Name: c.Name, MimeType: c.MimeType, Size: -1}, rename)
	}
	return s.SaveClientFile(ctx, acct, upload.SaveRequest{URL: c.URL, MimeType: c.MimeType, Name: name, FolderID: folderID})
}

// mailSaveSource reads a Gmail attachment's arguments, where mail may be
// read.
func (h *handlers) mailSaveSource(acct *account.Account, m object) (saveSource, error) {
	id, err := m.requiredStr("message_id", "give the id of the message (search_mail finds it).")
	if err != nil {
		return nil, err
	}
	msg, err := parseMessageID(id, "\"message_id\"")
	if err != nil {
		return nil, err
	}
	name, err := m.requiredStr("attachment", "give the attachment's file name, as search_mail lists it.")
	if err != nil {
		return nil, err
	}
	if err := h.mayReadMail(acct); err != nil {
		return nil, err
	}
	if h.deps.MailReader == nil {
		return nil, errors.New("save_to_drive: no MailReader")
	}
	return &mailSource{r: h.deps.MailReader, msg: msg, name: name}, nil
}

// mailSource is a Gmail attachment: described from one messages.get,
// its bytes streamed from attachments.get once the Saver's checks pass.
type mailSource struct {
	r    MailReader
	msg  handle.Message
	name string
	att  gmail.Attachment
}

func (s *mailSource) save(ctx context.Context, acct *account.Account, sv Saver, folderID, rename string) (upload.Result, error) {
	info, err := s.describe(ctx, acct)
	if err != nil {
		return upload.Result{}, err
	}
	name := savedName(info, rename)
	open := func(ctx context.Context) (io.ReadCloser, error) { return s.open(ctx, acct) }
	return sv.Save(ctx, acct, upload.SaveFile{Name: name, MimeType: driveType(info.MimeType, name), Size: info.Size, FolderID: folderID}, open)
}

// describe names the file and gives its type and size before any byte
// moves, so that limits and a missing file cost nothing.
func (s *mailSource) describe(ctx context.Context, acct *account.Account) (SourceFile, error) {
	m, err := s.r.Message(ctx, acct, s.msg.ID)
	if err != nil {
		return SourceFile{}, mailError(err, s.msg.ID)
	}
	a, err := compose.FindAttachment(m, s.name)
	if err != nil {
		return SourceFile{}, err
	}
	s.att = a
	return SourceFile{Name: a.Name, MimeType: a.MimeType, Size: a.Size}, nil
}

// open streams the bytes; a stream yields all of them or fails.
func (s *mailSource) open(ctx context.Context, acct *account.Account) (io.ReadCloser, error) {
	rc, err := s.r.OpenAttachment(ctx, acct, s.msg.ID, s.att)
	if err != nil {
		return nil, savedNothing(mailError(err, s.msg.ID))
	}
	return &mailStream{rc: rc, id: s.msg.ID}, nil
}

// driveType is the type the file is stored with: the source's, unless it
// says nothing (octet-stream), when Drive's guess from the name is better.
func driveType(mimeType, name string) string {
	if t := strings.ToLower(strings.TrimSpace(mimeType)); t == "" || t == exportfmt.OctetStream || strings.HasPrefix(t, "multipart/") {
		return exportfmt.MimeTypeByName(name)
	}
	return mimeType
}

// mailStream words a failure part-way as a refusal, so the model reads
// what happened: nothing was saved.
type mailStream struct {
	rc io.ReadCloser
	id string
}

func (m *mailStream) Read(p []byte) (int, error) {
	n, err := m.rc.Read(p)
	if err != nil && err != io.EOF {
		switch {
		case errors.Is(err, gmail.ErrCorrupt):
			err = refusal.Wrap(err, kindMailCorrupt, "The attachment did not arrive intact from Gmail, so nothing was saved. Try again.")
		case errors.Is(err, gmail.ErrStalled):
			err = refusal.Wrap(err, kindMailUnavailable, "Gmail stalled while sending the attachment, so nothing was saved. Try again in a minute.")
		default:
			err = savedNothing(mailError(err, m.id))
			if _, ok := refusal.As(err); !ok {
				err = refusal.Wrap(err, kindMailUnavailable, "Gmail stopped sending the attachment part-way, so nothing was saved. Try again in a minute.")
			}
		}
	}
	return n, err
}

func (m *mailStream) Close() error { return m.rc.Close() }

// savedNothing adds to a refusal that nothing was saved.
func savedNothing(err error) error {
	r, ok := err.(*refusal.Refusal)
	if !ok {
		return err
	}
	out := *r
	out.Text = strings.TrimSuffix(out.Text, ".") + ". Nothing was saved."
	return &out
}
