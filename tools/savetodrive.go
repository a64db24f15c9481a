package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/upload"
)

// ClientFiles saves files a chat client hands over into the caller's
// Drive; *upload.Service satisfies it.
type ClientFiles interface {
	SaveClientFile(ctx context.Context, req upload.SaveRequest) (upload.Result, error)
}

const saveToDriveDescription = `Save a file the user attached to this chat into their Google Drive, in the "drivemail uploads" folder unless folder_id names one. Returns its Drive id, to attach with send_email or share.`

func saveToDriveTool() mcp.Tool {
	t := newTool("save_to_drive", "Save a chat file to Drive", saveToDriveDescription,
		schema("save_to_drive.input"), schema("save_to_drive.output"),
		hints{readOnly: false, destructive: false, idempotent: false, openWorld: true})
	t.Meta = &mcp.Meta{AdditionalFields: map[string]any{metaFileParams: []string{"file"}}}
	return t
}

var saveToDriveFields = fields{names: []string{"file", "folder_id", "name"}, aliases: map[string]string{"filename": "name", "file_name": "name"}}

func (h *handlers) saveToDrive(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	sreq, err := parseSaveToDrive(req.Params.RawArguments)
	if err != nil {
		return nil, err
	}
	if h.deps.ClientFiles == nil {
		return nil, refusal.New(kindUploadsUnavailable, "This drivemail server does not save files from the conversation. Put the file in Google Drive another way (drive.google.com), then find it with drive_search.")
	}
	res, err := h.deps.ClientFiles.SaveClientFile(ctx, sreq)
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("Saved %s to Google Drive (%s): file id %s. Attach it with send_email as %q.",
		field(res.Name, ""), humanBytes(res.Size), res.FileID, res.FileID)
	return succeeded(text, saveResult{FileID: res.FileID, Name: res.Name, Size: res.Size, Handle: res.Handle}), nil
}

// saveResult is save_to_drive's structuredContent.
type saveResult struct {
	FileID string `json:"file_id"`
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	Handle string `json:"handle"`
}

// parseSaveToDrive reads save_to_drive's arguments: file (a client file
// object; a placeholder string is refused as send_email refuses it),
// folder_id and name.
func parseSaveToDrive(raw []byte) (upload.SaveRequest, error) {
	var r upload.SaveRequest
	m, err := decodeObject(raw, saveToDriveFields, "The arguments of save_to_drive")
	if err != nil {
		return r, err
	}
	if isNull(m["file"]) {
		return r, refuse("\"file\" is required: the file object the client gives for a file the user attached.")
	}
	a, err := parseClientFile(m["file"], "\"file\"")
	if err != nil {
		return r, err
	}
	src := a.Source.(compose.ClientFile)
	r.URL, r.MimeType, r.Name = src.URL, src.MimeType, src.Name
	name, err := m.str("name")
	if err != nil {
		return r, err
	}
	if name = strings.TrimSpace(name); name != "" {
		r.Name = name
	}
	folder, err := m.str("folder_id")
	if err != nil {
		return r, err
	}
	if folder = strings.TrimSpace(folder); folder != "" {
		h, err := parseHandle(folder, "\"folder_id\"", fmt.Sprintf("Give the id of a folder drivemail created, or leave folder_id out to use the %q folder.", upload.DefaultFolderName))
		if err != nil {
			return r, err
		}
		ref, ok := handle.DriveRef(h)
		if !ok {
			return r, refusal.New(kindBadFileID, "\"folder_id\" is a file-transfer URI, not a folder. Leave folder_id out to use the %q folder.", upload.DefaultFolderName)
		}
		r.FolderID = ref.ID
	}
	return r, nil
}
