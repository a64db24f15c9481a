package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/drivemail/drivemail/compose"
)

// maxAttachmentEntries bounds the attachments list before any work is done.
// The message limit (10 files) is compose's to enforce with its own words;
// this only stops a runaway list early.
const maxAttachmentEntries = 100

// attachmentFields are the keys an attachment object may have.
var attachmentFields = []string{"file_id", "as", "sheet", "name", "link", "text", "base64", "content", "mime_type"}

// envelopeFields are the keys of a chat client's file envelope string.
var envelopeFields = []string{"file_name", "mime_type", "base64"}

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
	if len(items) > maxAttachmentEntries {
		return nil, refuse("\"attachments\" has %d entries; a message takes at most 10 files. Send fewer, or share a Drive folder link instead.", len(items))
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
	case s == "":
		return compose.Attachment{}, refuse("%s is empty. Give a Drive file id from drive_search.", what)
	case strings.HasPrefix(s, "{"):
		return parseEncodedObject(s, what)
	case strings.HasPrefix(strings.ToLower(s), "data:"):
		return compose.Attachment{}, refuse("%s is a data: URI without a file name. Give it as {\"name\": \"file.ext\", \"content\": \"data:…\"}.", what)
	}
	id, err := driveFileID(s)
	if err != nil {
		return compose.Attachment{}, prefixed(what, err)
	}
	return compose.Attachment{FileID: id}, nil
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
	env, err := parseEnvelope(s, what)
	if err != nil {
		return compose.Attachment{}, err
	}
	if strings.TrimSpace(env.Name) == "" {
		return compose.Attachment{}, refuse("%s: \"file_name\" is required: the envelope needs the file's name.", what)
	}
	return env, nil
}

// parseEnvelope reads a chat client's file envelope, as a string entry or
// as the "content" of an attachment object (a middleware fills an x-file
// field with it): file_name and mime_type become Name and MimeType, and
// the base64 is the bytes, which compose counts toward MaxModelBytes like
// any base64.
func parseEnvelope(s, what string) (compose.Attachment, error) {
	m, err := decodeObject(json.RawMessage(s), envelopeFields, what+" (a file envelope)")
	if err != nil {
		return compose.Attachment{}, err
	}
	var a compose.Attachment
	if a.Name, err = m.str("file_name"); err != nil {
		return a, prefixed(what, err)
	}
	if a.Base64, err = m.requiredStr("base64", "the envelope needs the file's bytes in base64."); err != nil {
		return a, prefixed(what, err)
	}
	if a.MimeType, err = m.str("mime_type"); err != nil {
		return a, prefixed(what, err)
	}
	return a, nil
}

// parseAttachmentObject reads an attachment object: exactly one source
// (file_id, text, base64 or content), with the options that fit it.
func parseAttachmentObject(raw json.RawMessage, what string) (compose.Attachment, error) {
	m, err := decodeObject(raw, attachmentFields, what)
	if err != nil {
		return compose.Attachment{}, err
	}
	var a compose.Attachment
	var sources []string
	for _, k := range []string{"file_id", "text", "base64", "content"} {
		if v, ok := m[k]; ok && !isNull(v) {
			sources = append(sources, k)
		}
	}
	switch len(sources) {
	case 0:
		return a, refuse("%s has no source. Give \"file_id\" (a Drive id from drive_search), or \"name\" with \"text\", \"base64\" or \"content\".", what)
	case 1:
	default:
		return a, refuse("%s has %s; give exactly one source per attachment.", what, quoteList(sources))
	}
	if a.Name, err = m.str("name"); err != nil {
		return a, prefixed(what, err)
	}
	if a.MimeType, err = m.str("mime_type"); err != nil {
		return a, prefixed(what, err)
	}
	if sources[0] == "file_id" {
		return parseFileOptions(m, a, what)
	}
	for _, k := range []string{"as", "sheet", "link"} {
		if v, ok := m[k]; ok && !isNull(v) {
			return a, refuse("%s: %q applies only to a Drive file given by \"file_id\". Leave it out for content written into the call, "+
				"or attach the file from Drive by its id in \"file_id\" instead of its bytes.", what, k)
		}
	}
	switch sources[0] {
	case "text":
		t, err := m.str("text")
		if err != nil {
			return a, prefixed(what, err)
		}
		a.Text = &t
	case "base64":
		if a.Base64, err = m.str("base64"); err != nil {
			return a, prefixed(what, err)
		}
	case "content":
		if a.Content, err = m.str("content"); err != nil {
			return a, prefixed(what, err)
		}
		if strings.HasPrefix(strings.TrimSpace(a.Content), "{") {
			if a, err = contentEnvelope(a, what); err != nil {
				return a, err
			}
		}
	}
	if strings.TrimSpace(a.Name) == "" {
		return a, refuse("%s: \"name\" is required with %q (the file name the recipient sees, such as \"notes.csv\").", what, sources[0])
	}
	return a, nil
}

// contentEnvelope unpacks a file envelope given as "content" (base64 and
// data: URIs never start with "{"). The object's own name and mime_type
// win; the envelope's fill them when absent.
func contentEnvelope(a compose.Attachment, what string) (compose.Attachment, error) {
	if !json.Valid([]byte(a.Content)) {
		return a, refuse("%s: \"content\" starts like a JSON file envelope but does not parse. Give the file's bytes as base64 or a data: URI, "+
			"or the envelope {\"file_name\", \"mime_type\", \"base64\"} unchanged.", what)
	}
	env, err := parseEnvelope(a.Content, what+"'s \"content\"")
	if err != nil {
		return a, err
	}
	if strings.TrimSpace(a.Name) == "" {
		a.Name = env.Name
	}
	if strings.TrimSpace(a.MimeType) == "" {
		a.MimeType = env.MimeType
	}
	a.Content, a.Base64 = "", env.Base64
	return a, nil
}

// parseFileOptions reads file_id, as, sheet and link.
func parseFileOptions(m object, a compose.Attachment, what string) (compose.Attachment, error) {
	id, err := m.str("file_id")
	if err != nil {
		return a, prefixed(what, err)
	}
	if a.FileID, err = driveFileID(id); err != nil {
		return a, prefixed(what, err)
	}
	as, err := m.str("as")
	if err != nil {
		return a, prefixed(what, err)
	}
	a.As = normalizeFormat(as)
	if a.Sheet, err = m.str("sheet"); err != nil {
		return a, prefixed(what, err)
	}
	a.Sheet = strings.TrimSpace(a.Sheet)
	if a.Link, err = m.bool("link"); err != nil {
		return a, prefixed(what, err)
	}
	if a.Link && a.As != "" {
		return a, refuse("%s has both \"link\": true and \"as\": %q. Use \"link\" to send a link to the file, or \"as\" to attach an exported copy, not both.", what, a.As)
	}
	if a.Link && a.Sheet != "" {
		return a, refuse("%s has both \"link\": true and \"sheet\"; a link always opens the whole spreadsheet. Drop \"sheet\", or use \"as\": \"csv\" with it.", what)
	}
	if a.MimeType != "" {
		return a, refuse("%s: \"mime_type\" applies only to content given with \"text\", \"base64\" or \"content\"; a Drive file's type comes from Drive. To convert a Google file, use \"as\".", what)
	}
	return a, nil
}

// normalizeFormat forgives the usual spellings of an export format:
// " .PDF " is "pdf". Synonyms and validity are compose's business.
func normalizeFormat(s string) string {
	return strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), ".")
}

// prefixed puts what in front of a field refusal so the model knows which
// attachment it concerns.
func prefixed(what string, err error) error {
	if text, ok := refusalText(err); ok {
		return &Refusal{Reason: what + ": " + text}
	}
	return err
}
