package upload_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/upload"
)

// TestUploadsGoOnlyWhereDriveFileMayWrite: a "drivemail uploads" folder
// the user made by hand (or another app made), older than any of
// drivemail's, is passed over: the upload goes into a folder drivemail
// created, where Google lets its drive.file permission write.
func TestUploadsGoOnlyWhereDriveFileMayWrite(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	handMade, err := e.emu.Drive().PutFile(u.email, drivesvc.FileSpec{Name: upload.DefaultFolderName, Kind: drivesvc.KindFolder})
	if err != nil {
		t.Fatal(err)
	}
	a := e.postForm("/upload", u.token, part{field: "file", filename: "a.txt", data: []byte("a")})
	if a.status != http.StatusCreated {
		t.Fatalf("upload: %d %s", a.status, a.raw)
	}
	f, _ := e.emu.Drive().FileByID(a.result.FileID)
	folder, _ := e.emu.Drive().FileByID(f.Parents[0])
	if folder.ID == handMade.ID || folder.Name != upload.DefaultFolderName {
		t.Errorf("the file went into %s (%q); want a drivemail-made %q, not the hand-made one", folder.ID, folder.Name, upload.DefaultFolderName)
	}
}

// TestForeignFolderIDIsRefusedUpFront: a folder_id drivemail may not
// write to (made by hand, a file, shared read-only) is refused by
// request_upload before any ticket, and by /upload before any byte goes
// to Drive, each with a sentence that says why and what works.
func TestForeignFolderIDIsRefusedUpFront(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	d := e.emu.Drive()
	put := func(owner string, spec drivesvc.FileSpec) string {
		f, err := d.PutFile(owner, spec)
		if err != nil {
			t.Fatal(err)
		}
		return f.ID
	}
	tests := []struct {
		name, folder string
		status       int
		kind         string
		want         []string
	}{
		{"a hand-made folder", put(u.email, drivesvc.FileSpec{Name: "Reports", Kind: drivesvc.KindFolder}),
			http.StatusForbidden, "folder_not_writable", []string{"only in folders it created", "Leave folder_id out"}},
		{"a file", put(u.email, drivesvc.FileSpec{Name: "a.txt", Content: []byte("a"), ClientID: "drivemail-test"}),
			http.StatusBadRequest, "not_a_folder", []string{"names a file, not a folder"}},
		{"a folder shared read-only", put("bob@example.com", drivesvc.FileSpec{Name: "Bob's", Kind: drivesvc.KindFolder,
			SharedWith: []string{u.email}, OpenedWith: []string{"drivemail-test"}}),
			http.StatusForbidden, "folder_read_only", []string{"read-only"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.svc.RequestUpload(context.Background(), u.acct, upload.Request{Name: "a.txt", FolderID: tt.folder})
			var ue *upload.Error
			if !errors.As(err, &ue) || ue.Status != tt.status {
				t.Fatalf("request_upload: %v; want a %d refusal", err, tt.status)
			}
			for _, w := range tt.want {
				if !strings.Contains(ue.Text, w) {
					t.Errorf("request_upload: %q lacks %q", ue.Text, w)
				}
			}
			before := e.emu.Stats()
			a := e.postForm("/upload?folder_id="+tt.folder, u.token, part{field: "file", filename: "a.txt", data: []byte("a")})
			if a.status != tt.status || !strings.Contains(a.errMsg, tt.want[0]) {
				t.Errorf("/upload: %d %s; want %d saying %q", a.status, a.raw, tt.status, tt.want[0])
			}
			if st := e.emu.Stats(); st.UploadsStarted != before.UploadsStarted {
				t.Errorf("an upload to Drive started (%d → %d)", before.UploadsStarted, st.UploadsStarted)
			}
			if !strings.Contains(e.logs.String(), "refusal="+tt.kind) {
				t.Errorf("log lacks refusal=%s", tt.kind)
			}
		})
	}
	// drivemail's own folder works.
	own := put(u.email, drivesvc.FileSpec{Name: "Mine", Kind: drivesvc.KindFolder, ClientID: "drivemail-test"})
	if _, err := e.svc.RequestUpload(context.Background(), u.acct, upload.Request{Name: "a.txt", FolderID: own}); err != nil {
		t.Errorf("request_upload into drivemail's folder: %v", err)
	}
	if a := e.postForm("/upload?folder_id="+own, u.token, part{field: "file", filename: "a.txt", data: []byte("a")}); a.status != http.StatusCreated {
		t.Errorf("/upload into drivemail's folder: %d %s", a.status, a.raw)
	}
}

// TestUploadWithTheDriveAPIDisabled: the user is told the server's
// operator must enable the Drive API; the operator gets an error line.
func TestUploadWithTheDriveAPIDisabled(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	if err := e.emu.SetAPIEnabled("drive", false); err != nil {
		t.Fatal(err)
	}
	a := e.postForm("/upload", u.token, part{field: "file", filename: "a.txt", data: []byte("a")})
	if a.status != http.StatusServiceUnavailable || !strings.Contains(a.errMsg, "has not enabled the Google Drive API") ||
		strings.Contains(a.errMsg, "Reconnect") {
		t.Errorf("/upload: %d %s", a.status, a.raw)
	}
	if l := e.logs.String(); !strings.Contains(l, "api=drive.googleapis.com") || !strings.Contains(l, "level=ERROR") {
		t.Errorf("log lacks the operator's error line: %s", l)
	}
}
