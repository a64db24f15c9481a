package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/drivemail/drivemail/compose"
)

// filesArg is the top-level argument that takes the files a chat client
// hands to tools (ChatGPT's file parameters, which Codex honours too):
// listed in the tool's _meta["openai/fileParams"], so the client puts the
// file the user attached there as {download_url, file_id, mime_type?,
// file_name?}. Its items are compose.ClientFile entries, after those of
// attachments.
const filesArg = "files"

// metaFileParams is the _meta key ChatGPT reads (Apps SDK reference).
const metaFileParams = "openai/fileParams"

// fileParamsMeta is the _meta of a tool whose filesArg takes client files.
func fileParamsMeta() *mcp.Meta {
	return &mcp.Meta{AdditionalFields: map[string]any{metaFileParams: []string{filesArg}}}
}

// clientFileFields are the keys of one client file object.
var clientFileFields = fields{
	names:   []string{"download_url", "file_id", "mime_type", "file_name"},
	aliases: map[string]string{"url": "download_url", "name": "file_name", "filename": "file_name"},
}

// parseClientFiles reads the files argument: a list of client file
// objects, or one on its own. first is the attachment number of the
// first (they follow the attachments entries), for sentences.
func parseClientFiles(raw json.RawMessage, first int) ([]compose.Attachment, error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if raw[0] == '[' {
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, refuse("%q must be a list of the file objects the client gives for files the user attached.", filesArg)
		}
	} else {
		items = []json.RawMessage{raw}
	}
	if err := compose.CheckEntries(first - 1 + len(items)); err != nil {
		return nil, err
	}
	out := make([]compose.Attachment, 0, len(items))
	for i, item := range items {
		a, err := parseClientFile(item, fmt.Sprintf("Attachment %d (%q entry %d)", first+i, filesArg, i+1))
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// parseClientFile reads one {download_url, file_id, mime_type?,
// file_name?}. A string in its place is what some clients (ChatGPT's
// mobile apps) send when they did not hand the file over.
func parseClientFile(raw json.RawMessage, what string) (compose.Attachment, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return compose.Attachment{}, refuse("%s is %s, not a file object with download_url and file_id: the chat client did not hand over the file itself "+
			"(some clients, such as ChatGPT's mobile apps, send a placeholder). Ask the user to attach the file again from ChatGPT on the web or desktop, "+
			"or to put it in Google Drive; then attach it by id in \"attachments\".", what, jsonKind(raw))
	}
	m, err := decodeObject(raw, clientFileFields, what)
	if err != nil {
		return compose.Attachment{}, err
	}
	var f compose.ClientFile
	if f.URL, err = m.requiredStr("download_url", "pass the file object exactly as the client gave it."); err != nil {
		return compose.Attachment{}, prefixed(what, err)
	}
	if f.FileID, err = m.str("file_id"); err != nil {
		return compose.Attachment{}, prefixed(what, err)
	}
	if f.MimeType, err = m.str("mime_type"); err != nil {
		return compose.Attachment{}, prefixed(what, err)
	}
	if f.Name, err = m.str("file_name"); err != nil {
		return compose.Attachment{}, prefixed(what, err)
	}
	if u := strings.ToLower(strings.TrimSpace(f.URL)); !strings.HasPrefix(u, "https://") {
		return compose.Attachment{}, refuse("%s: download_url is not an https URL. Pass the file object exactly as the client gave it; "+
			"for a file in Google Drive, give its id in \"attachments\" instead.", what)
	}
	return compose.Attachment{Source: f}, nil
}
