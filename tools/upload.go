package tools

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/upload"
)

const requestUploadDescription = `Get a one-time URL and curl command that put a file from the user's computer (not one in the chat) into their Google Drive, and the mcp-file:// handle that attaches it with send_email once uploaded.

Run the curl where the file is (such as Claude Code's shell) before expires_at. A file already in Drive needs no upload: find it with drive_search.`

func requestUploadTool() mcp.Tool {
	return newTool("request_upload", "Get a URL to upload a file to Drive", requestUploadDescription,
		schema("request_upload.input"), schema("request_upload.output"),
		hints{readOnly: false, destructive: true, idempotent: false, openWorld: false})
}

var requestUploadFields = fields{names: []string{"name", "mime_type", "size", "sha256", "folder_id"}, aliases: map[string]string{"filename": "name", "file_name": "name"}}

// maxUploadNameBytes bounds a Drive file name.
const maxUploadNameBytes = 255

func (h *handlers) requestUpload(ctx context.Context, acct *account.Account, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ureq, err := parseUpload(req.Params.RawArguments)
	if err != nil {
		return nil, err
	}
	if h.deps.Uploads == nil {
		return nil, refusal.New(kindUploadsUnavailable, "This drivemail server does not offer uploads. Put the file in Google Drive another way (drive.google.com), then find it with drive_search.")
	}
	t, err := h.deps.Uploads.RequestUpload(ctx, acct, ureq)
	if err != nil {
		return nil, err
	}
	out := UploadResult{UploadURL: t.UploadURL, Method: t.Method, ExpiresAt: t.ExpiresAt, Handle: t.Handle,
		Curl: curlCommand(t.UploadURL, ureq.Name)}
	text := fmt.Sprintf("Upload %s with:\n%s\nThe URL works once, until %s.", quoteVisible(ureq.Name), out.Curl, out.ExpiresAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	if out.Handle != "" {
		text += fmt.Sprintf("\nThen attach it with send_email as %q.", out.Handle)
	} else {
		text += "\nThe upload answers with JSON holding the file's file_id and handle: attach the file with send_email by that handle."
	}
	return succeeded(text, out), nil
}

// parseUpload validates request_upload's arguments.
func parseUpload(raw []byte) (upload.Request, error) {
	var u upload.Request
	m, err := decodeObject(raw, requestUploadFields, "The arguments of request_upload")
	if err != nil {
		return u, err
	}
	if u.Name, err = m.requiredStr("name", "give the file's name, such as \"report.pdf\"."); err != nil {
		return u, err
	}
	u.Name = strings.TrimSpace(u.Name)
	if len(u.Name) > maxUploadNameBytes {
		return u, refuse("\"name\" is %d bytes long; use a name of at most %d bytes.", len(u.Name), maxUploadNameBytes)
	}
	if strings.ContainsAny(u.Name, "/\\") || strings.ContainsFunc(u.Name, isControl) {
		return u, refuse("\"name\" must be a file name without folders or control characters, such as \"report.pdf\"; use folder_id to choose a folder.")
	}
	if u.MimeType, err = m.str("mime_type"); err != nil {
		return u, err
	}
	size, given, err := m.int("size")
	if err != nil {
		return u, err
	}
	if given && size < 0 {
		return u, refuse("\"size\" is %d; give the file's size in bytes, or leave it out.", size)
	}
	if given {
		u.Size = &size
	}
	if u.SHA256, err = m.str("sha256"); err != nil {
		return u, err
	}
	u.SHA256 = strings.ToLower(strings.TrimSpace(u.SHA256))
	if u.SHA256 != "" {
		if b, err := hex.DecodeString(u.SHA256); err != nil || len(b) != 32 {
			return u, refuse("\"sha256\" must be 64 hexadecimal characters (the output of sha256sum), or left out.")
		}
	}
	folder, err := m.str("folder_id")
	if err != nil {
		return u, err
	}
	if folder = strings.TrimSpace(folder); folder != "" {
		h, err := parseHandle(folder, "\"folder_id\"", fmt.Sprintf("Give the id of a folder drivemail created, or leave folder_id out to use the %q folder.", upload.DefaultFolderName))
		if err != nil {
			return u, err
		}
		ref, ok := handle.DriveRef(h)
		if !ok {
			return u, refusal.New(kindBadFileID, "\"folder_id\" is a file-transfer URI, not a folder. Give the id of a folder drivemail created, or leave folder_id out to use the %q folder.", upload.DefaultFolderName)
		}
		u.FolderID = ref.ID // uploads go into a folder by id alone
	}
	return u, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// curlCommand is a shell command that PUTs the file name to url, as
// every upload ticket is used (upload issues PUT tickets only). It fails
// on a refusal but still prints the server's sentence (-f would print
// only the status code); --fail-with-body needs curl 7.76 or later.
// --globoff keeps curl from reading [ ] and { } in a file name as
// patterns ("report [final].pdf"). A name with invisible or bidi
// characters is spelled in octal (shellWord), so the line shows what runs.
func curlCommand(url, name string) string {
	return fmt.Sprintf("curl -sS --fail-with-body --globoff -T %s %s", shellWord(name), shellQuote(url))
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
