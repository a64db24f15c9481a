package blocked

import (
	"fmt"
	"strings"
)

// Reason says why a file is refused.
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
)

// Refusal is a file Gmail would block. Its Error text is a sentence for
// the user that says what was found and what to do instead.
type Refusal struct {
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
	// ReasonTooLarge ("2 000 000 entries"); it never holds file content.
	Detail string
}

const sendLink = "Send a link to the file instead"

func (r *Refusal) Error() string {
	file := quote(r.File)
	switch r.Reason {
	case ReasonExtension:
		if r.Entry == "" {
			return fmt.Sprintf("%s is a .%s file, which Gmail blocks for security. %s, or put it in a format Gmail allows.", file, r.Ext, sendLink)
		}
		return fmt.Sprintf("%s contains %s; Gmail blocks .%s files, even inside archives. %s or remove it from the archive.", file, quote(r.Entry), r.Ext, sendLink)
	case ReasonEncrypted:
		if r.Entry != "" {
			return fmt.Sprintf("%s contains a password-protected entry (%s); Gmail blocks encrypted archives because it cannot scan them. %s, or send the archive without a password.", file, quote(r.Entry), sendLink)
		}
		return fmt.Sprintf("%s is password-protected; Gmail blocks encrypted archives because it cannot scan them. %s, or send the archive without a password.", file, sendLink)
	case ReasonTooLarge:
		return fmt.Sprintf("%s is too large an archive to check for blocked file types (%s). %s, or split the archive.", file, r.Detail, sendLink)
	default:
		return fmt.Sprintf("%s cannot be read as an archive (%s), so it cannot be checked for blocked file types. %s, or check that the file is not damaged.", file, r.Detail, sendLink)
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

// entryPath joins nested archive entry names for Refusal.Entry.
func entryPath(parts ...string) string {
	return strings.Join(parts, "/")
}
