// Package handle reads the short names a model passes instead of a
// file's bytes. Every accepted spelling becomes one typed value, and
// that value travels to Drive unchanged:
//
//	1AbCdEf…                                        a Drive file id   → Drive
//	https://drive.google.com/file/d/1AbC…/view      a Drive or Docs link,
//	  ?resourcekey=0-kEy                            with its resource key → Drive
//	mcp-file://drivemail.example.com/1AbC…          a file put into Drive
//	                                                through /upload   → Upload
//	mcp-file://drivemail.example.com/transfer/Xy…   a file-transfer URI
//	                                                (the MCP draft)   → Transfer
//
// Parse is the only parser of these spellings; the tools call it, and
// the packages below take the typed value.
package handle

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/drivemail/drivemail/drive"
)

// Handle names one file. Its dynamic type is its kind: Drive, Upload or
// Transfer. A new kind adds a type here and a case wherever a handle is
// resolved (DriveRef, compose's resolveTransfers).
type Handle interface {
	// String spells the handle as a model may pass it back.
	String() string
	handle()
}

// Drive is a Drive file named by its id or by a link to it. Ref carries
// the link's resource key, without which Drive serves a link-shared file
// to no one but its owner.
type Drive struct {
	Ref drive.Ref
}

func (h Drive) handle() {}

// String is the bare id, or a Drive link when a resource key goes with it.
func (h Drive) String() string {
	if h.Ref.ResourceKey != "" {
		return "https://drive.google.com/file/d/" + h.Ref.ID + "/view?resourcekey=" + h.Ref.ResourceKey
	}
	return h.Ref.ID
}

// Upload is an mcp-file://HOST/FILE_ID handle, which /upload and
// request_upload give for a file they put into the user's Drive. The
// host is not checked: the handle only wraps a Drive id, and Drive checks
// with the user's own token that they may read the file.
type Upload struct {
	Host string
	File drive.Ref
}

func (h Upload) handle() {}

// UploadScheme starts every upload handle.
const UploadScheme = "mcp-file://"

func (h Upload) String() string { return UploadScheme + h.Host + "/" + h.File.ID }

// Transfer is a file-transfer URI of the MCP file-transfer draft
// (SEP-2631), mcp-file://HOST/transfer/ID: drivemail hands it out before
// the file exists, and its store knows whose it is and, once the upload
// finished, which Drive file it became. It names no Drive file by itself
// (DriveRef says so): the caller looks it up for the signed-in user.
type Transfer struct {
	Host string
	ID   string
}

func (h Transfer) handle() {}

// TransferPath starts the path of every file-transfer URI.
const TransferPath = "transfer/"

func (h Transfer) String() string { return UploadScheme + h.Host + "/" + TransferPath + h.ID }

// What looking a Transfer up can find instead of its Drive file.
var (
	// ErrUnknownTransfer: no such URI for this user: never issued,
	// expired, or another user's (which reads the same, on purpose).
	ErrUnknownTransfer = errors.New("handle: unknown file-transfer URI")
	// ErrTransferPending: the user's URI, but its upload has not finished.
	ErrTransferPending = errors.New("handle: file-transfer upload not finished")
)

// ValidTransferID reports whether s can be a Transfer's id: 16 to 64
// letters, digits, '-' and '_' (base64url).
func ValidTransferID(s string) bool {
	if len(s) < 16 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// DriveRef is the Drive file h names, for the kinds that name one
// directly (a Transfer needs the store: false).
func DriveRef(h Handle) (drive.Ref, bool) {
	switch h := h.(type) {
	case Drive:
		return h.Ref, true
	case Upload:
		return h.File, true
	}
	return drive.Ref{}, false
}

// Problem says why a spelling is not a handle (Parse) or a message id
// (ParseMessage).
type Problem int

const (
	// Empty: nothing but white space.
	Empty Problem = iota + 1
	// NotAnID: text that is neither an id, a link nor a handle, such as a
	// file name ("Q3 report.pdf").
	NotAnID
	// ForeignLink: a web link that is not a Drive or Docs link to a file.
	ForeignLink
	// BadUpload: an mcp-file:// handle that does not end in one file id.
	BadUpload
	// HeaderID: an RFC 5322 Message-ID ("<abc@mail.gmail.com>"), which
	// names a message in every mailbox that has it, not Gmail's id of it.
	HeaderID
	// MailLink: a link into Gmail's web interface, whose ids are not the
	// API's.
	MailLink
	// NotAMessageID: anything else that is not a message id.
	NotAMessageID
)

// SyntaxError is a spelling Parse or ParseMessage does not accept.
// Callers word it for their argument ("Attachment 2: …", "folder_id …").
type SyntaxError struct {
	Input   string
	Problem Problem
}

func (e *SyntaxError) Error() string {
	switch e.Problem {
	case Empty:
		return "empty file handle or message id"
	case ForeignLink:
		return fmt.Sprintf("%q is a link, not a Drive file id", e.Input)
	case BadUpload:
		return fmt.Sprintf("%q is not an mcp-file:// handle of one file", e.Input)
	case HeaderID:
		return fmt.Sprintf("%q is a Message-ID header, not a Gmail message id", e.Input)
	case MailLink:
		return fmt.Sprintf("%q is a link into Gmail, not a Gmail message id", e.Input)
	case NotAMessageID:
		return fmt.Sprintf("%q is not a Gmail message id", e.Input)
	}
	return fmt.Sprintf("%q is not a Drive file id", e.Input)
}

// Parse reads one handle: a Drive file id, a Drive or Docs link (http or
// https; /d/ID, /folders/ID or ?id=ID, and ?resourcekey=KEY), or an
// mcp-file:// handle. White space around it is ignored. Its errors are
// *SyntaxError.
func Parse(s string) (Handle, error) {
	s = strings.TrimSpace(s)
	lower := strings.ToLower(s)
	switch {
	case s == "":
		return nil, &SyntaxError{Input: s, Problem: Empty}
	case strings.HasPrefix(lower, UploadScheme):
		return parseUpload(s)
	case strings.HasPrefix(lower, "https://"), strings.HasPrefix(lower, "http://"):
		return parseLink(s)
	case drive.ValidID(s):
		return Drive{Ref: drive.Ref{ID: s}}, nil
	}
	return nil, &SyntaxError{Input: s, Problem: NotAnID}
}

// MustParse is Parse for spellings known to be good (tests, constants);
// it panics on any other.
func MustParse(s string) Handle {
	h, err := Parse(s)
	if err != nil {
		panic("handle: " + err.Error())
	}
	return h
}

func parseUpload(s string) (Handle, error) {
	bad := &SyntaxError{Input: s, Problem: BadUpload}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, bad
	}
	id := strings.TrimPrefix(u.Path, "/")
	if t, ok := strings.CutPrefix(id, TransferPath); ok {
		if !ValidTransferID(t) {
			return nil, bad
		}
		return Transfer{Host: u.Host, ID: t}, nil
	}
	if !drive.ValidID(id) {
		return nil, bad
	}
	return Upload{Host: u.Host, File: drive.Ref{ID: id}}, nil
}

// driveHosts serve links to Drive files: drive.google.com/file/d/ID,
// /drive/folders/ID, /open?id=ID; docs.google.com/document/d/ID (and
// spreadsheets, presentation, drawings).
var driveHosts = map[string]bool{"drive.google.com": true, "docs.google.com": true}

func parseLink(s string) (Handle, error) {
	foreign := &SyntaxError{Input: s, Problem: ForeignLink}
	u, err := url.Parse(s)
	if err != nil || !driveHosts[strings.ToLower(u.Hostname())] || u.Port() != "" || u.User != nil {
		return nil, foreign
	}
	q := u.Query()
	key := q.Get("resourcekey")
	if key != "" && !drive.ValidID(key) {
		return nil, foreign
	}
	id := idFromPath(u.Path)
	if id == "" {
		id = q.Get("id")
	}
	if !drive.ValidID(id) {
		return nil, foreign
	}
	return Drive{Ref: drive.Ref{ID: id, ResourceKey: key}}, nil
}

// idFromPath finds the segment after "d" or "folders" in a Drive or Docs
// path.
func idFromPath(p string) string {
	segs := strings.Split(p, "/")
	for i := 0; i+1 < len(segs); i++ {
		if segs[i] == "d" || segs[i] == "folders" {
			return segs[i+1]
		}
	}
	return ""
}
