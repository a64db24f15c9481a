package drivesvc

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// SeedDir preloads every user folder under dir (see docs/emulator.md):
//
//	DIR/EMAIL/                  one folder per user; its files are theirs
//	  report.pdf                a binary file, MIME type from the extension
//	  Projects/                 a folder, with everything inside it
//	  Plan.gdoc.md              a Doc "Plan" ("# " headings, "- " bullets)
//	  Plan.gdoc.html            a Doc converted from HTML
//	  Plan.gdoc.txt             a Doc, one paragraph per line
//	  Budget.gsheet/            a Sheet "Budget": one CSV per tab, in file
//	    1 Summary.csv           name order; "1 " / "01-" / "2_" prefixes order
//	    2 Costs.csv             tabs and are dropped from the tab title
//	  Budget.gsheet.csv         a one-tab Sheet
//	  Deck.gslides.txt          Slides: "---" lines separate slides, the
//	                            first line of each is its title
//	  Chart.gdraw.txt           a Drawing whose lines are its text
//	  Link.gshortcut            a shortcut "Link"; the file holds the target's
//	                            path under EMAIL/ (or "id:FILEID")
//	  _mail/*.eml               mail from others in EMAIL's inbox (gmailsvc)
//	  _shared/Team Drive/       a shared drive EMAIL belongs to, with its
//	    .members                files; .members lists more member emails
//	  X.meta.json               options for file or folder X: id,
//	                            description, shared_with, link_shared,
//	                            resource_key ("auto" makes one),
//	                            no_download, trashed, created_time,
//	                            modified_time, client_id, mime_type, name
//
// Names starting with "." are skipped. A shared drive's name may appear
// under several users: they all become its members.
func (s *Service) SeedDir(dir string) error {
	return s.seed(os.DirFS(dir), func(p string) string { return filepath.Join(dir, filepath.FromSlash(p)) })
}

// SeedFS is SeedDir over a file system (such as an embedded seed).
func (s *Service) SeedFS(fsys fs.FS) error {
	return s.seed(fsys, func(p string) string { return p })
}

// seed loads fsys; where names a path in fsys for a message.
func (s *Service) seed(fsys fs.FS, where func(string) string) error {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	sd := &seeder{s: s, fsys: fsys, where: where, drives: map[string]string{}, paths: map[string]map[string]string{}}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		email := strings.ToLower(e.Name())
		if !strings.Contains(email, "@") {
			return fmt.Errorf("seed: %s: user folders are named by email address", e.Name())
		}
		sd.paths[email] = map[string]string{}
		s.ensureRoot(email)
		if err := sd.folder(email, e.Name(), "", nil, ""); err != nil {
			return err
		}
	}
	return sd.resolveShortcuts()
}

type seeder struct {
	s         *Service
	fsys      fs.FS
	where     func(string) string          // a path in fsys as the user wrote it
	drives    map[string]string            // shared drive name → id
	paths     map[string]map[string]string // user → path under their folder → file id
	shortcuts []pendingShortcut
}

type pendingShortcut struct {
	owner, target, file string
	spec                FileSpec
}

var orderPrefix = regexp.MustCompile(`^\d+[ _-]+`)

// folder seeds the entries of directory abs (a path in sd.fsys; rel under
// the user folder).
func (sd *seeder) folder(owner, abs, rel string, parents []string, driveID string) error {
	entries, err := fs.ReadDir(sd.fsys, abs)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".meta.json") {
			continue
		}
		p := path.Join(abs, name)
		relPath := path.Join(rel, name)
		if !e.IsDir() && !e.Type().IsRegular() {
			continue // symlinks and devices stay out of seeds
		}
		if e.IsDir() && rel == "" && name == "_mail" && driveID == "" {
			continue // mail for the user's inbox: gmailsvc seeds it
		}
		if e.IsDir() && rel == "" && name == "_shared" && driveID == "" {
			if err := sd.sharedDrives(owner, p); err != nil {
				return err
			}
			continue
		}
		spec := FileSpec{Parents: parents, SharedDrive: driveID}
		recurse := false
		switch {
		case e.IsDir() && strings.HasSuffix(name, ".gsheet"):
			spec.Kind, spec.Name = KindSheet, strings.TrimSuffix(name, ".gsheet")
			if spec.Tabs, err = readTabs(sd.fsys, p); err != nil {
				return fmt.Errorf("seed %s: %w", sd.where(p), err)
			}
		case e.IsDir():
			spec.Kind, spec.Name, recurse = KindFolder, name, true
		default:
			var pending bool
			if pending, err = sd.fileSpec(&spec, p, name); err != nil {
				return fmt.Errorf("seed %s: %w", sd.where(p), err)
			}
			if pending {
				if err := sd.applyMeta(&spec, p+".meta.json"); err != nil {
					return err
				}
				target, err := fs.ReadFile(sd.fsys, p)
				if err != nil {
					return fmt.Errorf("seed: %w", err)
				}
				sd.shortcuts = append(sd.shortcuts, pendingShortcut{owner, strings.TrimSpace(string(target)), sd.where(p), spec})
				continue
			}
		}
		if err := sd.applyMeta(&spec, p+".meta.json"); err != nil {
			return err
		}
		f, err := sd.s.PutFile(owner, spec)
		if c, ok := spec.Reader.(io.Closer); ok {
			_ = c.Close() // a seed file, only read: PutFile's error is the one that counts
		}
		if err != nil {
			return fmt.Errorf("seed %s: %w", sd.where(p), err)
		}
		sd.paths[owner][relPath] = f.ID
		if recurse {
			if err := sd.folder(owner, p, relPath, []string{f.ID}, f.DriveID); err != nil {
				return err
			}
		}
	}
	return nil
}

// fileSpec fills spec for a regular file by its naming convention;
// pending reports a shortcut, made once every target exists.
func (sd *seeder) fileSpec(spec *FileSpec, p, name string) (pending bool, err error) {
	info, err := fs.Stat(sd.fsys, p)
	if err != nil {
		return false, err
	}
	if info.Size() > maxSeedFile {
		return false, fmt.Errorf("%d bytes: seed files are at most %d bytes", info.Size(), maxSeedFile)
	}
	text := func() (string, error) {
		b, err := fs.ReadFile(sd.fsys, p)
		return string(b), err
	}
	cut := func(suffix string) bool {
		if strings.HasSuffix(name, suffix) {
			spec.Name = strings.TrimSuffix(name, suffix)
			return true
		}
		return false
	}
	switch {
	case cut(".gdoc.md"), cut(".gdoc.txt"):
		spec.Kind = KindDoc
		spec.docPlain = strings.HasSuffix(name, ".txt")
		spec.DocText, err = text()
		return false, err
	case cut(".gdoc.html"):
		spec.Kind = KindDoc
		spec.DocHTML, err = text()
		return false, err
	case cut(".gsheet.csv"):
		spec.Kind = KindSheet
		f, err := sd.fsys.Open(p)
		if err != nil {
			return false, err
		}
		defer f.Close()
		t, err := csvTab(f, "Sheet1", ',')
		if err != nil {
			return false, err
		}
		spec.Tabs = []Tab{{Title: t.title, Rows: t.rows}}
		return false, nil
	case cut(".gslides.txt"), cut(".gslides.md"):
		spec.Kind = KindSlides
		t, err := text()
		for _, sl := range slidesFromText(t) {
			spec.Slides = append(spec.Slides, Slide{Title: sl.title, Body: sl.body})
		}
		return false, err
	case cut(".gdraw.txt"):
		spec.Kind = KindDrawing
		t, err := text()
		for l := range strings.SplitSeq(strings.TrimRight(strings.ReplaceAll(t, "\r\n", "\n"), "\n"), "\n") {
			spec.Lines = append(spec.Lines, l)
		}
		return false, err
	case cut(".gshortcut"):
		spec.Kind = KindShortcut
		return true, nil
	}
	spec.Kind, spec.Name = KindBinary, name
	f, err := sd.fsys.Open(p)
	if err != nil {
		return false, err
	}
	spec.Reader = f
	if info.ModTime().After(time.Unix(0, 0)) {
		spec.Modified = info.ModTime()
	}
	return false, nil
}

// sharedDrives seeds each folder under _shared as a shared drive owner
// belongs to, with more members from its .members file.
func (sd *seeder) sharedDrives(owner, dir string) error {
	entries, err := fs.ReadDir(sd.fsys, dir)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := path.Join(dir, e.Name())
		members := []string{owner}
		if b, err := fs.ReadFile(sd.fsys, path.Join(p, ".members")); err == nil {
			sc := bufio.NewScanner(strings.NewReader(string(b)))
			for sc.Scan() {
				if m := strings.TrimSpace(sc.Text()); m != "" && !strings.HasPrefix(m, "#") {
					members = append(members, m)
				}
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("seed: %w", err)
		}
		id, ok := sd.drives[e.Name()]
		if !ok {
			d, err := sd.s.PutSharedDrive(e.Name(), members...)
			if err != nil {
				return fmt.Errorf("seed %s: %w", sd.where(p), err)
			}
			id = d.ID
			sd.drives[e.Name()] = id
		} else if err := sd.s.addMembers(id, members); err != nil {
			return fmt.Errorf("seed %s: %w", sd.where(p), err)
		}
		if err := sd.folder(owner, p, path.Join("_shared", e.Name()), nil, id); err != nil {
			return err
		}
	}
	return nil
}

// addMembers adds users to a shared drive.
func (s *Service) addMembers(driveID string, members []string) error {
	for _, m := range members {
		m = strings.ToLower(strings.TrimSpace(m))
		if !strings.Contains(m, "@") {
			return fmt.Errorf("shared drive member %q: not an email address", m)
		}
		s.ensureRoot(m)
		s.mu.Lock()
		s.drives[driveID].members[m] = true
		s.mu.Unlock()
	}
	return nil
}

// readTabs reads a .gsheet folder: one CSV per tab in name order.
func readTabs(fsys fs.FS, dir string) ([]Tab, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var tabs []Tab
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(strings.ToLower(e.Name()), ".csv") {
			continue
		}
		f, err := fsys.Open(path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		title := orderPrefix.ReplaceAllString(strings.TrimSuffix(e.Name(), path.Ext(e.Name())), "")
		t, err := csvTab(f, title, ',')
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		tabs = append(tabs, Tab{Title: t.title, Rows: t.rows})
	}
	if len(tabs) == 0 {
		return nil, errors.New("a .gsheet folder needs at least one .csv file")
	}
	return tabs, nil
}

// applyMeta overlays the options of a NAME.meta.json sidecar, if any.
func (sd *seeder) applyMeta(spec *FileSpec, metaPath string) error {
	b, err := fs.ReadFile(sd.fsys, metaPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	var m specJSON
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("seed %s: %w", sd.where(metaPath), err)
	}
	o, err := m.toSpec()
	if err != nil {
		return fmt.Errorf("seed %s: %w", sd.where(metaPath), err)
	}
	if m.ID != "" {
		spec.ID = m.ID
	}
	if m.Name != "" {
		spec.Name = m.Name
	}
	if m.MimeType != "" {
		spec.MimeType = m.MimeType
	}
	if m.Description != "" {
		spec.Description = m.Description
	}
	spec.SharedWith = append(spec.SharedWith, o.SharedWith...)
	spec.Permissions = append(spec.Permissions, o.Permissions...)
	spec.LinkShared = spec.LinkShared || o.LinkShared
	if o.ResourceKey != "" {
		spec.ResourceKey = o.ResourceKey
	}
	spec.NoDownload = spec.NoDownload || o.NoDownload
	spec.Trashed = spec.Trashed || o.Trashed
	if o.ClientID != "" {
		spec.ClientID = o.ClientID
	}
	if !o.Created.IsZero() {
		spec.Created = o.Created
	}
	if !o.Modified.IsZero() {
		spec.Modified = o.Modified
	}
	return nil
}

// resolveShortcuts creates the shortcuts once every target exists.
func (sd *seeder) resolveShortcuts() error {
	for _, sc := range sd.shortcuts {
		target := sc.target
		if id, ok := strings.CutPrefix(target, "id:"); ok {
			target = strings.TrimSpace(id)
		} else {
			id, ok := sd.paths[sc.owner][path.Clean(strings.TrimPrefix(filepath.ToSlash(target), "/"))]
			if !ok {
				return fmt.Errorf("seed %s: no seeded file at %q under %s/", sc.file, sc.target, sc.owner)
			}
			target = id
		}
		spec := sc.spec
		spec.ShortcutTo = target
		if _, err := sd.s.PutFile(sc.owner, spec); err != nil {
			return fmt.Errorf("seed %s: %w", sc.file, err)
		}
	}
	return nil
}
