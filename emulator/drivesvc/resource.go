package drivesvc

import (
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// rfc3339Millis is how Drive writes timestamps.
const rfc3339Millis = "2006-01-02T15:04:05.000Z"

func fmtTime(t time.Time) string { return t.UTC().Format(rfc3339Millis) }

// userResource is Drive's User object.
func userResource(email, me string) map[string]any {
	return map[string]any{
		"kind":         "drive#user",
		"displayName":  displayName(email),
		"emailAddress": email,
		"me":           email == me,
		"permissionId": permissionID(email),
	}
}

// webViewLink is where a person opens the file. The emulator serves a
// placeholder page at each of Google's path shapes on its own origin.
func webViewLink(origin string, f *file) string {
	var p string
	switch f.kind {
	case KindDoc:
		p = "/document/d/" + f.id + "/edit?usp=drivesdk"
	case KindSheet:
		p = "/spreadsheets/d/" + f.id + "/edit?usp=drivesdk"
	case KindSlides:
		p = "/presentation/d/" + f.id + "/edit?usp=drivesdk"
	case KindDrawing:
		p = "/drawings/d/" + f.id + "/edit?usp=drivesdk"
	case KindFolder:
		p = "/drive/folders/" + f.id + "?usp=drivesdk"
	default:
		p = "/file/d/" + f.id + "/view?usp=drivesdk"
	}
	if f.resourceKey != "" {
		p += "&resourcekey=" + url.QueryEscape(f.resourceKey)
	}
	return origin + p
}

// fileResource is the whole File resource of f as c sees it; handlers cut
// it down with the request's field mask. The caller holds s.mu.
func (s *Service) fileResource(c caller, f *file, origin string) map[string]any {
	owner := f.owner == c.email
	member := false
	if d := s.drives[f.driveID]; d != nil {
		member = d.members[c.email]
	}
	canEdit := owner || member
	folder := f.kind == KindFolder
	m := map[string]any{
		"kind":                         "drive#file",
		"id":                           f.id,
		"name":                         f.name,
		"mimeType":                     f.mimeType,
		"starred":                      false,
		"trashed":                      f.trashed,
		"explicitlyTrashed":            f.trashed,
		"spaces":                       []string{"drive"},
		"version":                      strconv.FormatInt(f.version, 10),
		"webViewLink":                  webViewLink(origin, f),
		"iconLink":                     "https://drive-thirdparty.googleusercontent.com/16/type/" + f.mimeType,
		"hasThumbnail":                 false,
		"thumbnailVersion":             "0",
		"viewedByMe":                   owner,
		"createdTime":                  fmtTime(f.created),
		"modifiedTime":                 fmtTime(f.modified),
		"modifiedByMe":                 canEdit,
		"shared":                       f.shared() || f.driveID != "",
		"ownedByMe":                    owner,
		"writersCanShare":              true,
		"viewersCanCopyContent":        !f.noDownload,
		"copyRequiresWriterPermission": f.noDownload,
		"isAppAuthorized":              f.authorizes(c.client),
		"hasAugmentedPermissions":      false,
		"quotaBytesUsed":               "0",
		"permissionIds":                []string{},
		"capabilities": map[string]any{
			"canDownload":                    !f.noDownload,
			"canCopy":                        !f.noDownload && !folder,
			"canEdit":                        canEdit,
			"canComment":                     canEdit,
			"canRename":                      canEdit,
			"canTrash":                       canEdit,
			"canUntrash":                     canEdit,
			"canDelete":                      canEdit,
			"canShare":                       s.canShare(c, f),
			"canModifyContent":               canEdit,
			"canReadRevisions":               canEdit && !folder,
			"canAddChildren":                 folder && canEdit,
			"canListChildren":                folder,
			"canRemoveChildren":              folder && canEdit,
			"canMoveItemWithinDrive":         canEdit,
			"canReadDrive":                   member,
			"canChangeViewersCanCopyContent": canEdit,
		},
	}
	if canEdit {
		m["modifiedByMeTime"] = fmtTime(f.modified)
	}
	if !f.isRoot {
		m["parents"] = slices.Clone(f.parents)
	}
	if f.driveID != "" {
		m["driveId"] = f.driveID
		m["teamDriveId"] = f.driveID
		m["lastModifyingUser"] = userResource(c.email, c.email)
	} else {
		m["owners"] = []map[string]any{userResource(f.owner, c.email)}
		m["lastModifyingUser"] = userResource(f.owner, c.email)
	}
	var ids []string
	var perms []map[string]any
	for _, p := range s.allPermissions(f) {
		ids = append(ids, p.ID)
		perms = append(perms, s.permissionResource(f, p))
	}
	m["permissionIds"] = ids
	// "The full list of permissions for the file. This is only available
	// if the requesting user can share the file. Not populated for items
	// in shared drives." (drive/v3 discovery, File.permissions)
	if f.driveID == "" && s.canShare(c, f) {
		m["permissions"] = perms
	}
	if !owner && f.sharedWithUser(c.email) {
		m["sharingUser"] = userResource(f.owner, c.email)
		m["sharedWithMeTime"] = fmtTime(f.created)
	}
	if f.description != "" {
		m["description"] = f.description
	}
	if f.trashed {
		m["trashedTime"] = fmtTime(f.modified)
	}
	if f.resourceKey != "" {
		m["resourceKey"] = f.resourceKey
		m["linkShareMetadata"] = map[string]any{"securityUpdateEligible": true, "securityUpdateEnabled": true}
	}
	switch {
	case f.kind == KindBinary:
		size := strconv.FormatInt(f.blob.Size, 10)
		m["size"] = size
		m["quotaBytesUsed"] = size
		m["md5Checksum"] = f.blob.MD5
		m["sha256Checksum"] = f.blob.SHA256
		m["headRevisionId"] = f.blob.ID
		m["originalFilename"] = f.name
		if ext := strings.TrimPrefix(path.Ext(f.name), "."); ext != "" {
			m["fileExtension"] = ext
			_, full, _ := strings.Cut(f.name, ".")
			m["fullFileExtension"] = full
		}
	case f.kind.native():
		m["exportLinks"] = exportLinks(origin, f)
	case f.kind == KindShortcut:
		details := map[string]any{"targetId": f.target, "targetMimeType": f.tMime}
		if t := s.files[f.target]; t != nil && t.resourceKey != "" {
			details["targetResourceKey"] = t.resourceKey
		}
		m["shortcutDetails"] = details
	}
	return m
}
