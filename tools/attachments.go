package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/internal/refusal"
)

// attachmentFields are the keys an attachment object may have, and the
// spellings other tools use for them: {id}, {url} (a Drive link or an
// mcp-file:// handle), {filename}.
var attachmentFields = fields{
	names: []string{"file_id", "as", "sheet", "name", "link", "share", "text", "base64", "content", "mime_type"},
	aliases: map[string]string{
		"id":           "file_id",
		"url":          "file_id",
		"uri":          "file_id",
		"filename":     "name",
		"file_name":    "name",
		"content_type": "mime_type",
		"contentType":  "mime_type",
	},
}

// envelopeFields are the keys of a chat client's file envelope string.
var envelopeFields = fields{names: []string{"file_name", "mime_type", "base64"}}

// sourceKeys are the attachment object's sources, of which it gives one.
var sourceKeys = []string{"file_id", "text", "base64", "content"}

// findFile is the advice for an attachment that names no file.
const findFile = "Find the file with drive_search and pass its id."

// parseAttachments reads the attachments argument: a list, or a single
// entry given on its own. Each entry is a string (Drive id, mcp-file://
// handle, Drive link, or a JSON file envelope) or an attachment object.
func parseAttachments(raw json.RawMessage) ([]compose.Attachment, error) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if raw[0] == '[' {
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, refuse("\"attachments\" must be a list of Drive file ids or attachment objects.")
		}
	} else {
		items = []json.RawMessage{raw}
	}
	if err := compose.CheckEntries(len(items)); err != nil {
		return nil, err
	}
	out := make([]compose.Attachment, 0, len(items))
	for i, item := range items {
		a, err := parseAttachment(item, fmt.Sprintf("Attachment %d", i+1))
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// parseAttachment reads one entry; what names it at the start of refusals
// ("Attachment 2"), as compose names entries.
func parseAttachment(raw json.RawMessage, what string) (compose.Attachment, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return compose.Attachment{}, refuse("%s is not a valid JSON string. Give a Drive file id from drive_search as a string.", what)
		}
		return parseAttachmentString(s, what)
	case len(raw) > 0 && raw[0] == '{':
		return parseAttachmentObject(raw, what)
	default:
		return compose.Attachment{}, refuse("%s must be a Drive file id (a string from drive_search) or an object such as {\"file_id\": \"…\", \"as\": \"pdf\"}.", what)
	}
}

// parseAttachmentString reads a string entry.
func parseAttachmentString(s, what string) (compose.Attachment, error) {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, "{"):
		return parseEncodedObject(s, what)
	case strings.HasPrefix(strings.ToLower(s), "data:"):
		return compose.Attachment{}, refuse("%s is a data: URI without a file name. Give it as {\"name\": \"file.ext\", \"content\": \"data:…\"}.", what)
	}
	h, err := parseHandle(s, what, findFile)
	if err != nil {
		return compose.Attachment{}, err
	}
	return compose.Attachment{Source: compose.DriveFile{Handle: h}}, nil
}

// parseEncodedObject reads a JSON object that arrived as a string: a chat
// client's file envelope {"file_name","mime_type","base64"}, or an
// attachment object a model encoded twice.
func parseEncodedObject(s, what string) (compose.Attachment, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &keys); err != nil {
		return compose.Attachment{}, refuse("%s looks like JSON but does not parse. Give a Drive file id, or an object such as {\"file_id\": \"…\"}.", what)
	}
	if _, ok := keys["file_name"]; !ok {
		return parseAttachmentObject(json.RawMessage(s), what)
	}
	return parseEnvelope(s, what)
}

// parseEnvelope reads a chat client's file envelope, as a string entry or
// as the "content" of an attachment object (a middleware fills an x-file
// field with it): file_name and mime_type become the name and type, and
// base64 the bytes, which compose counts toward its MaxModelBytes.
func parseEnvelope(s, what string) (compose.Attachment, error) {
	m, err := decodeObject(json.RawMessage(s), envelopeFields, what+" (a file envelope)")
	if err != nil {
		return compose.Attachment{}, err
	}
	var a compose.Attachment
	c := compose.Content{Encoding: compose.Base64}
	if a.Name, err = m.str("file_name"); err != nil {
		return a, prefixed(what, err)
	}
	if c.Data, err = m.requiredStr("base64", "the envelope needs the file's bytes in base64."); err != nil {
		return a, prefixed(what, err)
	}
	if c.MimeType, err = m.str("mime_type"); err != nil {
		return a, prefixed(what, err)
	}
	a.Source = c
	return a, nil
}

// parseAttachmentObject reads an attachment object: exactly one source
// (file_id, text, base64 or content), with the options that fit it.
func parseAttachmentObject(raw json.RawMessage, what string) (compose.Attachment, error) {
	if isMailAttachment(raw) {
		return parseMailAttachment(raw, what)
	}
	m, err := decodeObject(raw, attachmentFields, what)
	if err != nil {
		return compose.Attachment{}, err
	}
	var sources []string
	for _, k := range sourceKeys {
		if v, ok := m[k]; ok && !isNull(v) {
			sources = append(sources, k)
		}
	}
	switch len(sources) {
	case 0:
		return compose.Attachment{}, refuse("%s has no source. Give \"file_id\" (a Drive id from drive_search), or \"name\" with \"text\", \"base64\" or \"content\".", what)
	case 1:
	default:
		return compose.Attachment{}, refuse("%s has %s; give exactly one source per attachment.", what, quoteList(sources))
	}
	var a compose.Attachment
	if a.Name, err = m.str("name"); err != nil {
		return a, prefixed(what, err)
	}
	mimeType, err := m.str("mime_type")
	if err != nil {
		return a, prefixed(what, err)
	}
	if sources[0] == "file_id" {
		if mimeType != "" {
			return a, refuse("%s: \"mime_type\" applies only to content given with \"text\", \"base64\" or \"content\"; a Drive file's type comes from Drive. To convert a Google file, use \"as\".", what)
		}
		a.Source, err = parseDriveFile(m, what)
		return a, err
	}
	for _, k := range []string{"as", "sheet", "link", "share"} {
		if v, ok := m[k]; ok && !isNull(v) {
			return a, refuse("%s: %q applies only to a Drive file given by \"file_id\". Leave it out for content written into the call, "+
				"or attach the file from Drive by its id in \"file_id\" instead of its bytes.", what, k)
		}
	}
	c := compose.Content{MimeType: mimeType}
	if c.Data, err = m.str(sources[0]); err != nil {
		return a, prefixed(what, err)
	}
	switch trimmed := strings.TrimSpace(c.Data); {
	case sources[0] == "text":
		c.Encoding = compose.Text
	case sources[0] == "base64":
		c.Encoding = compose.Base64
	case strings.HasPrefix(trimmed, "{"):
		// base64 and data: URIs never start with "{": a file envelope.
		return contentEnvelope(a, c, what)
	case strings.HasPrefix(strings.ToLower(trimmed), "data:"):
		c.Encoding = compose.DataURI
	default:
		c.Encoding = compose.Base64
	}
	a.Source = c
	return a, nil
}

// contentEnvelope unpacks a file envelope given as "content". The
// object's own name and mime_type win; the envelope's fill them when
// absent.
func contentEnvelope(a compose.Attachment, c compose.Content, what string) (compose.Attachment, error) {
	if !json.Valid([]byte(c.Data)) {
		return a, refuse("%s: \"content\" starts like a JSON file envelope but does not parse. Give the file's bytes as base64 or a data: URI, "+
			"or the envelope {\"file_name\", \"mime_type\", \"base64\"} unchanged.", what)
	}
	env, err := parseEnvelope(c.Data, what+"'s \"content\"")
	if err != nil {
		return a, err
	}
	envContent := env.Source.(compose.Content)
	if strings.TrimSpace(a.Name) == "" {
		a.Name = env.Name
	}
	if strings.TrimSpace(c.MimeType) != "" {
		envContent.MimeType = c.MimeType
	}
	a.Source = envContent
	return a, nil
}

// parseDriveFile reads file_id (a handle), as, sheet, link and share.
func parseDriveFile(m object, what string) (compose.DriveFile, error) {
	var d compose.DriveFile
	id, err := m.str("file_id")
	if err != nil {
		return d, prefixed(what, err)
	}
	if d.Handle, err = parseHandle(id, what, findFile); err != nil {
		return d, err
	}
	as, err := m.str("as")
	if err != nil {
		return d, prefixed(what, err)
	}
	d.As = normalizeFormat(as)
	if d.Sheet, err = m.str("sheet"); err != nil {
		return d, prefixed(what, err)
	}
	d.Sheet = strings.TrimSpace(d.Sheet)
	if d.Link, err = m.bool("link"); err != nil {
		return d, prefixed(what, err)
	}
	share, err := m.str("share")
	if err != nil {
		return d, prefixed(what, err)
	}
	// " Reader " is reader; which roles compose takes is its business.
	d.Share = strings.ToLower(strings.TrimSpace(share))
	return d, nil
}

// normalizeFormat forgives the usual spellings of an export format:
// " .PDF " is "pdf". Synonyms and validity are compose's business.
func normalizeFormat(s string) string {
	return strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), ".")
}

// prefixed puts what in front of a field refusal so the model knows which
// attachment it concerns.
func prefixed(what string, err error) error {
	if r, ok := refusal.As(err); ok {
		return &refusal.Refusal{Kind: r.Kind, Text: what + ": " + r.Text, Err: r.Err}
	}
	return err
}
