package drive

// Ref names a Drive file: its id and, for a link-shared file, the resource
// key that unlocks it. Package handle makes one from what a model wrote (an
// id, a link, an mcp-file:// handle); Drive gets it unchanged.
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
