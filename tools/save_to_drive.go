package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/drivemail/drivemail/exportfmt"
	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/upload"
)

// Saver puts a stream into the caller's Drive: *upload.Service, with the
// folder rules, limits and checks of /upload; the source is opened only
// once those have passed.
type Saver interface {
	Save(ctx context.Context, f upload.SaveFile, open func(context.Context) (io.ReadCloser, error)) (upload.Result, error)
}

// SaveSource is where the bytes save_to_drive copies come from. A Gmail
// attachment is one (mailSource); a file the chat client holds can be
// another, read from its own argument (see saveSource).
type SaveSource interface {
	// Describe names the file and gives its type and size (-1 when
	// unknown) before any byte moves, so that limits and a missing file
	// cost nothing. Its errors are refusals for the model.
	Describe(ctx context.Context) (SourceFile, error)
	// Open streams the bytes. A stream must yield all of them or fail:
	// ending early with io.EOF would save a truncated file.
	Open(ctx context.Context) (io.ReadCloser, error)
}

// SourceFile is what Describe tells of a file.
type SourceFile struct {
	Name     string
	MimeType string
	Size     int64
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

const saveToDriveDescription = `Save an attachment of a Gmail message into the user's Google Drive, streamed straight from Gmail, and get its Drive file id and mcp-file:// handle: send_email then attaches it by that handle, or sends it as a link (link: true).

message_id and attachment (the file's name) come from search_mail. It goes into the "drivemail uploads" folder, or into folder_id when that is a folder drivemail created or the user opened with it.`

func saveToDriveTool() mcp.Tool {
	return newTool("save_to_drive", "Save a Gmail attachment to Drive", saveToDriveDescription,
		schema("save_to_drive.input"), schema("save_to_drive.output"),
		hints{readOnly: false, destructive: false, idempotent: false, openWorld: true})
}

var saveToDriveFields = fields{names: []string{"message_id", "attachment", "folder_id", "name"},
	aliases: map[string]string{"filename": "attachment", "file_name": "attachment"}}

func (h *handlers) saveToDrive(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	m, err := decodeObject(req.Params.RawArguments, saveToDriveFields, "The arguments of save_to_drive")
	if err != nil {
		return nil, err
	}
	src, err := h.saveSource(ctx, m)
	if err != nil {
		return nil, err
	}
	folder, err := m.str("folder_id")
	if err != nil {
		return nil, err
	}
	if folder = strings.TrimSpace(folder); folder != "" {
		hd, err := parseHandle(folder, "\"folder_id\"", "Leave it out to use the \"drivemail uploads\" folder.")
		if err != nil {
			return nil, err
		}
		ref, _ := handle.DriveRef(hd)
		folder = ref.ID
	}
	rename, err := m.str("name")
	if err != nil {
		return nil, err
	}
	if h.deps.Saver == nil {
		return nil, refusal.New(kindUploadsUnavailable, "This drivemail server does not put files into Drive. Attach the file to a message instead, as {\"message_id\", \"attachment\"}.")
	}
	info, err := src.Describe(ctx)
	if err != nil {
		return nil, err
	}
	name := savedName(info, rename)
	res, err := h.deps.Saver.Save(ctx, upload.SaveFile{Name: name, MimeType: driveType(info.MimeType, name), Size: info.Size, FolderID: folder}, src.Open)
	if err != nil {
		return nil, err
	}
	out := SaveResult{FileID: res.FileID, Name: res.Name, MimeType: res.MimeType, Size: res.Size, SHA256: res.SHA256, Handle: res.Handle}
	text := fmt.Sprintf("Saved %s (%s) to Google Drive: file id %s, handle %s. Attach it with send_email by that handle, or send it as a link with {\"file_id\": %q, \"link\": true}.",
		field(out.Name, ""), humanBytes(out.Size), out.FileID, out.Handle, out.FileID)
	return succeeded(text, out), nil
}

// saveSource picks the source the arguments name: today a Gmail
// attachment (message_id and attachment). A second source adds its
// argument to saveToDriveFields and a case here.
func (h *handlers) saveSource(ctx context.Context, m object) (SaveSource, error) {
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
	if err := h.mayReadMail(ctx); err != nil {
		return nil, err
	}
	if h.deps.MailReader == nil {
		return nil, errors.New("save_to_drive: no MailReader")
	}
	return &mailSource{r: h.deps.MailReader, msg: msg, name: name}, nil
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

// driveType is the type the file is stored with: the source's, unless it
// says nothing (octet-stream), when Drive's guess from the name is better.
func driveType(mimeType, name string) string {
	if t := strings.ToLower(strings.TrimSpace(mimeType)); t == "" || t == exportfmt.OctetStream || strings.HasPrefix(t, "multipart/") {
		return exportfmt.MimeTypeByName(name)
	}
	return mimeType
}

// mailSource is a Gmail attachment as a SaveSource.
type mailSource struct {
	r    MailReader
	msg  handle.Message
	name string
	att  gmail.Attachment
}

func (s *mailSource) Describe(ctx context.Context) (SourceFile, error) {
	m, err := s.r.Message(ctx, s.msg.ID)
	if err != nil {
		return SourceFile{}, mailError(err, s.msg.ID)
	}
	a, ok := m.Find(s.name)
	if !ok {
		return SourceFile{}, noAttachment(m, s.msg.ID, s.name)
	}
	s.att = a
	return SourceFile{Name: a.Name, MimeType: a.MimeType, Size: a.Size}, nil
}

func (s *mailSource) Open(ctx context.Context) (io.ReadCloser, error) {
	rc, err := s.r.OpenAttachment(ctx, s.msg.ID, s.att)
	if err != nil {
		return nil, savedNothing(mailError(err, s.msg.ID))
	}
	return &mailStream{rc: rc, id: s.msg.ID}, nil
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

// noAttachment lists the names the message has.
func noAttachment(m gmail.Message, id, name string) error {
	if len(m.Attachments) == 0 {
		return refusal.New(kindUnknownAttachment, "Gmail message %s has no attachments. Check the message id with search_mail (has:attachment finds messages with files).", id)
	}
	names := make([]string, 0, len(m.Attachments))
	for _, n := range m.Names() {
		names = append(names, quoteVisible(truncate(n, 80)))
	}
	return refusal.New(kindUnknownAttachment, "Gmail message %s has no attachment named %s. Its attachments are: %s. Use one of those names as \"attachment\".",
		id, quoteVisible(truncate(name, 80)), strings.Join(names, ", "))
}
