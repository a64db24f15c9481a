package drivesvc_test

import (
	"strings"
	"testing"

	"google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"

	"github.com/drivemail/drivemail/emulator/drivesvc"
)

// TestDriveFileWritesNeedTheAppsOwnFiles: a token whose only writing
// scope is drive.file may add files only to folders its app created or
// was opened with, and change only such files, even when drive.readonly
// lets it see the rest: Google's 403 appNotAuthorizedToFile ("Resolve
// errors"). Without drive.readonly the other folders are not found at
// all; with the full drive scope every write works. isAppAuthorized
// tells the app's own files apart.
func TestDriveFileWritesNeedTheAppsOwnFiles(t *testing.T) {
	e := newEnv(t)
	const app = "drivemail-app"
	mine := e.put(ann, drivesvc.FileSpec{Name: "drivemail uploads", Kind: drivesvc.KindFolder, ClientID: app})
	opened := e.put(ann, drivesvc.FileSpec{Name: "Picked", Kind: drivesvc.KindFolder, OpenedWith: []string{app}})
	handMade := e.put(ann, drivesvc.FileSpec{Name: "drivemail uploads", Kind: drivesvc.KindFolder})
	otherApp := e.put(ann, drivesvc.FileSpec{Name: "drivemail uploads", Kind: drivesvc.KindFolder, ClientID: "another-app"})
	foreignFile := e.put(ann, drivesvc.FileSpec{Name: "notes.txt", Content: []byte("x"), Parents: []string{handMade.ID}})

	readAndFile := e.driveClient(e.emu.AccessTokenFor(ann, app, drivesvc.ScopeDriveFile, drivesvc.ScopeDriveReadonly))
	fileOnly := e.driveClient(e.emu.AccessTokenFor(ann, app, drivesvc.ScopeDriveFile))
	full := e.driveClient(e.emu.AccessTokenFor(ann, app, drivesvc.ScopeDrive))
	create := func(c *drive.Service, parent string) error {
		_, err := c.Files.Create(&drive.File{Name: "a.txt", Parents: []string{parent}}).
			Media(strings.NewReader("hello"), googleapi.ContentType("text/plain")).Do()
		return err
	}
	for _, tt := range []struct {
		name   string
		c      *drive.Service
		parent string
		code   int
		reason string
	}{
		{"the app's folder", readAndFile, mine.ID, 200, ""},
		{"a folder opened with the app", readAndFile, opened.ID, 200, ""},
		{"My Drive", readAndFile, "root", 200, ""},
		{"a hand-made folder, readable", readAndFile, handMade.ID, 403, "appNotAuthorizedToFile"},
		{"another app's folder, readable", readAndFile, otherApp.ID, 403, "appNotAuthorizedToFile"},
		{"a hand-made folder, unseen", fileOnly, handMade.ID, 404, "notFound"},
		{"a hand-made folder, full scope", full, handMade.ID, 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := create(tt.c, tt.parent)
			if tt.code == 200 {
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				return
			}
			ge := wantReason(t, err, tt.code, tt.reason)
			if tt.code == 403 && (!strings.Contains(ge.Message, "has not granted the app") || !strings.Contains(ge.Body, `"location": "Authorization"`)) {
				t.Errorf("403 %s: want Google's appNotAuthorizedToFile message on the Authorization header", ge.Body)
			}
		})
	}

	// Changing or deleting a file the app did not create, or moving a
	// file into such a folder, is refused the same way.
	_, err := readAndFile.Files.Update(foreignFile.ID, &drive.File{Name: "renamed.txt"}).Do()
	wantReason(t, err, 403, "appNotAuthorizedToFile")
	wantReason(t, readAndFile.Files.Delete(foreignFile.ID).Do(), 403, "appNotAuthorizedToFile")
	own, err := readAndFile.Files.Create(&drive.File{Name: "own.txt", Parents: []string{mine.ID}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	_, err = readAndFile.Files.Update(own.Id, &drive.File{}).AddParents(handMade.ID).RemoveParents(mine.ID).Do()
	wantReason(t, err, 403, "appNotAuthorizedToFile")
	if _, err := readAndFile.Files.Update(own.Id, &drive.File{Name: "own 2.txt"}).Do(); err != nil {
		t.Errorf("renaming the app's own file: %v", err)
	}

	for _, f := range []struct {
		id   string
		want bool
	}{{mine.ID, true}, {opened.ID, true}, {handMade.ID, false}, {otherApp.ID, false}} {
		got, err := readAndFile.Files.Get(f.id).Fields("isAppAuthorized").Do()
		if err != nil || got.IsAppAuthorized != f.want {
			t.Errorf("isAppAuthorized of %s: %v %v, want %v", f.id, got.IsAppAuthorized, err, f.want)
		}
	}
}
