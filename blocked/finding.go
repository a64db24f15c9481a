package blocked

import (
	"fmt"
	"strings"
)

// Reason says why Gmail would block a file.
type Reason int

const (
	// ReasonExtension: the file, or an entry inside it, has a blocked
	// extension (Ext says which).
	ReasonExtension Reason = iota + 1
	// ReasonEncrypted: a password-protected archive, which Gmail blocks
	// because it cannot scan it.
	ReasonEncrypted
	// ReasonUnreadable: an archive whose listing cannot be read (corrupt, or
	// not the format its name says), so it cannot be checked.
	ReasonUnreadable
	// ReasonTooLarge: an archive whose listing exceeds Limits, so it
	// cannot be checked within bounded work.
	ReasonTooLarge
	// ReasonContent: the file, or an entry inside it, is a program or
	// another blocked type by its content, whatever its name (Detail
	// says what it is: "a Windows program (an .exe or .dll)").
	ReasonContent
)

// Finding is a file Gmail would block. Its Error text is a sentence that
// says what was found; what to do instead depends on where the file comes
// from (a Drive file can go as a link, content written into a call
// cannot), so the caller adds it.
type Finding struct {
	// File is the attachment's name as the caller gave it.
	File string
	// Entry is the path inside the archive that caused the refusal ("" when
	// it is the file itself). For a nested archive it reads
	// "inner.zip/setup.exe".
	Entry string
	// Ext is the blocked extension, for ReasonExtension.
	Ext    string
	Reason Reason
	// Detail is a short technical note for ReasonUnreadable and
	// ReasonTooLarge ("2 000 000 entries"), and what the file is for
	// ReasonContent; it never holds file content.
	Detail string
}

func (r *Finding) Error() string {
	file := quote(r.File)
	switch r.Reason {
	case ReasonExtension:
		if r.Entry == "" {
			return fmt.Sprintf("%s is a .%s file, which Gmail blocks for security.", file, r.Ext)
		}
		return fmt.Sprintf("%s contains %s; Gmail blocks .%s files, even inside archives.", file, quote(r.Entry), r.Ext)
	case ReasonEncrypted:
		if r.Entry != "" {
			return fmt.Sprintf("%s contains a password-protected entry (%s); Gmail blocks encrypted archives because it cannot scan them.", file, quote(r.Entry))
		}
		return fmt.Sprintf("%s is password-protected; Gmail blocks encrypted archives because it cannot scan them.", file)
	case ReasonTooLarge:
		return fmt.Sprintf("%s is too large an archive to check for blocked file types (%s).", file, r.Detail)
	case ReasonContent:
		if r.Entry == "" {
			return fmt.Sprintf("%s is %s by its content, whatever its name says; Gmail blocks that type for security.", file, r.Detail)
		}
		return fmt.Sprintf("%s contains %s, which is %s by its content, whatever its name says; Gmail blocks that type, even inside archives.", file, quote(r.Entry), r.Detail)
	default:
		return fmt.Sprintf("%s cannot be read as an archive (%s), so it cannot be checked for blocked file types.", file, r.Detail)
	}
}

// quote bounds a name for a sentence and makes control characters visible.
func quote(s string) string {
	r := []rune(s)
	if len(r) > 80 {
		s = string(r[:60]) + "…" + string(r[len(r)-15:])
	}
	return fmt.Sprintf("%q", s)
}

// entryPath joins nested archive entry names for Finding.Entry.
func entryPath(parts ...string) string {
	return strings.Join(parts, "/")
}
