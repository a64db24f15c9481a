package drivesvc

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// Google's MIME types for folders, shortcuts and the native editors.
const (
	MimeFolder   = "application/vnd.google-apps.folder"
	MimeShortcut = "application/vnd.google-apps.shortcut"
	MimeDoc      = "application/vnd.google-apps.document"
	MimeSheet    = "application/vnd.google-apps.spreadsheet"
	MimeSlides   = "application/vnd.google-apps.presentation"
	MimeDrawing  = "application/vnd.google-apps.drawing"
)

// Kind is what a Drive file is: binary content, a folder, a shortcut, or
// one of the native (Docs editors) types.
type Kind int

// Kinds of file.
const (
	KindBinary Kind = iota
	KindFolder
	KindShortcut
	KindDoc
	KindSheet
	KindSlides
	KindDrawing
)

// native reports whether the kind is a Docs editors type (exported, never downloaded).
func (k Kind) native() bool { return k >= KindDoc }

// mimeOf is the MIME type of a non-binary kind.
func (k Kind) mimeOf() string {
	switch k {
	case KindFolder:
		return MimeFolder
	case KindShortcut:
		return MimeShortcut
	case KindDoc:
		return MimeDoc
	case KindSheet:
		return MimeSheet
	case KindSlides:
		return MimeSlides
	case KindDrawing:
		return MimeDrawing
	}
	return ""
}

// kindOfMime maps a MIME type to its kind; anything not Google's is binary.
func kindOfMime(mime string) Kind {
	for k := KindFolder; k <= KindDrawing; k++ {
		if k.mimeOf() == mime {
			return k
		}
	}
	return KindBinary
}

// file is one Drive item. Fields are guarded by Service.mu; content that is
// large (binary bytes, a Doc's body) lives in a blob and is immutable.
type file struct {
	id          string
	name        string
	mimeType    string
	kind        Kind
	owner       string // email; empty for items in a shared drive
	driveID     string // the shared drive holding the item, if any
	parents     []string
	created     time.Time
	modified    time.Time
	trashed     bool
	description string
	isRoot      bool // a user's My Drive folder
	// creatorClient is the OAuth client id that created the file through
	// the API; a drive.file token sees only its own client's files.
	creatorClient string
	// openedWith are OAuth clients the user opened the file with (Drive's
	// "Open with", the Picker): drive.file reaches the file through them too.
	openedWith []string
	// perms are the file's own permissions (users, groups, domains,
	// anyone with the link); the owner's comes from owner.
	perms       []permission
	resourceKey string
	noDownload  bool
	version     int64

	blob    core.Blob // binary content, or a Doc's body (see docbody.go)
	hasBlob bool
	tabs    []*tab   // spreadsheets
	slides  []slide  // presentations
	drawing []string // drawings: lines of text
	target  string   // shortcuts: target id
	tMime   string   // shortcuts: target MIME type at creation
	index   string   // lowercased text fullText searches
}

// tab is one sheet of a spreadsheet. A tab is never changed in place: an
// update builds a new one, so a reader that copied the slice under the
// lock can render it after letting go.
type tab struct {
	id    int64
	title string
	rows  [][]string
}

// slide is one slide of a presentation.
type slide struct {
	title string
	body  []string
}

// sharedDrive is a shared drive; its id is also its root folder's id.
type sharedDrive struct {
	id      string
	name    string
	members map[string]bool
	created time.Time
}

// Limits that keep one emulator process bounded.
const (
	maxNameLen      = 32 << 10       // Drive's own limit is 32 KiB of name
	maxIndexLen     = 256 << 10      // text kept per file for fullText
	maxCellsPerFile = 2_000_000      // cells of one spreadsheet (Google allows 10M)
	maxJSONBody     = 16 << 20       // Sheets values and /_emulator JSON bodies
	maxMetadataBody = 1 << 20        // Drive metadata JSON
	maxParagraph    = 64 << 10       // bytes of one Doc paragraph line
	maxSeedFile     = 64 << 20       // a seeded file; seeds are meant to be small
	maxPageSize     = 1000           // files.list pageSize
	defaultPageSize = 100            // files.list without pageSize
	maxQueryLen     = 64 << 10       // files.list q
	maxDocFill      = int64(1) << 30 // FileSpec.DocFillBytes
)

// ExportLimit is files.export's cap on exported content: Google documents
// it as "10 MB", and, as for its other "MB" limits (5 MB simple uploads),
// counts binary megabytes: 10,485,760 bytes. Past it files.export answers
// 403 exportSizeLimitExceeded; exportLinks have no cap.
const ExportLimit = 10 << 20

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{10,128}$`)

// validID reports whether s may be a file, drive or root id.
func validID(s string) bool { return idPattern.MatchString(s) }

// randomChars returns n random characters of base64url's alphabet.
func randomChars(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)[:n]
}

// newFileID is shaped like Google's: 33 characters for uploaded files and
// folders, 44 for Docs editors files, starting with "1".
func newFileID(k Kind) string {
	if k.native() {
		return "1" + randomChars(43)
	}
	return "1" + randomChars(32)
}

// newDriveID is shaped like a shared drive's (or My Drive's) id: "0A",
// eleven characters and "Uk9PVA".
func newDriveID() string { return "0A" + randomChars(11) + "Uk9PVA" }

// newResourceKey is shaped like Google's link-sharing resource keys.
func newResourceKey() string { return "0-" + randomChars(22) }

// newSheetID is a random positive int32, as Sheets gives tabs after the first.
func newSheetID() int64 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return int64(binary.BigEndian.Uint32(b[:])&0x7fffffff) | 1
}

// displayName makes "Ann Lee" of "ann.lee@example.com".
func displayName(email string) string { return core.DisplayName(email) }

// permissionID is stable per user, as Google's are.
func permissionID(email string) string {
	var h uint64 = 14695981039346656037
	for _, c := range []byte(strings.ToLower(email)) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return strconv.FormatUint(h, 10)
}
