package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/drivemail/drivemail/compose"
)

// fileURIsArg is the argument send_email and create_draft take, with
// --file-transfer, for the MCP file-transfer draft (SEP-2631): the URIs
// of files the client uploaded out of band (files/prepareUpload,
// files/authorizeUpload), or small files inline as data: URIs. It is
// declared both ways the draft's revisions define: an x-mcp-file
// annotation on its items (in the schema), and an inputFiles sidecar on
// the tool (InputFiles, which the server adds to tools/list).
const fileURIsArg = "file_uris"

// fileURIsProperty is its schema; describe leaves out its description
// (create_draft's schema carries none).
func fileURIsProperty(describe bool) map[string]any {
	p := map[string]any{
		"type":     "array",
		"maxItems": compose.MaxFiles,
		"items": map[string]any{
			"type": "string",
			"x-mcp-file": map[string]any{
				"maxSize":       compose.MaxAttachmentBytes,
				"transferModes": []string{"inline", "upload"},
			},
		},
	}
	if describe {
		p["description"] = "A file your client uploaded: its URI (files/prepareUpload), or a small file as a data: URI."
	}
	return p
}

// InputFiles is the inputFiles sidecar of each tool that takes file
// URIs, by tool name: the first revision of the draft declares file
// inputs there, beside the schema, where the tool definition of the MCP
// library has no field for it.
func InputFiles() map[string]json.RawMessage {
	side, _ := json.Marshal(map[string]any{fileURIsArg: map[string]any{"maxFileSize": compose.MaxAttachmentBytes}})
	return map[string]json.RawMessage{"send_email": side, "create_draft": side}
}

// withFileURIs adds the file_uris property to an input schema.
func withFileURIs(schema json.RawMessage, describe bool) json.RawMessage {
	var s map[string]any
	mustUnmarshal(schema, &s)
	s["properties"].(map[string]any)[fileURIsArg] = fileURIsProperty(describe)
	return mustMarshal(s)
}

// parseFileURIs reads file_uris: a list of strings, or one. A data: URI
// is content written into the call (compose counts it toward its 1 MiB);
// anything else must be a file handle, a file-transfer URI above all.
// first is the attachment number of the first entry.
func parseFileURIs(raw json.RawMessage, first int) ([]compose.Attachment, error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return nil, nil
	}
	var list []string
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		list = []string{one}
	} else if err := json.Unmarshal(raw, &list); err != nil {
		return nil, refuse("%q must be a list of file URIs (from files/prepareUpload) or data: URIs.", fileURIsArg)
	}
	if err := compose.CheckEntries(first - 1 + len(list)); err != nil {
		return nil, err
	}
	out := make([]compose.Attachment, 0, len(list))
	for i, s := range list {
		what := fmt.Sprintf("Attachment %d (%q entry %d)", first+i, fileURIsArg, i+1)
		s = strings.TrimSpace(s)
		if len(s) >= 5 && strings.EqualFold(s[:5], "data:") {
			out = append(out, compose.Attachment{Name: dataURIName(s), Source: compose.Content{Encoding: compose.DataURI, Data: s}})
			continue
		}
		h, err := parseHandle(s, what, "Pass the URI your client got from files/prepareUpload unchanged, or the file as a data: URI.")
		if err != nil {
			return nil, err
		}
		out = append(out, compose.Attachment{Source: compose.DriveFile{Handle: h}})
	}
	return out, nil
}

// dataURIName is the name= parameter of a data: URI (the first draft's
// examples carry one), else "attachment": compose adds the extension of
// its type.
func dataURIName(s string) string {
	head, _, _ := strings.Cut(s[len("data:"):], ",")
	for _, p := range strings.Split(head, ";")[1:] {
		if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "name") && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return "attachment"
}
