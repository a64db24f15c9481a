package drivesvc

import (
	"strings"

	"github.com/drivemail/drivemail/emulator/internal/fieldmask"
)

// mask is a parsed `fields` selection (see fieldmask).
type mask = fieldmask.Mask

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
	m, err := fieldmask.Parse(raw)
	if err != nil {
		return nil, errFieldSelection(raw)
	}
	if bad := m.Unknown(known); bad != "" {
		return nil, errFieldSelection(bad)
	}
	for name, names := range nested {
		if bad := m[name].Unknown(names); bad != "" {
			return nil, errFieldSelection(name + "/" + bad)
		}
	}
	if _, all := m["*"]; all {
		return nil, nil
	}
	return m, nil
}
