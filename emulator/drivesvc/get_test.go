package drivesvc_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/api/drive/v3"

	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/internal/core"
)

const ann, bob = "ann@example.com", "bob@example.com"

func TestGetDefaultAndRequestedFields(t *testing.T) {
	e := newEnv(t)
	f := e.put(ann, drivesvc.FileSpec{Name: "report.pdf", Content: []byte("%PDF-1.4 tiny")})
	tok := e.token(ann)

	// Without fields, Google returns kind, id, name and mimeType only.
	code, _, body := e.do("GET", e.srv.URL+"/drive/v3/files/"+f.ID, tok, nil, nil)
	if code != 200 {
		t.Fatalf("get: %d %s", code, body)
	}
	keys := jsonKeys(t, body)
	if len(keys) != 4 || keys["kind"] == nil || keys["id"] == nil || keys["name"] == nil || keys["mimeType"] == nil {
		t.Errorf("default fields = %s", body)
	}

	got, err := e.driveClient(tok).Files.Get(f.ID).Fields("id,name,size,md5Checksum,sha256Checksum,capabilities(canDownload),owners/emailAddress").Do()
	if err != nil {
		t.Fatal(err)
	}
	if got.Size != int64(len("%PDF-1.4 tiny")) || got.Md5Checksum != f.MD5 || got.Sha256Checksum != f.SHA256 {
		t.Errorf("size %d md5 %q sha256 %q, want %d %q %q", got.Size, got.Md5Checksum, got.Sha256Checksum, f.Size, f.MD5, f.SHA256)
	}
	if got.Capabilities == nil || !got.Capabilities.CanDownload || len(got.Owners) != 1 || got.Owners[0].EmailAddress != ann {
		t.Errorf("capabilities %+v owners %+v", got.Capabilities, got.Owners)
	}
	if got.MimeType != "" {
		t.Errorf("mimeType %q returned though not asked for", got.MimeType)
	}

	_, err = e.driveClient(tok).Files.Get(f.ID).Fields("id,sizee").Do()
	wantReason(t, err, 400, "invalidParameter")
	_, err = e.driveClient(tok).Files.Get(f.ID).Fields("id,(name").Do()
	wantReason(t, err, 400, "invalidParameter")
}

func TestDownloadWithRange(t *testing.T) {
	e := newEnv(t)
	content := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	f := e.put(ann, drivesvc.FileSpec{Name: "data.bin", Content: content})
	tok := e.token(ann)
	url := e.srv.URL + "/drive/v3/files/" + f.ID + "?alt=media"

	res, err := e.driveClient(tok).Files.Get(f.ID).Download()
	if err != nil {
		t.Fatal(err)
	}
	all, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !bytes.Equal(all, content) {
		t.Fatalf("download = %q", all)
	}

	tests := []struct {
		rng       string
		wantCode  int
		wantBody  string
		wantRange string
	}{
		{"bytes=0-9", 206, "0123456789", "bytes 0-9/36"},
		{"bytes=30-", 206, "uvwxyz", "bytes 30-35/36"},
		{"bytes=-3", 206, "xyz", "bytes 33-35/36"},
		{"bytes=35-35", 206, "z", "bytes 35-35/36"}, // the last byte
		{"bytes=36-", 416, "", "bytes */36"},        // one past the end
	}
	for _, tt := range tests {
		code, hdr, body := e.do("GET", url, tok, map[string]string{"Range": tt.rng}, nil)
		if code != tt.wantCode || hdr.Get("Content-Range") != tt.wantRange {
			t.Errorf("%s: %d Content-Range %q, want %d %q", tt.rng, code, hdr.Get("Content-Range"), tt.wantCode, tt.wantRange)
		}
		if code == 206 && string(body) != tt.wantBody {
			t.Errorf("%s: body %q, want %q", tt.rng, body, tt.wantBody)
		}
	}
	st := e.emu.Stats()
	// one whole download and four range reads; the 416 is neither
	want := core.FileStats{Downloads: 1, BytesServed: int64(len(content)), RangeReads: 4, RangeBytes: 10 + 6 + 3 + 1}
	if fs := st.Files[f.ID]; fs != want {
		t.Errorf("stats for the file = %+v, want %+v", fs, want)
	}
}

func TestNativeFilesAndFoldersAreNotDownloadable(t *testing.T) {
	e := newEnv(t)
	doc := e.put(ann, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "# Plan\nShip it."})
	folder := e.put(ann, drivesvc.FileSpec{Name: "Stuff", Kind: drivesvc.KindFolder})
	c := e.driveClient(e.token(ann))
	for _, id := range []string{doc.ID, folder.ID} {
		_, err := c.Files.Get(id).Download()
		ge := wantReason(t, err, 403, "fileNotDownloadable")
		if ge.Message != "Only files with binary content can be downloaded. Use Export with Docs Editors files." {
			t.Errorf("message %q", ge.Message)
		}
	}
	// A restricted binary is refused with cannotDownloadFile, and says so in capabilities.
	locked := e.put(ann, drivesvc.FileSpec{Name: "locked.pdf", Content: []byte("x"), NoDownload: true})
	_, err := c.Files.Get(locked.ID).Download()
	wantReason(t, err, 403, "cannotDownloadFile")
	meta, err := c.Files.Get(locked.ID).Fields("capabilities").Do()
	if err != nil || meta.Capabilities.CanDownload {
		t.Errorf("capabilities of a restricted file: %+v, %v", meta, err)
	}
}

func TestUsersNeverSeeEachOthersFiles(t *testing.T) {
	e := newEnv(t)
	secret := e.put(ann, drivesvc.FileSpec{Name: "salaries.csv", Content: []byte("a,b\n")})
	doc := e.put(ann, drivesvc.FileSpec{Name: "Secret plan", Kind: drivesvc.KindDoc, DocText: "x"})
	cb := e.driveClient(e.token(bob))
	const missing = "1ThisIdDoesNotExistAnywhere000000"

	_, errMissing := cb.Files.Get(missing).Do()
	gm := wantReason(t, errMissing, 404, "notFound")
	for _, id := range []string{secret.ID, doc.ID} {
		_, err := cb.Files.Get(id).Do()
		ge := wantReason(t, err, 404, "notFound")
		// Same text as a missing id but for the id itself.
		if strings.ReplaceAll(ge.Message, id, missing) != gm.Message || !strings.Contains(string(ge.Body), `"location": "fileId"`) {
			t.Errorf("another user's file: %q (%s); missing: %q", ge.Message, ge.Body, gm.Message)
		}
		_, err = cb.Files.Get(id).Download()
		wantReason(t, err, 404, "notFound")
		_, err = cb.Files.Export(id, "text/plain").Download()
		wantReason(t, err, 404, "notFound")
	}
	list, err := cb.Files.List().Fields("files(id)").Do()
	if err != nil || len(list.Files) != 0 {
		t.Errorf("bob lists %d files (%v), want none", len(list.Files), err)
	}
	// The raw bodies match too, byte for byte after the id.
	_, _, b1 := e.do("GET", e.srv.URL+"/drive/v3/files/"+secret.ID, e.token(bob), nil, nil)
	_, _, b2 := e.do("GET", e.srv.URL+"/drive/v3/files/"+missing, e.token(bob), nil, nil)
	if string(bytes.ReplaceAll(b1, []byte(secret.ID), []byte(missing))) != string(b2) {
		t.Errorf("bodies differ:\n%s\n%s", b1, b2)
	}
}

func TestSharedWithAndLinkSharingWithResourceKeys(t *testing.T) {
	e := newEnv(t)
	shared := e.put(ann, drivesvc.FileSpec{Name: "shared.txt", Content: []byte("hi bob"), SharedWith: []string{bob}})
	key := drivesvc.NewResourceKey()
	keyed := e.put(ann, drivesvc.FileSpec{Name: "keyed.txt", Content: []byte("needs key"), LinkShared: true, ResourceKey: key})
	open := e.put(ann, drivesvc.FileSpec{Name: "open.txt", Content: []byte("no key"), LinkShared: true})
	tok := e.token(bob)
	get := func(id, keys string) int {
		h := map[string]string{}
		if keys != "" {
			h["X-Goog-Drive-Resource-Keys"] = keys
		}
		code, _, _ := e.do("GET", e.srv.URL+"/drive/v3/files/"+id+"?alt=media", tok, h, nil)
		return code
	}
	tests := []struct {
		name string
		id   string
		keys string
		want int
	}{
		{"shared directly", shared.ID, "", 200},
		{"link-shared without its key", keyed.ID, "", 404},
		{"wrong key", keyed.ID, keyed.ID + "/0-wrong", 404},
		{"key of another file", keyed.ID, open.ID + "/" + key, 404},
		{"right key among others", keyed.ID, open.ID + "/0-x, " + keyed.ID + "/" + key, 200},
		{"link-shared without a key", open.ID, "", 200},
	}
	for _, tt := range tests {
		if got := get(tt.id, tt.keys); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
	// Shared files list for bob; link-only ones do not.
	list, err := e.driveClient(tok).Files.List().Fields("files(id,name,resourceKey)").Do()
	if err != nil || len(list.Files) != 1 || list.Files[0].Id != shared.ID {
		t.Errorf("bob's list = %+v, %v; want only the directly shared file", list, err)
	}
	meta, err := e.driveClient(e.token(ann)).Files.Get(keyed.ID).Fields("resourceKey").Do()
	if err != nil || meta.ResourceKey != key {
		t.Errorf("owner sees resourceKey %q (%v), want %q", meta.ResourceKey, err, key)
	}
}

func TestSharedDriveVisibility(t *testing.T) {
	e := newEnv(t)
	d, err := e.drive.PutSharedDrive("Finance", ann)
	if err != nil {
		t.Fatal(err)
	}
	inv := e.put(ann, drivesvc.FileSpec{Name: "invoice.pdf", Content: []byte("inv"), SharedDrive: d.ID})
	mine := e.put(ann, drivesvc.FileSpec{Name: "mine.txt", Content: []byte("m")})
	ca, cb := e.driveClient(e.token(ann)), e.driveClient(e.token(bob))

	_, err = ca.Files.Get(inv.ID).Do()
	wantReason(t, err, 404, "notFound") // no supportsAllDrives: as if missing
	got, err := ca.Files.Get(inv.ID).SupportsAllDrives(true).Fields("id,driveId,owners,parents").Do()
	if err != nil || got.DriveId != d.ID || len(got.Owners) != 0 || len(got.Parents) != 1 || got.Parents[0] != d.ID {
		t.Errorf("member with supportsAllDrives: %+v, %v", got, err)
	}
	_, err = cb.Files.Get(inv.ID).SupportsAllDrives(true).Do()
	wantReason(t, err, 404, "notFound") // not a member

	names := func(call func() ([]string, error)) []string {
		n, err := call()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	list := func(corpora string) func() ([]string, error) {
		return func() ([]string, error) {
			l, err := ca.Files.List().Corpora(corpora).IncludeItemsFromAllDrives(true).SupportsAllDrives(true).OrderBy("name").Fields("files(name)").Do()
			if err != nil {
				return nil, err
			}
			var out []string
			for _, f := range l.Files {
				out = append(out, f.Name)
			}
			return out, nil
		}
	}
	if got := fmt.Sprint(names(list("allDrives"))); got != "[invoice.pdf mine.txt]" {
		t.Errorf("allDrives lists %s", got)
	}
	if got := fmt.Sprint(names(list("user"))); got != "[mine.txt]" {
		t.Errorf("user corpus lists %s", got)
	}
	l, err := ca.Files.List().Corpora("drive").DriveId(d.ID).IncludeItemsFromAllDrives(true).SupportsAllDrives(true).Fields("files(id)").Do()
	if err != nil || len(l.Files) != 1 || l.Files[0].Id != inv.ID {
		t.Errorf("drive corpus: %+v %v", l, err)
	}
	_ = mine

	// Google's parameter rules.
	_, err = ca.Files.List().Corpora("drive").IncludeItemsFromAllDrives(true).SupportsAllDrives(true).Do()
	wantReason(t, err, 400, "teamDriveIdRequiresTeamDriveCorpora")
	_, err = ca.Files.List().DriveId(d.ID).IncludeItemsFromAllDrives(true).SupportsAllDrives(true).Do()
	wantReason(t, err, 400, "teamDriveIdRequiresTeamDriveCorpora")
	_, err = ca.Files.List().Corpora("allDrives").SupportsAllDrives(true).Do()
	wantReason(t, err, 403, "teamDriveItemsRequired")
	_, err = ca.Files.List().Corpora("everything").Do()
	wantReason(t, err, 400, "invalid")
	_, err = cb.Files.List().Corpora("drive").DriveId(d.ID).IncludeItemsFromAllDrives(true).SupportsAllDrives(true).Do()
	wantReason(t, err, 404, "notFound")
}

func TestShortcutsReturnTheirOwnMetadata(t *testing.T) {
	e := newEnv(t)
	target := e.put(ann, drivesvc.FileSpec{Name: "q3.pdf", Content: []byte("%PDF")})
	sc := e.put(ann, drivesvc.FileSpec{Name: "q3 shortcut", Kind: drivesvc.KindShortcut, ShortcutTo: target.ID})
	c := e.driveClient(e.token(ann))
	got, err := c.Files.Get(sc.ID).Fields("id,mimeType,shortcutDetails").Do()
	if err != nil {
		t.Fatal(err)
	}
	if got.MimeType != drivesvc.MimeShortcut || got.ShortcutDetails == nil ||
		got.ShortcutDetails.TargetId != target.ID || got.ShortcutDetails.TargetMimeType != "application/pdf" {
		t.Errorf("shortcut metadata %+v %+v", got, got.ShortcutDetails)
	}
	_, err = c.Files.Get(sc.ID).Download()
	wantReason(t, err, 403, "fileNotDownloadable")
	res, err := c.Files.Get(got.ShortcutDetails.TargetId).Download()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "%PDF" {
		t.Errorf("following the shortcut gave %q", b)
	}
	// A shortcut to a missing file cannot be made.
	if _, err := e.drive.PutFile(ann, drivesvc.FileSpec{Name: "x", Kind: drivesvc.KindShortcut, ShortcutTo: "1nope000000000000"}); err == nil {
		t.Error("a shortcut to a missing target was created")
	}
}

func TestScopes(t *testing.T) {
	e := newEnv(t)
	seeded := e.put(ann, drivesvc.FileSpec{Name: "seeded.txt", Content: []byte("s")})
	own := e.put(ann, drivesvc.FileSpec{Name: "app.txt", Content: []byte("a"), ClientID: "emulator-test"})
	other := e.put(ann, drivesvc.FileSpec{Name: "other-app.txt", Content: []byte("o"), ClientID: "another-client"})

	fileOnly := e.driveClient(e.token(ann, drivesvc.ScopeDriveFile))
	if _, err := fileOnly.Files.Get(own.ID).Do(); err != nil {
		t.Errorf("drive.file token reading its client's file: %v", err)
	}
	for _, id := range []string{seeded.ID, other.ID} {
		_, err := fileOnly.Files.Get(id).Do()
		wantReason(t, err, 404, "notFound")
	}
	l, err := fileOnly.Files.List().Fields("files(id)").Do()
	if err != nil || len(l.Files) != 1 || l.Files[0].Id != own.ID {
		t.Errorf("drive.file list: %+v %v", l, err)
	}

	readonly := e.driveClient(e.token(ann, drivesvc.ScopeDriveReadonly))
	if _, err := readonly.Files.Get(seeded.ID).Download(); err != nil {
		t.Errorf("drive.readonly download: %v", err)
	}
	_, err = readonly.Files.Create(&drive.File{Name: "new"}).Do()
	wantReason(t, err, 403, "insufficientPermissions")

	metaOnly := e.driveClient(e.token(ann, drivesvc.ScopeDriveMetadataRO))
	if _, err := metaOnly.Files.Get(seeded.ID).Do(); err != nil {
		t.Errorf("metadata scope reading metadata: %v", err)
	}
	_, err = metaOnly.Files.Get(seeded.ID).Download()
	wantReason(t, err, 403, "insufficientPermissions")

	gmailOnly := e.driveClient(e.token(ann, "https://www.googleapis.com/auth/gmail.send"))
	_, err = gmailOnly.Files.List().Do()
	wantReason(t, err, 403, "insufficientPermissions")

	code, hdr, _ := e.do("GET", e.srv.URL+"/drive/v3/files", "ya29.emu-not-a-token", nil, nil)
	if code != http.StatusUnauthorized || !strings.Contains(hdr.Get("WWW-Authenticate"), "invalid_token") {
		t.Errorf("bad token: %d %v", code, hdr)
	}
}

func TestRootAliasAndMoves(t *testing.T) {
	e := newEnv(t)
	c := e.driveClient(e.token(ann))
	root, err := c.Files.Get("root").Fields("id,name,mimeType,parents").Do()
	if err != nil || root.Id != e.drive.RootID(ann) || root.Name != "My Drive" || root.MimeType != drivesvc.MimeFolder || len(root.Parents) != 0 {
		t.Fatalf("root: %+v %v", root, err)
	}
	_, err = c.Files.Update("root", &drive.File{Name: "Mine"}).Do()
	wantReason(t, err, 403, "insufficientFilePermissions")
	folder := e.put(ann, drivesvc.FileSpec{Name: "Archive", Kind: drivesvc.KindFolder})
	f := e.put(ann, drivesvc.FileSpec{Name: "a.txt", Content: []byte("a")})
	moved, err := c.Files.Update(f.ID, &drive.File{}).AddParents(folder.ID).RemoveParents(root.Id).Fields("parents").Do()
	if err != nil || len(moved.Parents) != 1 || moved.Parents[0] != folder.ID {
		t.Errorf("move: %+v %v", moved, err)
	}
	l, err := c.Files.List().Q("'" + folder.ID + "' in parents").Fields("files(id)").Do()
	if err != nil || len(l.Files) != 1 || l.Files[0].Id != f.ID {
		t.Errorf("list the folder: %+v %v", l, err)
	}
	_, err = c.Files.Update(f.ID, &drive.File{}).AddParents("1NotAFolder0000000").Do()
	wantReason(t, err, 404, "notFound")
	// Bob cannot see ann's root by its id.
	_, err = e.driveClient(e.token(bob)).Files.Get(root.Id).Do()
	wantReason(t, err, 404, "notFound")
}

func TestWebViewPagesEscapeTheirInput(t *testing.T) {
	e := newEnv(t)
	code, _, body := e.do("GET", e.srv.URL+"/document/d/%3Cscript%3E/edit", "", nil, nil)
	if code != 200 || strings.Contains(string(body), "<script>") || !strings.Contains(string(body), "&lt;script&gt;") {
		t.Errorf("%d %s", code, body)
	}
}
