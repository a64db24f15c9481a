package drivesvc

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// OAuth scopes the emulated Drive and Sheets honour.
const (
	ScopeDrive           = "https://www.googleapis.com/auth/drive"
	ScopeDriveReadonly   = "https://www.googleapis.com/auth/drive.readonly"
	ScopeDriveFile       = "https://www.googleapis.com/auth/drive.file"
	ScopeDriveMetadata   = "https://www.googleapis.com/auth/drive.metadata"
	ScopeDriveMetadataRO = "https://www.googleapis.com/auth/drive.metadata.readonly"
	ScopeSheets          = "https://www.googleapis.com/auth/spreadsheets"
	ScopeSheetsReadonly  = "https://www.googleapis.com/auth/spreadsheets.readonly"
)

// Scope sets per kind of call.
var (
	scopesReadMeta    = []string{ScopeDrive, ScopeDriveReadonly, ScopeDriveFile, ScopeDriveMetadata, ScopeDriveMetadataRO}
	scopesReadContent = []string{ScopeDrive, ScopeDriveReadonly, ScopeDriveFile}
	scopesWrite       = []string{ScopeDrive, ScopeDriveFile}
	scopesSheetsRead  = []string{ScopeSheets, ScopeSheetsReadonly, ScopeDrive, ScopeDriveReadonly, ScopeDriveFile}
	scopesSheetsWrite = []string{ScopeSheets, ScopeDrive, ScopeDriveFile}
)

// resourceKeysHeader carries "fileId/resourceKey" pairs for link-shared files.
const resourceKeysHeader = "X-Goog-Drive-Resource-Keys"

// maxResourceKeys bounds the pairs read from one request.
const maxResourceKeys = 100

// caller is who makes a request and what the request allows them to see.
type caller struct {
	email  string
	client string
	// fileOnly: the token has drive.file but no broader Drive scope, so
	// only files its app created or was opened with are visible.
	fileOnly bool
	// appWrites: the token's only Drive scope that writes is drive.file,
	// so it may change, and add files to, only the files and folders its
	// app created or was opened with, whatever else it may read.
	appWrites bool
	// allDrives: the request set supportsAllDrives=true.
	allDrives bool
	// keys maps file ids to the resource keys the request presented.
	keys map[string]string
}

// newCaller describes tok's request with query q and header h; broader
// lists the scopes that lift the drive.file restriction for this API.
func newCaller(tok core.Token, q url.Values, h http.Header, broader []string) caller {
	c := caller{
		email:     strings.ToLower(tok.Email),
		client:    tok.ClientID,
		fileOnly:  tok.HasAnyScope(ScopeDriveFile) && !tok.HasAnyScope(broader...),
		appWrites: tok.HasAnyScope(ScopeDriveFile) && !tok.HasAnyScope(ScopeDrive),
		allDrives: boolParam(q.Get("supportsAllDrives")) || boolParam(q.Get("supportsTeamDrives")),
		keys:      parseResourceKeys(h.Values(resourceKeysHeader)),
	}
	if k := q.Get("resourcekey"); k != "" && q.Get("id") != "" {
		c.keys[q.Get("id")] = k // export links carry the key in the URL, as web links do
	}
	return c
}

var driveBroaderScopes = []string{ScopeDrive, ScopeDriveReadonly, ScopeDriveMetadata, ScopeDriveMetadataRO}
var sheetsBroaderScopes = []string{ScopeDrive, ScopeDriveReadonly, ScopeSheets, ScopeSheetsReadonly}

// parseResourceKeys reads "id/key,id/key" from each header value.
func parseResourceKeys(values []string) map[string]string {
	keys := map[string]string{}
	for _, v := range values {
		for pair := range strings.SplitSeq(v, ",") {
			id, key, ok := strings.Cut(strings.TrimSpace(pair), "/")
			if !ok || id == "" || key == "" {
				continue
			}
			if len(keys) >= maxResourceKeys {
				return keys
			}
			keys[id] = key
		}
	}
	return keys
}

// boolParam reads a Google boolean query parameter.
func boolParam(s string) bool { return strings.EqualFold(s, "true") || s == "1" }

// visible reports whether c may see f by id. The caller holds s.mu.
func (s *Service) visible(c caller, f *file) bool {
	if f == nil {
		return false
	}
	if f.isRoot {
		return f.owner == c.email
	}
	if c.fileOnly && !f.authorizes(c.client) {
		return false
	}
	if f.driveID != "" {
		d := s.drives[f.driveID]
		return c.allDrives && d != nil && d.members[c.email]
	}
	if f.owner == c.email || f.sharedWithUser(c.email) {
		return true
	}
	return f.linkReaches(c.email) && (f.resourceKey == "" || c.keys[f.id] == f.resourceKey)
}

// authorizes reports whether OAuth client created f or was opened with
// it: what Drive's drive.file scope and isAppAuthorized go by.
func (f *file) authorizes(client string) bool {
	return client != "" && (f.creatorClient == client || slices.Contains(f.openedWith, client))
}

// checkAppWrite refuses a change to f (or a new file in folder f) by a
// caller whose only writing scope is drive.file, when f's app access
// does not cover it: Google's 403 appNotAuthorizedToFile, which Drive's
// "Resolve errors" guide documents. The caller holds s.mu.
func (s *Service) checkAppWrite(c caller, f *file) *apiError {
	if !c.appWrites || f.isRoot || f.authorizes(c.client) {
		return nil
	}
	return errAppNotAuthorized(c.client, f.id)
}

// inUserCorpus reports whether f belongs to c's own corpus: owned by or
// shared directly with c, outside shared drives. The caller holds s.mu.
func (s *Service) inUserCorpus(c caller, f *file) bool {
	if f.isRoot || f.driveID != "" {
		return false
	}
	if c.fileOnly && !f.authorizes(c.client) {
		return false
	}
	return f.owner == c.email || f.sharedWithUser(c.email)
}

// inDriveCorpus reports whether f is in shared drive driveID and c may list it.
func (s *Service) inDriveCorpus(c caller, f *file, driveID string) bool {
	if f.driveID == "" || (driveID != "" && f.driveID != driveID) {
		return false
	}
	if c.fileOnly && !f.authorizes(c.client) {
		return false
	}
	d := s.drives[f.driveID]
	return d != nil && d.members[c.email]
}

// lookup returns the file id names if c may see it, else Google's 404.
// "root" names c's My Drive. The caller holds s.mu.
func (s *Service) lookup(c caller, id string) (*file, *apiError) {
	key := id
	if id == "root" {
		key = s.roots[c.email]
	}
	f := s.files[key]
	if !s.visible(c, f) {
		return nil, errFileNotFound(id)
	}
	return f, nil
}
