package drivesvc

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// listParams are files.list's validated parameters.
type listParams struct {
	corpora  string
	driveID  string
	query    expr
	order    []orderKey
	pageSize int
	offset   int
	mask     mask
	appData  bool
}

// handleList serves files.list.
func (s *Service) handleList(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authorize(w, r, scopesReadMeta, driveBroaderScopes)
	if !ok {
		return
	}
	lp, aerr := parseListParams(r.URL.Query(), c)
	if aerr != nil {
		aerr.write(w)
		return
	}
	s.mu.RLock()
	if lp.driveID != "" {
		if d := s.drives[lp.driveID]; d == nil || !d.members[c.email] {
			s.mu.RUnlock()
			errDriveNotFound(lp.driveID).write(w)
			return
		}
	}
	env := &queryEnv{me: c.email, root: s.roots[c.email], drives: s.drives}
	var hits []*file
	if !lp.appData {
		for _, f := range s.files {
			if s.inCorpora(c, f, lp) && (lp.query == nil || lp.query.eval(f, env)) {
				hits = append(hits, f)
			}
		}
	}
	sortFiles(hits, lp.order)
	end := min(lp.offset+lp.pageSize, len(hits))
	page := []map[string]any{}
	origin := core.Origin(r)
	for _, f := range hits[min(lp.offset, len(hits)):end] {
		page = append(page, s.fileResource(c, f, origin))
	}
	s.mu.RUnlock()

	resp := map[string]any{"kind": "drive#fileList", "incompleteSearch": false, "files": page}
	if end < len(hits) {
		resp["nextPageToken"] = pageToken(end, r.URL.Query())
	}
	core.WriteJSON(w, http.StatusOK, lp.mask.Apply(resp))
}

// inCorpora reports whether f is in the corpora lp searches. The caller holds s.mu.
func (s *Service) inCorpora(c caller, f *file, lp listParams) bool {
	switch lp.corpora {
	case "drive":
		return s.inDriveCorpus(c, f, lp.driveID)
	case "allDrives":
		return s.inUserCorpus(c, f) || s.inDriveCorpus(c, f, "")
	default: // user, domain
		return s.inUserCorpus(c, f)
	}
}

// parseListParams validates files.list's parameters as Google does.
func parseListParams(q url.Values, c caller) (listParams, *apiError) {
	lp := listParams{pageSize: defaultPageSize}
	lp.corpora = q.Get("corpora")
	if lp.corpora == "" {
		lp.corpora = q.Get("corpus") // the deprecated spelling
	}
	if lp.corpora == "" {
		lp.corpora = "user"
	}
	includeAll := boolParam(q.Get("includeItemsFromAllDrives")) || boolParam(q.Get("includeTeamDriveItems"))
	lp.driveID = cmp.Or(q.Get("driveId"), q.Get("teamDriveId"))
	switch lp.corpora {
	case "user", "domain", "drive", "allDrives":
	default:
		return lp, errInvalid("corpora")
	}
	if (lp.corpora == "drive") != (lp.driveID != "") {
		return lp, &apiError{http.StatusBadRequest, "teamDriveIdRequiresTeamDriveCorpora",
			"The driveId parameter must be specified if and only if corpora is set to drive.", ""}
	}
	if (lp.corpora == "drive" || lp.corpora == "allDrives") && !includeAll {
		return lp, &apiError{http.StatusForbidden, "teamDriveItemsRequired",
			"The includeItemsFromAllDrives parameter must be set to true when corpora is set to " + lp.corpora + ".", "includeItemsFromAllDrives"}
	}
	if includeAll && !c.allDrives {
		return lp, &apiError{http.StatusForbidden, "teamDrivesNotSupported",
			"The includeItemsFromAllDrives parameter can only be set to true if supportsAllDrives is also set to true.", "includeItemsFromAllDrives"}
	}
	for sp := range strings.SplitSeq(cmp.Or(q.Get("spaces"), "drive"), ",") {
		switch strings.TrimSpace(sp) {
		case "drive":
		case "appDataFolder":
			lp.appData = true
		default:
			return lp, errInvalid("spaces")
		}
	}
	if raw := q.Get("pageSize"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > maxPageSize {
			return lp, errOutOfRange(raw, "pageSize", 1, maxPageSize)
		}
		lp.pageSize = n
	}
	raw := q.Get("q")
	if len(raw) > maxQueryLen {
		return lp, errInvalid("q")
	}
	e, fullText, err := parseQuery(raw)
	if err != nil {
		return lp, errInvalid("q")
	}
	lp.query = e
	if lp.order, err = parseOrderBy(q.Get("orderBy")); err != nil {
		return lp, errInvalid("orderBy")
	}
	if fullText && len(lp.order) > 0 {
		return lp, errBadRequest("Sorting is not supported for queries with fullText terms. Results are always in descending relevance order.", "orderBy")
	}
	if tok := q.Get("pageToken"); tok != "" {
		off, ok := readPageToken(tok, q)
		if !ok {
			return lp, errInvalid("pageToken")
		}
		lp.offset = off
	}
	m, aerr := fieldsParam(q.Get("fields"), defaultListMask, fileListFieldNames, map[string]map[string]bool{"files": fileFieldNames})
	if aerr != nil {
		return lp, aerr
	}
	lp.mask = m
	return lp, nil
}

// orderKey is one orderBy key.
type orderKey struct {
	key  string
	desc bool
}

var orderKeys = setOf("createdTime", "folder", "modifiedByMeTime", "modifiedTime", "name", "name_natural",
	"quotaBytesUsed", "recency", "sharedWithMeTime", "starred", "viewedByMeTime")

func parseOrderBy(raw string) ([]orderKey, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	var keys []orderKey
	for part := range strings.SplitSeq(raw, ",") {
		fields := strings.Fields(part)
		if len(fields) == 0 || len(fields) > 2 || !orderKeys[fields[0]] {
			return nil, errQuery
		}
		k := orderKey{key: fields[0]}
		if len(fields) == 2 {
			switch strings.ToLower(fields[1]) {
			case "desc":
				k.desc = true
			case "asc":
			default:
				return nil, errQuery
			}
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// sortFiles orders files by keys (default: most recently modified first),
// breaking ties by id so pages never overlap.
func sortFiles(files []*file, keys []orderKey) {
	if len(keys) == 0 {
		keys = []orderKey{{key: "modifiedTime", desc: true}}
	}
	slices.SortFunc(files, func(a, b *file) int {
		for _, k := range keys {
			c := compareBy(a, b, k.key)
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return strings.Compare(a.id, b.id)
	})
}

func compareBy(a, b *file, key string) int {
	switch key {
	case "createdTime":
		return a.created.Compare(b.created)
	case "folder":
		// ascending puts folders first, as Drive does
		return cmp.Compare(btoi(a.kind != KindFolder), btoi(b.kind != KindFolder))
	case "name", "name_natural":
		return cmp.Or(strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name)), strings.Compare(a.name, b.name))
	case "quotaBytesUsed":
		return cmp.Compare(a.blob.Size, b.blob.Size)
	case "starred":
		return 0
	default: // modifiedTime, modifiedByMeTime, recency, viewedByMeTime, sharedWithMeTime
		return a.modified.Compare(b.modified)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pageToken encodes the next offset with a digest of the parameters that
// shape the result, so a token only continues the search it came from.
func pageToken(offset int, q url.Values) string {
	b := make([]byte, 8, 8+16)
	binary.BigEndian.PutUint64(b, uint64(offset))
	return base64.RawURLEncoding.EncodeToString(append(b, searchDigest(q)...))
}

func readPageToken(tok string, q url.Values) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) != 8+16 || string(b[8:]) != string(searchDigest(q)) {
		return 0, false
	}
	off := binary.BigEndian.Uint64(b[:8])
	if off > 1<<40 {
		return 0, false
	}
	return int(off), true
}

func searchDigest(q url.Values) []byte {
	h := sha256.New()
	for _, k := range []string{"q", "corpora", "corpus", "driveId", "teamDriveId", "orderBy", "spaces", "includeItemsFromAllDrives"} {
		h.Write([]byte(k + "=" + q.Get(k) + "\x00"))
	}
	return h.Sum(nil)[:16]
}
