package drivesvc

import (
	"errors"
	"strings"
)

// mask is a parsed partial-response selection (the `fields` parameter):
// each key names a field and maps to the selection inside it, nil meaning
// the whole field. A nil mask selects everything.
type mask map[string]mask

// maxFieldsLen bounds the fields parameter.
const maxFieldsLen = 8 << 10

var errMaskSyntax = errors.New("fields syntax")

// parseMask reads Google's partial-response syntax: comma-separated
// paths, "/" or "." between nested names, parentheses for a sub-selection,
// "*" for every field: "files(id,name),nextPageToken",
// "sheets.properties(sheetId,title)", "capabilities/canDownload", "*".
func parseMask(s string) (mask, error) {
	if len(s) > maxFieldsLen {
		return nil, errMaskSyntax
	}
	p := &maskParser{s: s}
	m, err := p.list()
	if err != nil {
		return nil, err
	}
	if p.skipSpace(); p.i != len(p.s) {
		return nil, errMaskSyntax
	}
	return m, nil
}

type maskParser struct {
	s     string
	i     int
	depth int
}

func (p *maskParser) skipSpace() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *maskParser) list() (mask, error) {
	m := mask{}
	for {
		if err := p.item(m); err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		return m, nil
	}
}

func (p *maskParser) item(into mask) error {
	var path []string
	for {
		p.skipSpace()
		start := p.i
		for p.i < len(p.s) && isFieldChar(p.s[p.i]) {
			p.i++
		}
		if p.i == start {
			return errMaskSyntax
		}
		path = append(path, p.s[start:p.i])
		if p.i < len(p.s) && (p.s[p.i] == '/' || p.s[p.i] == '.') {
			p.i++
			continue
		}
		break
	}
	var sub mask
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		if p.depth++; p.depth > 8 {
			return errMaskSyntax
		}
		var err error
		if sub, err = p.list(); err != nil {
			return err
		}
		p.depth--
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return errMaskSyntax
		}
		p.i++
	}
	for i := len(path) - 1; i > 0; i-- {
		sub = mask{path[i]: sub}
	}
	into.merge(path[0], sub)
	return nil
}

// merge adds key with sub-selection sub; a whole-field selection wins.
func (m mask) merge(key string, sub mask) {
	old, ok := m[key]
	switch {
	case !ok:
		m[key] = sub
	case old == nil || sub == nil:
		m[key] = nil
	default:
		for k, v := range sub {
			old.merge(k, v)
		}
	}
}

func isFieldChar(c byte) bool {
	return c == '_' || c == '*' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// apply returns the fields of obj that m selects.
func (m mask) apply(obj map[string]any) map[string]any {
	if m == nil {
		return obj
	}
	out := map[string]any{}
	if sub, ok := m["*"]; ok {
		for k, v := range obj {
			out[k] = applyTo(sub, v)
		}
	}
	for k, sub := range m {
		if v, ok := obj[k]; ok && k != "*" {
			out[k] = applyTo(sub, v)
		}
	}
	return out
}

func applyTo(sub mask, v any) any {
	if sub == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		return sub.apply(x)
	case []map[string]any:
		out := make([]map[string]any, len(x))
		for i, e := range x {
			out[i] = sub.apply(e)
		}
		return out
	default:
		return v
	}
}

// unknownField returns the first top-level name of m outside known, or "".
func (m mask) unknownField(known map[string]bool) string {
	for k := range m {
		if k != "*" && !known[k] {
			return k
		}
	}
	return ""
}

// fileFieldNames are the File resource's properties (drive/v3 discovery).
var fileFieldNames = setOf(
	"appProperties", "capabilities", "clientEncryptionDetails", "contentHints", "contentRestrictions",
	"copyRequiresWriterPermission", "createdTime", "description", "downloadRestrictions", "driveId",
	"explicitlyTrashed", "exportLinks", "fileExtension", "folderColorRgb", "fullFileExtension",
	"hasAugmentedPermissions", "hasThumbnail", "headRevisionId", "iconLink", "id", "imageMediaMetadata",
	"inheritedPermissionsDisabled", "isAppAuthorized", "kind", "labelInfo", "lastModifyingUser",
	"linkShareMetadata", "md5Checksum", "mimeType", "modifiedByMe", "modifiedByMeTime", "modifiedTime",
	"name", "originalFilename", "ownedByMe", "owners", "parents", "permissionIds", "permissions",
	"properties", "quotaBytesUsed", "resourceKey", "sha1Checksum", "sha256Checksum", "shared",
	"sharedWithMeTime", "sharingUser", "shortcutDetails", "size", "spaces", "starred", "teamDriveId",
	"thumbnailLink", "thumbnailVersion", "trashed", "trashedTime", "trashingUser", "version",
	"videoMediaMetadata", "viewedByMe", "viewedByMeTime", "viewersCanCopyContent", "webContentLink",
	"webViewLink", "writersCanShare",
)

var fileListFieldNames = setOf("kind", "nextPageToken", "incompleteSearch", "files")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Google's default selections when a request sends no `fields`.
var (
	defaultFileMask = mask{"kind": nil, "id": nil, "name": nil, "mimeType": nil}
	defaultListMask = mask{"kind": nil, "nextPageToken": nil, "incompleteSearch": nil, "files": defaultFileMask}
)

// fieldsParam parses the request's fields against known names; def is the
// selection when the parameter is absent. An unknown name is Google's 400.
func fieldsParam(raw string, def mask, known map[string]bool, nested map[string]map[string]bool) (mask, *apiError) {
	if strings.TrimSpace(raw) == "" {
		return def, nil
	}
	m, err := parseMask(raw)
	if err != nil {
		return nil, errFieldSelection(raw)
	}
	if bad := m.unknownField(known); bad != "" {
		return nil, errFieldSelection(bad)
	}
	for name, names := range nested {
		if bad := m[name].unknownField(names); bad != "" {
			return nil, errFieldSelection(name + "/" + bad)
		}
	}
	if _, all := m["*"]; all {
		return nil, nil
	}
	return m, nil
}
