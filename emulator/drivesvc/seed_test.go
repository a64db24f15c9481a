package drivesvc_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/demoseed"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/internal/render"
)

const demoDir = "../demoseed/files"

// seedDemo loads the demo seed and returns the demo user's files by name.
func seedDemo(t *testing.T) (*env, map[string]drivesvc.File) {
	t.Helper()
	e := newEnv(t)
	if err := e.emu.Seed(demoDir); err != nil {
		t.Fatal(err)
	}
	byName := map[string]drivesvc.File{}
	for _, f := range e.drive.Files(emulator.DemoUser) {
		byName[f.Name] = f
	}
	return e, byName
}

func TestDemoSeedLoadsEverything(t *testing.T) {
	e, byName := seedDemo(t)
	want := map[string]drivesvc.Kind{
		"Q3 Report.pdf": drivesvc.KindBinary, "Acme logo.png": drivesvc.KindBinary, "customers.csv": drivesvc.KindBinary,
		"Onboarding pack.zip": drivesvc.KindBinary, "Project plan": drivesvc.KindDoc, "Meeting notes": drivesvc.KindDoc,
		"Budget 2025": drivesvc.KindSheet, "Kickoff deck": drivesvc.KindSlides, "Org chart": drivesvc.KindDrawing,
		"Projects": drivesvc.KindFolder, "Q3 Report": drivesvc.KindShortcut,
	}
	for name, kind := range want {
		if f, ok := byName[name]; !ok || f.Kind != kind {
			t.Errorf("%s: %+v, want kind %d", name, f, kind)
		}
	}
	if len(byName) != len(want) {
		t.Errorf("demo owns %d files, want %d: %v", len(byName), len(want), byName)
	}
	if sc := byName["Q3 Report"]; sc.ShortcutTo != byName["Q3 Report.pdf"].ID || sc.Parents[0] != byName["Projects"].ID {
		t.Errorf("shortcut %+v", sc)
	}
	if tabs := byName["Budget 2025"].Tabs; len(tabs) != 3 || tabs[0].Title != "Summary" || tabs[1].Title != "Expenses" || tabs[2].Title != "Headcount" {
		t.Errorf("budget tabs %+v", tabs)
	}
	content := func(name string) []byte {
		rc, err := e.drive.Content(byName[name].ID)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, _ := io.ReadAll(rc)
		return b
	}
	if _, text, err := render.CheckPDF(content("Q3 Report.pdf")); err != nil || !strings.Contains(text, "Revenue for the third quarter") {
		t.Errorf("Q3 Report.pdf: %v", err)
	}
	if _, err := png.Decode(bytes.NewReader(content("Acme logo.png"))); err != nil || byName["Acme logo.png"].MimeType != "image/png" {
		t.Errorf("logo: %v", err)
	}
	z := content("Onboarding pack.zip")
	if zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z))); err != nil || len(zr.File) != 3 {
		t.Errorf("zip: %v", err)
	}

	// Through the real client, as the demo user.
	tok := e.token(emulator.DemoUser)
	c := e.driveClient(tok)
	l, err := c.Files.List().Q("fullText contains 'revenue'").Corpora("allDrives").IncludeItemsFromAllDrives(true).SupportsAllDrives(true).Fields("files(name)").Do()
	if err != nil || len(l.Files) != 1 || l.Files[0].Name != "Q3 Report.pdf" {
		t.Errorf("search revenue: %+v %v", l, err)
	}
	l, err = c.Files.List().Q("name contains 'invoice'").Corpora("allDrives").IncludeItemsFromAllDrives(true).SupportsAllDrives(true).Fields("files(name,driveId)").Do()
	if err != nil || len(l.Files) != 1 || l.Files[0].DriveId == "" {
		t.Errorf("shared drive invoice: %+v %v", l, err)
	}
	drives, err := c.Drives.List().Do()
	if err != nil || len(drives.Drives) != 1 || drives.Drives[0].Name != "Finance Team" {
		t.Errorf("drives: %+v %v", drives, err)
	}
	fin := e.driveClient(e.token("finance@example.com"))
	if l, err := fin.Files.List().Corpora("allDrives").IncludeItemsFromAllDrives(true).SupportsAllDrives(true).Fields("files(name)").Do(); err != nil || len(l.Files) != 1 {
		t.Errorf(".members user sees the shared drive: %+v %v", l, err)
	}
	res, err := c.Files.Export(byName["Project plan"].ID, "text/markdown").Download()
	if err != nil {
		t.Fatal(err)
	}
	md, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.HasPrefix(string(md), "# Project Pelican: plan\n\n") || !strings.Contains(string(md), "- Beta with five customers: 17 November\n") {
		t.Errorf("plan as markdown:\n%s", md)
	}
	res, err = c.Files.Export(byName["Meeting notes"].ID, "text/plain").Download()
	if err != nil {
		t.Fatal(err)
	}
	notes, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.HasPrefix(string(notes), "\ufeffWeekly sync, 6 October\r\n") || strings.Contains(string(notes), "<") {
		t.Errorf("notes as text: %q", notes)
	}
	ss, err := e.sheetsClient(tok).Spreadsheets.Values.Get(byName["Budget 2025"].ID, "Expenses!D2:D5").Do()
	if err != nil || len(ss.Values) != 4 || ss.Values[3][0] != "2350" {
		t.Errorf("budget expenses: %+v %v", ss, err)
	}

	// alice shared one file directly and link-shared another with a key.
	l, err = c.Files.List().Q("sharedWithMe = true").Fields("files(name,owners/emailAddress)").Do()
	if err != nil || len(l.Files) != 1 || l.Files[0].Name != "Partner brief" || l.Files[0].Owners[0].EmailAddress != "alice@example.com" {
		t.Errorf("shared with demo: %+v %v", l, err)
	}
	const priceID, priceKey = "1PriceListLinkSharedDemo000000000", "0-DemoResourceKey0000000A"
	url := e.srv.URL + "/drive/v3/files/" + priceID + "?alt=media"
	if code, _, _ := e.do("GET", url, tok, nil, nil); code != 404 {
		t.Errorf("price list without its key: %d", code)
	}
	if code, _, body := e.do("GET", url, tok, map[string]string{"X-Goog-Drive-Resource-Keys": priceID + "/" + priceKey}, nil); code != 200 || !strings.HasPrefix(string(body), "plan,monthly") {
		t.Errorf("price list with its key: %d %s", code, body)
	}
}

// TestEmbeddedDemoSeedIsTheFolder: the seed built into the binary (what
// `serve --demo` loads from any folder) has every file of the folder,
// shared drives and their members included.
func TestEmbeddedDemoSeedIsTheFolder(t *testing.T) {
	summary := func(e *env) []string {
		var out []string
		for _, u := range []string{emulator.DemoUser, "alice@example.com", "finance@example.com"} {
			for _, f := range e.drive.Files(u) {
				out = append(out, fmt.Sprintf("%s %s kind=%d size=%d sha256=%s drive=%t parents=%d key=%t",
					u, f.Name, f.Kind, f.Size, f.SHA256, f.DriveID != "", len(f.Parents), f.ResourceKey != ""))
			}
			// What the user sees through the API: shared drives and
			// files shared with them too.
			l, err := e.driveClient(e.token(u)).Files.List().Corpora("allDrives").IncludeItemsFromAllDrives(true).
				SupportsAllDrives(true).Fields("files(name,driveId)").Do()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range l.Files {
				out = append(out, fmt.Sprintf("%s sees %s drive=%t", u, f.Name, f.DriveId != ""))
			}
		}
		slices.Sort(out)
		return out
	}
	fromDir, fromFS := newEnv(t), newEnv(t)
	if err := fromDir.emu.Seed(demoDir); err != nil {
		t.Fatal(err)
	}
	if err := fromFS.emu.SeedFS(demoseed.FS()); err != nil {
		t.Fatal(err)
	}
	dir, embedded := summary(fromDir), summary(fromFS)
	if len(dir) < 12 || !slices.Equal(dir, embedded) {
		t.Errorf("the embedded seed differs from %s:\nfolder:   %q\nembedded: %q", demoDir, dir, embedded)
	}
}

func TestSeedDirRefusesBrokenSeeds(t *testing.T) {
	tests := map[string]map[string]string{
		"folder not named by email":  {"demo/a.txt": "x"},
		"shortcut to nothing":        {"a@x.com/link.gshortcut": "missing.pdf"},
		"unknown option in meta":     {"a@x.com/a.txt": "x", "a@x.com/a.txt.meta.json": `{"colour": "red"}`},
		"meta that is not JSON":      {"a@x.com/a.txt": "x", "a@x.com/a.txt.meta.json": `{`},
		"sheet folder without csv":   {"a@x.com/B.gsheet/readme.txt": "x"},
		"bad id in meta":             {"a@x.com/a.txt": "x", "a@x.com/a.txt.meta.json": `{"id": "short"}`},
		"same id twice":              {"a@x.com/a.txt": "x", "a@x.com/a.txt.meta.json": `{"id": "1SameIdTwice00000"}`, "a@x.com/b.txt": "y", "a@x.com/b.txt.meta.json": `{"id": "1SameIdTwice00000"}`},
		"bad member of shared drive": {"a@x.com/_shared/T/a.txt": "x", "a@x.com/_shared/T/.members": "not-an-email"},
	}
	for name, files := range tests {
		dir := t.TempDir()
		for p, body := range files {
			full := filepath.Join(dir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		e := newEnv(t)
		if err := e.emu.Seed(dir); err == nil {
			t.Errorf("%s: seeded without error", name)
		}
	}
}

func TestSeedSharedDriveNamedByTwoUsersIsOneDrive(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a@x.com/_shared/Ops/one.txt", "b@x.com/_shared/Ops/two.txt"} {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t)
	if err := e.emu.Seed(dir); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"a@x.com", "b@x.com"} {
		l, err := e.driveClient(e.token(u)).Files.List().Corpora("allDrives").IncludeItemsFromAllDrives(true).SupportsAllDrives(true).OrderBy("name").Fields("files(name)").Do()
		if err != nil || len(l.Files) != 2 {
			t.Errorf("%s sees %+v %v", u, l, err)
			continue
		}
		if got := []string{l.Files[0].Name, l.Files[1].Name}; !slices.Equal(got, []string{"one.txt", "two.txt"}) {
			t.Errorf("%s sees %v", u, got)
		}
	}
}

// TestDemoSeedSharing: the demo's files carry a realistic spread of
// sharing, each way a recipient can open a link: anyone with the link,
// a domain, one user, and a file only its owner reaches.
func TestDemoSeedSharing(t *testing.T) {
	_, byName := seedDemo(t)
	for name, want := range map[string]string{
		"Q3 Report.pdf": "anyone:reader",
		"Project plan":  "domain:example.com:commenter",
		"Meeting notes": "user:priya@example.org:writer",
		"Kickoff deck":  "",
	} {
		perms := byName[name].Permissions
		if len(perms) == 0 || perms[0].Role != "owner" || perms[0].EmailAddress != emulator.DemoUser {
			t.Errorf("%s: permissions %+v, want the owner first", name, perms)
			continue
		}
		got := ""
		for _, p := range perms[1:] {
			got += strings.Join(slices.DeleteFunc([]string{p.Type, p.EmailAddress, p.Domain, p.Role}, func(s string) bool { return s == "" }), ":")
		}
		if got != want {
			t.Errorf("%s: shared as %q, want %q", name, got, want)
		}
	}
}
