package drivesvc

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// permissionFieldNames are the Permission resource's properties (drive/v3
// discovery); permListFieldNames PermissionList's.
var (
	permissionFieldNames = setOf("kind", "id", "type", "role", "emailAddress", "domain", "allowFileDiscovery",
		"displayName", "photoLink", "expirationTime", "teamDrivePermissionDetails", "permissionDetails", "deleted",
		"view", "pendingOwner", "inheritedPermissionsDisabled")
	permListFieldNames = setOf("kind", "nextPageToken", "permissions")
	defaultPermMask    = mask{"kind": nil, "id": nil, "type": nil, "role": nil}
	defaultPermsMask   = mask{"kind": nil, "nextPageToken": nil, "permissions": defaultPermMask}
)

// maxPermPageSize is permissions.list's pageSize bound; a shared-drive
// item's list comes in pages of this many when none is asked for.
const maxPermPageSize = 100

// errNoSharing is Drive's 403 to a caller who may see a file but not its
// sharing ("Resolve errors": insufficientFilePermissions).
func errNoSharing(id string) *apiError {
	return &apiError{http.StatusForbidden, "insufficientFilePermissions",
		"The user does not have sufficient permissions for file " + echo(id) + ".", ""}
}

// errSharing is Drive's 400 invalidSharingRequest, with the user message
// in Google's wrapping.
func errSharing(userMessage string) *apiError {
	return &apiError{http.StatusBadRequest, "invalidSharingRequest", "Bad Request. User message: \"" + userMessage + "\"", ""}
}

// sharing returns the file id names if c may see its sharing: Google's
// 404 if c does not see it, 403 if c may not share it. The caller holds s.mu.
func (s *Service) sharing(c caller, id string) (*file, *apiError) {
	f, aerr := s.lookup(c, id)
	if aerr == nil && !s.canShare(c, f) {
		aerr = errNoSharing(id)
	}
	return f, aerr
}

// handlePermissionsList serves permissions.list: the sharing of a file
// the caller may share, in pages.
func (s *Service) handlePermissionsList(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authorize(w, r, scopesReadMeta, driveBroaderScopes)
	if !ok {
		return
	}
	q := r.URL.Query()
	size := 0
	if raw := q.Get("pageSize"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > maxPermPageSize {
			errOutOfRange(raw, "pageSize", 1, maxPermPageSize).write(w)
			return
		}
		size = n
	}
	m, aerr := fieldsParam(q.Get("fields"), defaultPermsMask, permListFieldNames, map[string]map[string]bool{"permissions": permissionFieldNames})
	if aerr != nil {
		aerr.write(w)
		return
	}
	id := r.PathValue("fileId")
	s.mu.RLock()
	f, aerr := s.sharing(c, id)
	var all []map[string]any
	if aerr == nil {
		for _, p := range s.allPermissions(f) {
			all = append(all, s.permissionResource(f, p))
		}
		if size == 0 && f.driveID != "" {
			size = maxPermPageSize // "100 for shared drive items" (discovery, pageSize)
		}
	}
	s.mu.RUnlock()
	if aerr != nil {
		aerr.write(w)
		return
	}
	pageQuery := url.Values{"q": {"permissions " + id}}
	off := 0
	if tok := q.Get("pageToken"); tok != "" {
		if off, ok = readPageToken(tok, pageQuery); !ok {
			errInvalid("pageToken").write(w)
			return
		}
	}
	if size == 0 {
		size = len(all) // My Drive: "the entire list" without pageSize
	}
	end := min(off+size, len(all))
	page := []map[string]any{}
	if off < len(all) {
		page = all[off:end]
	}
	resp := map[string]any{"kind": "drive#permissionList", "permissions": page}
	if end < len(all) {
		resp["nextPageToken"] = pageToken(end, pageQuery)
	}
	core.WriteJSON(w, http.StatusOK, m.Apply(resp))
}

// handlePermissionGet serves permissions.get.
func (s *Service) handlePermissionGet(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authorize(w, r, scopesReadMeta, driveBroaderScopes)
	if !ok {
		return
	}
	m, aerr := fieldsParam(r.URL.Query().Get("fields"), defaultPermMask, permissionFieldNames, nil)
	if aerr != nil {
		aerr.write(w)
		return
	}
	id, pid := r.PathValue("fileId"), r.PathValue("permissionId")
	s.mu.RLock()
	f, aerr := s.sharing(c, id)
	var res map[string]any
	if aerr == nil {
		for _, p := range s.allPermissions(f) {
			if p.ID == pid {
				res = s.permissionResource(f, p)
			}
		}
		if res == nil {
			aerr = &apiError{http.StatusNotFound, "notFound", "Permission not found: " + echo(pid) + ".", "permissionId"}
		}
	}
	s.mu.RUnlock()
	if aerr != nil {
		aerr.write(w)
		return
	}
	core.WriteJSON(w, http.StatusOK, m.Apply(res))
}

// permissionBody is the Permission a permissions.create request carries.
type permissionBody struct {
	Type               string `json:"type"`
	Role               string `json:"role"`
	EmailAddress       string `json:"emailAddress"`
	Domain             string `json:"domain"`
	AllowFileDiscovery bool   `json:"allowFileDiscovery"`
}

// handlePermissionCreate serves permissions.create: a drive or drive.file
// token of someone who may share the file adds a permission.
func (s *Service) handlePermissionCreate(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authorize(w, r, scopesWrite, driveBroaderScopes)
	if !ok {
		return
	}
	q := r.URL.Query()
	m, aerr := fieldsParam(q.Get("fields"), defaultPermMask, permissionFieldNames, nil)
	if aerr != nil {
		aerr.write(w)
		return
	}
	var body permissionBody
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxMetadataBody)).Decode(&body); err != nil {
		errBadRequest("The request body must be a Permission resource in JSON.", "").write(w)
		return
	}
	p, notify, aerr := s.checkPermissionRequest(body, q)
	if aerr != nil {
		aerr.write(w)
		return
	}
	id := r.PathValue("fileId")
	s.mu.Lock()
	f, aerr := s.lookup(c, id)
	if aerr == nil {
		aerr = s.checkShare(c, f, p, notify)
	}
	var res map[string]any
	if aerr == nil {
		f.grant(p)
		res = s.permissionResource(f, p)
	}
	s.mu.Unlock()
	if aerr != nil {
		aerr.write(w)
		return
	}
	s.deps.Stats.PermissionCreated()
	core.WriteJSON(w, http.StatusOK, m.Apply(res))
}

// checkPermissionRequest validates a create request's body and
// parameters as Drive does, and says whether Google would notify.
func (s *Service) checkPermissionRequest(body permissionBody, q url.Values) (permission, bool, *apiError) {
	switch {
	case body.Type == "":
		return permission{}, false, &apiError{http.StatusBadRequest, "required", "The permission type field is required.", "permission.type"}
	case body.Role == "":
		return permission{}, false, &apiError{http.StatusBadRequest, "required", "The permission role field is required.", "permission.role"}
	case body.Role == "owner" && !boolParam(q.Get("transferOwnership")):
		return permission{}, false, &apiError{http.StatusForbidden, "forbidden",
			"The transferOwnership parameter must be enabled when the permission role is 'owner'.", "transferOwnership"}
	case body.Role == "owner":
		return permission{}, false, errBadRequest("The emulator does not transfer ownership: share with another role.", "transferOwnership")
	case (body.Type == "user" || body.Type == "group") && body.EmailAddress == "":
		return permission{}, false, &apiError{http.StatusBadRequest, "required", "The permission emailAddress field is required.", "permission.emailAddress"}
	case body.Type == "domain" && body.Domain == "":
		return permission{}, false, &apiError{http.StatusBadRequest, "required", "The permission domain field is required.", "permission.domain"}
	}
	p, err := permissionOf(Permission{Type: body.Type, Role: body.Role, EmailAddress: body.EmailAddress,
		Domain: body.Domain, AllowFileDiscovery: body.AllowFileDiscovery})
	if err != nil {
		return permission{}, false, errBadRequest("Invalid permission: "+err.Error()+".", "permission")
	}
	notify := p.Type == "user" || p.Type == "group"
	if raw := q.Get("sendNotificationEmail"); raw != "" {
		asked := boolParam(raw)
		if asked && !notify {
			// "This defaults to true for users and groups, and is not
			// allowed for other requests." (discovery)
			return permission{}, false, errBadRequest("sendNotificationEmail is only for user and group permissions.", "sendNotificationEmail")
		}
		notify = asked
	}
	return p, notify, nil
}

// checkShare refuses a new permission on f that Drive would: a caller who
// may not share it or whose drive.file app may not write it, a role
// outside its place, and a user without a Google account when nobody is
// notified. The caller holds s.mu.
func (s *Service) checkShare(c caller, f *file, p permission, notify bool) *apiError {
	if f.isRoot {
		return errInsufficientFilePermissions
	}
	if !s.canShare(c, f) {
		return errInsufficientFilePermissions
	}
	if aerr := s.checkAppWrite(c, f); aerr != nil {
		return aerr
	}
	if (p.Role == "organizer" || p.Role == "fileOrganizer") && f.driveID == "" {
		return errSharing("The role " + p.Role + " is only for items in shared drives.")
	}
	if p.Type == "user" && !notify && !s.deps.Accounts.HasUser(p.EmailAddress) {
		return errSharing("You are trying to invite " + p.EmailAddress + ". Since there is no Google account associated with this email address, you must check the \"Notify people\" box to invite this recipient.")
	}
	return nil
}
