package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"slices"
	"strconv"
	"strings"

	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
)

// object is a JSON object's fields, kept raw so each can be read leniently.
type object map[string]json.RawMessage

// fields are the keys an object may have, and the other spellings models
// use for some of them, read as the key they stand for. A key that differs
// from one of names only in case and underscores ("fileId", "MIME_TYPE")
// is read as that name too.
type fields struct {
	names   []string
	aliases map[string]string // alias → name
}

// decodeObject reads raw as a JSON object whose keys are all in f. what
// names the object at the start of refusals ("The arguments of
// send_email", "Attachment 2"), so it begins with a capital.
func decodeObject(raw json.RawMessage, f fields, what string) (object, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return object{}, nil
	}
	var m object
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, refuse("%s must be a JSON object with the fields %s.", what, quoteList(f.names))
	}
	out := make(object, len(m))
	given := map[string]string{} // name → the key that gave it
	var unknown []string
	for k, v := range m {
		name := f.nameOf(k)
		if name == "" {
			unknown = append(unknown, k)
			continue
		}
		if other, dup := given[name]; dup {
			a, b := other, k
			if a > b {
				a, b = b, a
			}
			return nil, refuse("%s has both %q and %q, which mean the same; give %q only.", what, a, b, name)
		}
		given[name] = k
		out[name] = v
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		noun := "field"
		if len(unknown) > 1 {
			noun = "fields"
		}
		msg := fmt.Sprintf("%s: unknown %s %s. Use only %s.", what, noun, quoteList(unknown), quoteList(f.names))
		if hint := closeName(unknown[0], f.names); hint != "" {
			msg += fmt.Sprintf(" Did you mean %q?", hint)
		}
		return nil, refuse("%s", msg)
	}
	return out, nil
}

// nameOf is the name key stands for, or "".
func (f fields) nameOf(key string) string {
	if slices.Contains(f.names, key) {
		return key
	}
	if name, ok := f.aliases[key]; ok {
		return name
	}
	fold := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "") }
	for _, n := range f.names {
		if fold(n) == fold(key) {
			return n
		}
	}
	return ""
}

// closeName suggests the name a near miss most likely meant: the same
// name in the singular or plural.
func closeName(got string, names []string) string {
	norm := func(s string) string {
		return strings.TrimSuffix(strings.ReplaceAll(strings.ToLower(s), "_", ""), "s")
	}
	for _, n := range names {
		if norm(n) == norm(got) {
			return n
		}
	}
	return ""
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// isNull reports whether a raw value is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// str reads a string field; absent or null gives "".
func (m object) str(key string) (string, error) {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", refuse("%q must be a string, not %s.", key, jsonKind(raw))
	}
	return s, nil
}

// stringList reads a list of strings, or one string as a list of one;
// absent or null gives nil. what describes the expected value. The list's
// length is the caller's to bound (the MCP body cap bounds the work).
func (m object) stringList(key, what string) ([]string, error) {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if strings.TrimSpace(one) == "" {
			return nil, nil
		}
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, refuse("%q must be %s, not %s.", key, what, jsonKind(raw))
	}
	return list, nil
}

// requiredStr reads a string field that must be present and not blank.
func (m object) requiredStr(key, hint string) (string, error) {
	s, err := m.str(key)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(s) == "" {
		return "", refuse("%q is required: %s", key, hint)
	}
	return s, nil
}

// int reads a whole number, also when a model sent it as a string ("20").
func (m object) int(key string) (int64, bool, error) {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		return 0, false, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, false, refuse("%q must be a whole number, not %s.", key, jsonKind(raw))
		}
		n = json.Number(strings.TrimSpace(s))
	}
	if i, err := n.Int64(); err == nil {
		return i, true, nil
	}
	if f, err := n.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f), true, nil
	}
	return 0, false, refuse("%q must be a whole number, not %s.", key, strings.TrimSpace(string(raw)))
}

// bool reads a boolean, also when a model sent "true" or "false".
func (m object) bool(key string) (bool, error) {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err == nil {
		return b, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if v, err := strconv.ParseBool(strings.TrimSpace(s)); err == nil {
			return v, nil
		}
	}
	return false, refuse("%q must be true or false, not %s.", key, jsonKind(raw))
}

// jsonKind names what a raw JSON value is, for a refusal that says what
// came instead of what was expected; a string is quoted (shortened).
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return strconv.Quote(truncate(s, 40))
		}
		return "a string"
	case '[':
		return "a list"
	case '{':
		return "an object"
	case 't', 'f':
		return string(raw)
	case 'n':
		return "null"
	}
	return "a number"
}

// addresses reads a recipient field: a list of strings, or one string
// (which may itself hold several addresses separated by commas).
func (m object) addresses(key string) ([]string, error) {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		return nil, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return splitAddresses(one), nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, refuse("%q must be a list of email addresses, such as [\"ana@example.com\"], or one address as a string.", key)
	}
	var out []string
	for _, s := range list {
		out = append(out, splitAddresses(s)...)
	}
	return out, nil
}

// splitAddresses splits "a@x.com, B <b@y.com>" (or the same with
// semicolons, as Outlook writes lists) into its addresses when it parses
// as an address list; otherwise it keeps the text whole, so the message
// writer can say what is wrong with it. Each address is kept as written:
// a separator inside a quoted display name ("Smith; John"), a comment or
// angle brackets is part of that address, not a split.
func splitAddresses(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	parts := splitTopLevel(s)
	if len(parts) <= 1 {
		return parts
	}
	if _, err := mail.ParseAddressList(strings.Join(parts, ", ")); err != nil {
		return []string{s}
	}
	return parts
}

// splitTopLevel cuts s at the commas and semicolons that stand outside a
// quoted string, a comment and angle brackets; empty pieces are dropped.
func splitTopLevel(s string) []string {
	var (
		out             []string
		start           int
		quoted, escaped bool
		comment, angle  int
	)
	cut := func(end int) {
		if p := strings.TrimSpace(s[start:end]); p != "" {
			out = append(out, p)
		}
		start = end + 1
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case escaped:
			escaped = false
		case c == '\\' && (quoted || comment > 0):
			escaped = true
		case quoted:
			quoted = c != '"'
		case comment > 0 && c == '(':
			comment++
		case comment > 0 && c == ')':
			comment--
		case comment > 0:
		case c == '"':
			quoted = true
		case c == '(':
			comment = 1
		case c == '<':
			angle++
		case c == '>' && angle > 0:
			angle--
		case angle == 0 && (c == ',' || c == ';'):
			cut(i)
		}
	}
	cut(len(s))
	return out
}

// parseHandle reads a file handle (handle.Parse) and words a spelling it
// does not accept for the model. what names the argument ("Attachment 2",
// "\"folder_id\""); instead is what to pass instead, for that argument.
func parseHandle(s, what, instead string) (handle.Handle, error) {
	h, err := handle.Parse(s)
	if err == nil {
		return h, nil
	}
	var se *handle.SyntaxError
	if !errors.As(err, &se) {
		return nil, err
	}
	q := truncate(strings.TrimSpace(s), 80)
	switch se.Problem {
	case handle.Empty:
		return nil, refusal.New(kindBadFileID, "%s is empty. %s", what, instead)
	case handle.ForeignLink:
		return nil, refusal.New(kindBadFileID, "%s: %q is a link, not a Drive file id; drivemail takes files from Google Drive and does not download web pages. %s "+
			"To send the link itself, write it in the body.", what, q, instead)
	case handle.BadUpload:
		return nil, refusal.New(kindBadFileID, "%s: %q is not an mcp-file:// handle of one file (mcp-file://HOST/FILE_ID, as request_upload returns it). "+
			"Pass the handle unchanged. %s", what, q, instead)
	}
	return nil, refusal.New(kindBadFileID, "%s: %q is not a Drive file id (ids are letters, digits, '-' and '_', such as 1AbCdEfGhIjKlMnOpQrStUvWxYz012345). %s",
		what, q, instead)
}

// truncate shortens s for quoting in a refusal.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
