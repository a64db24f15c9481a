package drivesvc

import (
	"cmp"
	"net/http"
	"strconv"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// ScopeDriveAppdata is the app-data scope; files.generateIds accepts it.
const ScopeDriveAppdata = "https://www.googleapis.com/auth/drive.appdata"

// scopesGenerateIDs are the discovery document's scopes for files.generateIds.
var scopesGenerateIDs = []string{ScopeDrive, ScopeDriveAppdata, ScopeDriveFile}

// files.generateIds parameters, as the discovery document gives them.
const (
	defaultIDCount = 10
	maxIDCount     = 1000
)

// maxReservedPerUser bounds the ids remembered for one user; generating
// more forgets the oldest first (Google documents no such limit).
const maxReservedPerUser = 10_000

var generatedIDFields = setOf("kind", "space", "ids")

// reservation is an id files.generateIds gave a user: usable once, by
// that user, in that space, for that type of item.
type reservation struct {
	owner     string
	space     string // "drive" or "appDataFolder"
	shortcuts bool   // type=shortcuts: only a shortcut may take the id
}

// reservations are the generated ids not used yet. Guarded by Service.mu.
type reservations struct {
	ids    map[string]reservation
	byUser map[string][]string // generation order, for forgetting the oldest
}

func newReservations() reservations {
	return reservations{ids: map[string]reservation{}, byUser: map[string][]string{}}
}

// add remembers id for r.owner, forgetting that user's oldest past the bound.
func (rs *reservations) add(id string, r reservation) {
	rs.ids[id] = r
	q := append(rs.byUser[r.owner], id)
	for len(q) > maxReservedPerUser {
		if old, ok := rs.ids[q[0]]; ok && old.owner == r.owner {
			delete(rs.ids, q[0])
		}
		q = q[1:]
	}
	rs.byUser[r.owner] = q
}

// handleGenerateIDs serves files.generateIds.
func (s *Service) handleGenerateIDs(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authorize(w, r, scopesGenerateIDs, driveBroaderScopes)
	if !ok {
		return
	}
	q := r.URL.Query()
	m, aerr := fieldsParam(q.Get("fields"), nil, generatedIDFields, nil)
	if aerr != nil {
		aerr.write(w)
		return
	}
	count := defaultIDCount
	if raw := q.Get("count"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > maxIDCount {
			errOutOfRange(raw, "count", 1, maxIDCount).write(w)
			return
		}
		count = n
	}
	res := reservation{owner: c.email, space: cmp.Or(q.Get("space"), "drive")}
	if res.space != "drive" && res.space != "appDataFolder" {
		errBadRequest("The space "+strconv.Quote(echo(res.space))+" is not supported: use drive or appDataFolder.", "space").write(w)
		return
	}
	switch typ := cmp.Or(q.Get("type"), "files"); typ {
	case "files":
	case "shortcuts":
		if res.space != "drive" {
			errBadRequest("Shortcuts are only supported in the drive space: ask for space=drive.", "type").write(w)
			return
		}
		res.shortcuts = true
	default:
		errBadRequest("The type "+strconv.Quote(echo(typ))+" is not supported: use files or shortcuts.", "type").write(w)
		return
	}
	ids := make([]string, count)
	s.mu.Lock()
	for i := range ids {
		ids[i] = newFileID(KindBinary)
		s.reserved.add(ids[i], res)
	}
	s.mu.Unlock()
	core.WriteJSON(w, http.StatusOK, m.Apply(map[string]any{"kind": "drive#generatedIds", "space": res.space, "ids": ids}))
}

// errFileIDNotUsable is Google's answer to files.create with an id that
// files.generateIds did not give this user for this space and type, or
// that was used already.
var errFileIDNotUsable = &apiError{http.StatusBadRequest, "fileIdNotUsable", "The provided file ID is not usable.", ""}

// errDuplicateID is Google's answer to files.create with the id of a file
// that exists: what a client retrying a create that went through sees.
var errDuplicateID = &apiError{http.StatusConflict, "duplicate", "A file already exists with the provided ID.", "id"}

// checkChosenID checks that c may create a file of kind k under the id
// it chose. The caller holds s.mu and, once the file is placed, calls
// useID before letting go.
func (s *Service) checkChosenID(c caller, id string, k Kind) *apiError {
	if f := s.files[id]; f != nil {
		if s.visible(c, f) {
			return errDuplicateID
		}
		return errFileIDNotUsable // the same answer as an id never generated
	}
	r, ok := s.reserved.ids[id]
	if !ok || r.owner != c.email || r.space != "drive" || r.shortcuts != (k == KindShortcut) {
		return errFileIDNotUsable
	}
	return nil
}

// useID marks a generated id used: it cannot name a second file. The
// caller holds s.mu for writing.
func (s *Service) useID(id string) { delete(s.reserved.ids, id) }
