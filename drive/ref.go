package drive

import (
	"net/url"
	"strings"
)

// Ref names a Drive file: its id and, for a link-shared file, the resource
// key that unlocks it.
type Ref struct {
	ID          string
	ResourceKey string
}

// maxIDLen bounds an id; Google's are 19 to 44 characters.
const maxIDLen = 128

// ValidID reports whether s is shaped like a Drive file id.
func ValidID(s string) bool {
	if s == "" || len(s) > maxIDLen {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
		default:
			return false
		}
	}
	return true
}

// ParseRef accepts a bare file id or a Drive, Docs, Sheets or Slides link
// (https://drive.google.com/file/d/ID/view?resourcekey=KEY,
// https://docs.google.com/document/d/ID/edit, …?id=ID) and returns the
// file it names, with the resource key when the link carries one.
func ParseRef(s string) (Ref, bool) {
	s = strings.TrimSpace(s)
	if ValidID(s) {
		return Ref{ID: s}, true
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" {
		return Ref{}, false
	}
	switch u.Host {
	case "drive.google.com", "docs.google.com":
	default:
		return Ref{}, false
	}
	q := u.Query()
	key := q.Get("resourcekey")
	if key != "" && !ValidID(key) {
		return Ref{}, false
	}
	id := idFromPath(u.Path)
	if id == "" {
		id = q.Get("id")
	}
	if !ValidID(id) {
		return Ref{}, false
	}
	return Ref{ID: id, ResourceKey: key}, true
}

// idFromPath finds the segment after "/d/" in a Drive or Docs path.
func idFromPath(p string) string {
	segs := strings.Split(p, "/")
	for i := 0; i+1 < len(segs); i++ {
		if segs[i] == "d" {
			return segs[i+1]
		}
	}
	return ""
}
