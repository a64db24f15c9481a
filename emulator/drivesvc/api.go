package drivesvc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/emulator/internal/render"
)

// FileSpec describes a file put straight into Drive by PutFile: the way
// tests, seeds and POST /_emulator/files create files without the API.
type FileSpec struct {
	// ID fixes the file id (10 to 128 of A-Z a-z 0-9 _ -); empty makes a
	// Google-shaped one.
	ID   string
	Name string
	// Kind is what the file is; the zero value is binary content.
	Kind Kind
	// MimeType of binary content; empty guesses from Name's extension.
	MimeType string
	// Content is binary content; Reader, when set, streams it instead.
	Content []byte
	Reader  io.Reader
	// Parents holds at most one folder id; empty means the owner's My
	// Drive, or the shared drive's root.
	Parents []string
	// SharedDrive puts the file in that shared drive (owner must be a member).
	SharedDrive string
	// DocText is a Doc's body, one paragraph per line: "# " to "### "
	// start headings, "- " a bullet. DocHTML converts HTML instead.
	DocText string
	DocHTML string
	// DocFillBytes pads a Doc's body with numbered filler paragraphs until
	// it holds at least this many bytes (up to 1 GiB): a cheap Doc whose
	// text and PDF exports are larger than the figure.
	DocFillBytes int64
	// Tabs are a spreadsheet's sheets (default: one empty "Sheet1").
	Tabs []Tab
	// Slides are a presentation's slides.
	Slides []Slide
	// Lines are a drawing's text.
	Lines []string
	// ShortcutTo is a shortcut's target id.
	ShortcutTo string
	// SharedWith lists users given read access.
	SharedWith []string
	// LinkShared lets anyone with the link read the file; with a
	// ResourceKey (see NewResourceKey) others must present it in
	// X-Goog-Drive-Resource-Keys.
	LinkShared  bool
	ResourceKey string
	// Permissions are more ways in: users, groups or a domain with a
	// role, anyone with a role other than reader (see Permission).
	Permissions []Permission
	// NoDownload sets capabilities.canDownload=false: downloads and
	// exports are refused with 403 cannotDownloadFile.
	NoDownload  bool
	Description string
	Trashed     bool
	// Created and Modified default to now.
	Created, Modified time.Time
	// ClientID is the OAuth client that "created" the file: tokens with
	// only drive.file see it when their client id matches, and
	// drive.file tokens may change it (or add files to the folder).
	ClientID string
	// OpenedWith lists OAuth clients the user opened the file with
	// (Drive's "Open with" or the Picker): drive.file covers it for them
	// as for its creator.
	OpenedWith []string

	docPlain  bool                   // DocText is plain text: a paragraph per line, no notation
	stored    *core.Blob             // an upload's content, used as is
	docSource render.ParagraphSource // a converted upload's paragraphs
}

// Tab is one sheet of a spreadsheet. SheetID 0 on a tab after the first
// means "choose one", as Sheets does.
type Tab struct {
	SheetID int64
	Title   string
	Rows    [][]string
}

// Slide is one slide: a title and body lines.
type Slide struct {
	Title string
	Body  []string
}

// File is what PutFile and FileByID report of a file.
type File struct {
	ID          string
	Name        string
	MimeType    string
	Kind        Kind
	Owner       string // empty in a shared drive
	DriveID     string
	Parents     []string
	Size        int64 // binary content only
	MD5         string
	SHA256      string
	ResourceKey string
	Trashed     bool
	Created     time.Time
	Modified    time.Time
	Tabs        []Tab // spreadsheets: SheetID and Title (no rows)
	ShortcutTo  string
	// BodyBytes is a Doc's stored body size (a lower bound of its text export).
	BodyBytes int64
	// Permissions is the file's sharing, the owner's first (permissions.list's).
	Permissions []Permission
}

// SharedDrive is a shared drive.
type SharedDrive struct {
	ID      string
	Name    string
	Members []string
}

// NewResourceKey returns a Google-shaped resource key for FileSpec.ResourceKey.
func NewResourceKey() string { return newResourceKey() }

// PutFile creates a file owned by owner (or, with spec.SharedDrive, in
// that drive), registering owner as a user.
func (s *Service) PutFile(owner string, spec FileSpec) (File, error) {
	owner = strings.ToLower(strings.TrimSpace(owner))
	if owner == "" || !strings.Contains(owner, "@") {
		return File{}, fmt.Errorf("put file: owner %q is not an email address", owner)
	}
	s.ensureRoot(owner)
	f, err := s.build(spec)
	if err != nil {
		return File{}, fmt.Errorf("put file %q: %w", spec.Name, err)
	}
	s.mu.Lock()
	aerr := s.place(owner, f, spec.Parents, spec.SharedDrive)
	var out File
	if aerr == nil {
		out = s.publicFile(f)
	}
	s.mu.Unlock()
	if aerr != nil {
		if f.hasBlob && spec.stored == nil {
			s.releaseBlobs(f.blob)
		}
		return File{}, fmt.Errorf("put file %q: %w", spec.Name, aerr)
	}
	return out, nil
}

// build makes a file from spec, storing its content; it does not place it.
func (s *Service) build(spec FileSpec) (*file, error) {
	if len(spec.Name) > maxNameLen {
		return nil, fmt.Errorf("name longer than %d bytes", maxNameLen)
	}
	if spec.ID != "" && !validID(spec.ID) {
		return nil, fmt.Errorf("id %q: want 10 to 128 of A-Z a-z 0-9 _ -", spec.ID)
	}
	now := s.now()
	f := &file{
		id: spec.ID, name: spec.Name, kind: spec.Kind, created: spec.Created, modified: spec.Modified,
		trashed: spec.Trashed, description: spec.Description, creatorClient: spec.ClientID, openedWith: slices.Clone(spec.OpenedWith),
		resourceKey: spec.ResourceKey, noDownload: spec.NoDownload, version: 1,
	}
	if f.name == "" {
		f.name = "Untitled"
	}
	if f.id == "" {
		f.id = newFileID(f.kind)
	}
	if f.created.IsZero() {
		f.created = now
	}
	if f.modified.IsZero() {
		f.modified = f.created
	}
	f.created, f.modified = f.created.UTC().Truncate(time.Millisecond), f.modified.UTC().Truncate(time.Millisecond)
	if err := s.buildPermissions(f, spec); err != nil {
		return nil, err
	}
	f.mimeType = f.kind.mimeOf()
	var err error
	switch f.kind {
	case KindBinary:
		err = s.buildBinary(f, spec)
	case KindDoc:
		err = s.buildDoc(f, spec)
	case KindSheet:
		err = buildSheet(f, spec.Tabs)
	case KindSlides:
		for _, sl := range spec.Slides {
			f.slides = append(f.slides, slide{title: sl.Title, body: slices.Clone(sl.Body)})
		}
		var text []string
		for _, sl := range f.slides {
			text = append(append(text, sl.title), sl.body...)
		}
		f.index = indexOfLines(text...)
	case KindDrawing:
		f.drawing = slices.Clone(spec.Lines)
		f.index = indexOfLines(f.drawing...)
	case KindShortcut:
		if spec.ShortcutTo == "" {
			return nil, errors.New("a shortcut needs a target id")
		}
		f.target = spec.ShortcutTo
	case KindFolder:
	default:
		return nil, fmt.Errorf("unknown kind %d", f.kind)
	}
	return f, err
}

// buildPermissions gives f the sharing spec asks for; the users it names
// are registered (a user a file is shared with has a Google account).
func (s *Service) buildPermissions(f *file, spec FileSpec) error {
	perms := slices.Clone(spec.Permissions)
	for _, u := range spec.SharedWith {
		u = strings.ToLower(strings.TrimSpace(u))
		if !strings.Contains(u, "@") {
			return fmt.Errorf("shared with %q: not an email address", u)
		}
		perms = append(perms, Permission{Type: "user", Role: "reader", EmailAddress: u})
	}
	if spec.LinkShared {
		perms = append(perms, Permission{Type: "anyone", Role: "reader"})
	}
	for _, p := range perms {
		p, err := permissionOf(p)
		if err != nil {
			return err
		}
		if (p.Role == "organizer" || p.Role == "fileOrganizer") && spec.SharedDrive == "" {
			return fmt.Errorf("permission role %s is for items in shared drives", p.Role)
		}
		if p.Type == "user" {
			s.deps.Accounts.AddUser(p.EmailAddress)
		}
		f.grant(p)
	}
	return nil
}

func (s *Service) buildBinary(f *file, spec FileSpec) error {
	f.mimeType = spec.MimeType
	if f.mimeType == "" {
		f.mimeType = mimeByName(f.name)
	}
	var b core.Blob
	if spec.stored != nil {
		b = *spec.stored
	} else {
		r := spec.Reader
		if r == nil {
			r = bytes.NewReader(spec.Content)
		}
		var err error
		if b, err = s.deps.Blobs.Put(r); err != nil {
			return err
		}
	}
	f.blob, f.hasBlob = b, true
	f.index = indexOfContent(s.deps.Blobs, b, f.mimeType)
	return nil
}

func (s *Service) buildDoc(f *file, spec FileSpec) error {
	if spec.DocFillBytes < 0 || spec.DocFillBytes > maxDocFill {
		return fmt.Errorf("DocFillBytes %d: want 0 to %d", spec.DocFillBytes, maxDocFill)
	}
	body, err := newDocBody(s.deps.Blobs)
	if err != nil {
		return err
	}
	switch {
	case spec.docSource != nil:
		err = spec.docSource(body.add)
	case spec.DocHTML != "":
		err = htmlParagraphs(strings.NewReader(spec.DocHTML), body.add)
	default:
		err = textParagraphs(strings.NewReader(spec.DocText), spec.docPlain, body.add)
	}
	for n := 1; err == nil && body.size() < spec.DocFillBytes; n++ {
		err = body.add(render.Paragraph{Text: fmt.Sprintf("Filler paragraph %d. The quick brown fox jumps over the lazy dog, again and again, so that this document grows to the size a test asked for.", n)})
	}
	if err != nil {
		body.abort()
		return err
	}
	f.blob, f.index, err = body.commit()
	f.hasBlob = err == nil
	return err
}

// buildSheet gives f its tabs: sheetIds as given, else 0 for the first
// and random ones after, titles unique.
func buildSheet(f *file, tabs []Tab) error {
	if len(tabs) == 0 {
		tabs = []Tab{{Title: "Sheet1"}}
	}
	seenID, seenTitle := map[int64]bool{}, map[string]bool{}
	cells := 0
	for i, t := range tabs {
		id := t.SheetID
		if id == 0 && i > 0 {
			id = newSheetID()
		}
		title := t.Title
		if title == "" {
			title = fmt.Sprintf("Sheet%d", i+1)
		}
		if seenID[id] || seenTitle[strings.ToLower(title)] {
			return fmt.Errorf("tab %q (sheetId %d) repeats an earlier tab's id or title", title, id)
		}
		if id < 0 {
			return fmt.Errorf("tab %q: sheetId must not be negative", title)
		}
		seenID[id], seenTitle[strings.ToLower(title)] = true, true
		rows := make([][]string, len(t.Rows))
		for r, row := range t.Rows {
			rows[r] = slices.Clone(row)
			cells += len(row)
		}
		if cells > maxCellsPerFile {
			return errTooManyCells
		}
		f.tabs = append(f.tabs, &tab{id: id, title: title, rows: rows})
	}
	f.index = indexOfTabs(f.tabs)
	return nil
}

// place checks f's location and sharing and inserts it. The caller holds
// s.mu for writing.
func (s *Service) place(owner string, f *file, parents []string, driveID string) *apiError {
	if _, taken := s.files[f.id]; taken {
		return errDuplicateID
	}
	if len(parents) > 1 {
		return errBadRequest("Increasing the number of parents is not allowed. A file can only have one parent.", "parents")
	}
	if driveID != "" {
		d := s.drives[driveID]
		if d == nil || !d.members[owner] {
			return errDriveNotFound(driveID)
		}
		f.driveID = driveID
	} else {
		f.owner = owner
	}
	if len(parents) == 0 || parents[0] == "" {
		f.parents = []string{s.roots[owner]}
		if driveID != "" {
			f.parents = []string{driveID}
		}
	} else {
		p := parents[0]
		if p == "root" {
			p = s.roots[owner]
		}
		if !s.validParent(owner, p, f.driveID) {
			return errFileNotFound(parents[0])
		}
		f.parents = []string{p}
		if d := s.parentDrive(p); d != "" {
			f.driveID, f.owner = d, ""
		}
	}
	if f.kind == KindShortcut {
		t := s.files[f.target]
		if t == nil || t.isRoot {
			return errFileNotFound(f.target)
		}
		f.tMime = t.mimeType
	}
	s.files[f.id] = f
	return nil
}

// validParent reports whether folder id p may hold a new file of owner.
func (s *Service) validParent(owner, p, driveID string) bool {
	if d := s.drives[p]; d != nil {
		return d.members[owner] && (driveID == "" || driveID == p)
	}
	pf := s.files[p]
	if pf == nil || pf.kind != KindFolder || (driveID != "" && pf.driveID != driveID) {
		return false
	}
	if pf.driveID != "" {
		d := s.drives[pf.driveID]
		return d != nil && d.members[owner]
	}
	return pf.owner == owner
}

// parentDrive is the shared drive a parent folder id belongs to, if any.
func (s *Service) parentDrive(p string) string {
	if s.drives[p] != nil {
		return p
	}
	if pf := s.files[p]; pf != nil {
		return pf.driveID
	}
	return ""
}

// publicFile describes f. The caller holds s.mu.
func (s *Service) publicFile(f *file) File {
	out := File{
		ID: f.id, Name: f.name, MimeType: f.mimeType, Kind: f.kind, Owner: f.owner, DriveID: f.driveID,
		Parents: slices.Clone(f.parents), ResourceKey: f.resourceKey, Trashed: f.trashed,
		Created: f.created, Modified: f.modified, ShortcutTo: f.target, Permissions: s.allPermissions(f),
	}
	switch f.kind {
	case KindBinary:
		out.Size, out.MD5, out.SHA256 = f.blob.Size, f.blob.MD5, f.blob.SHA256
	case KindDoc:
		out.BodyBytes = f.blob.Size
	case KindSheet:
		for _, t := range f.tabs {
			out.Tabs = append(out.Tabs, Tab{SheetID: t.id, Title: t.title})
		}
	}
	return out
}

// PutSharedDrive creates a shared drive whose members can read and add
// files; members are registered as users.
func (s *Service) PutSharedDrive(name string, members ...string) (SharedDrive, error) {
	if strings.TrimSpace(name) == "" || len(name) > maxNameLen {
		return SharedDrive{}, fmt.Errorf("shared drive name %q: want a non-empty name", name)
	}
	d := &sharedDrive{id: newDriveID(), name: name, members: map[string]bool{}, created: s.now()}
	for _, m := range members {
		m = strings.ToLower(strings.TrimSpace(m))
		if !strings.Contains(m, "@") {
			return SharedDrive{}, fmt.Errorf("shared drive member %q: not an email address", m)
		}
		d.members[m] = true
		s.ensureRoot(m)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drives[d.id] = d
	return publicDrive(d), nil
}

func publicDrive(d *sharedDrive) SharedDrive {
	out := SharedDrive{ID: d.id, Name: d.name}
	for m := range d.members {
		out.Members = append(out.Members, m)
	}
	sort.Strings(out.Members)
	return out
}

// FileByID reports a file whoever owns it.
func (s *Service) FileByID(id string) (File, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	f := s.files[id]
	if f == nil || f.isRoot {
		return File{}, false
	}
	return s.publicFile(f), true
}

// Content opens a binary file's bytes (the caller closes them).
func (s *Service) Content(id string) (io.ReadCloser, error) {
	s.mu.RLock()
	f := s.files[id]
	s.mu.RUnlock()
	if f == nil || !f.hasBlob || f.kind != KindBinary {
		return nil, fmt.Errorf("file %q: no binary content", id)
	}
	return s.deps.Blobs.Open(f.blob.ID)
}

// Files lists the files email owns, by name.
func (s *Service) Files(email string) []File {
	email = strings.ToLower(email)
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []File
	for _, f := range s.files {
		if f.owner == email && !f.isRoot {
			out = append(out, s.publicFile(f))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Name < out[j].Name || out[i].Name == out[j].Name && out[i].ID < out[j].ID
	})
	return out
}

// RootID is the id of email's My Drive folder.
func (s *Service) RootID(email string) string { return s.ensureRoot(email) }

// mimeByName guesses a binary file's MIME type from its extension.
func mimeByName(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := knownTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		mt, _, _ := mime.ParseMediaType(t)
		return mt
	}
	return "application/octet-stream"
}

// knownTypes fixes the common types so results do not depend on the
// machine's MIME tables.
var knownTypes = map[string]string{
	".pdf": "application/pdf", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".svg": "image/svg+xml", ".webp": "image/webp", ".csv": "text/csv",
	".tsv": "text/tab-separated-values", ".txt": "text/plain", ".md": "text/markdown", ".html": "text/html",
	".htm": "text/html", ".json": "application/json", ".xml": "application/xml", ".zip": "application/zip",
	".gz": "application/gzip", ".tgz": "application/gzip", ".tar": "application/x-tar",
	".docx": mimeDOCX, ".xlsx": mimeXLSX, ".pptx": mimePPTX,
	".doc": "application/msword", ".xls": "application/vnd.ms-excel", ".ppt": "application/vnd.ms-powerpoint",
	".odt": render.MimeODT, ".ods": render.MimeODS, ".odp": render.MimeODP, ".rtf": "application/rtf",
	".epub": render.MimeEPUB, ".mp4": "video/mp4", ".mp3": "audio/mpeg", ".ics": "text/calendar",
	".exe": "application/x-msdownload", ".js": "text/javascript", ".eml": "message/rfc822",
}
