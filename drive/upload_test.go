package drive_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
)

const uploader = "uploader@example.com"

// newUploadEnv is an emulated Drive and a client of it with the drive.file
// scope only, as the upload endpoint runs.
func newUploadEnv(t *testing.T) *env {
	t.Helper()
	return newEnvAs(t, uploader, emutest.ScopeDriveFile)
}

// pattern returns n deterministic bytes that are not all alike.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func (e *env) binaryFiles() int {
	n := 0
	for _, f := range e.Emu.Drive().Files(uploader) {
		if f.MimeType != drive.MimeFolder {
			n++
		}
	}
	return n
}

func TestUploadStoresTheBytes(t *testing.T) {
	e := newUploadEnv(t)
	folder, err := e.dc.FolderInRoot(context.Background(), "drivemail uploads")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		size int
		mime string
	}{
		{"empty.txt", 0, "text/plain"},
		{"small.pdf", 1000, "application/pdf"},
		{"one-chunk.bin", drive.UploadChunkSize, "application/octet-stream"},  // resumable, final chunk empty
		{"chunk-and-a-bit.zip", drive.UploadChunkSize + 1, "application/zip"}, // resumable, two chunks
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := pattern(tc.size)
			f, err := e.dc.Upload(context.Background(), drive.NewFile{Name: tc.name, MimeType: tc.mime, ParentID: folder}, bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if f.Name != tc.name || f.MimeType != tc.mime || f.Size != int64(tc.size) || f.SHA256 != sum(data) {
				t.Errorf("file = %+v, want %s %s %d bytes sha256 %s", f, tc.name, tc.mime, tc.size, sum(data))
			}
			if got := e.Content(f.ID); !bytes.Equal(got, data) {
				t.Errorf("stored %d bytes that differ from the %d sent", len(got), len(data))
			}
			ef, _ := e.Emu.Drive().FileByID(f.ID)
			if len(ef.Parents) != 1 || ef.Parents[0] != folder {
				t.Errorf("parents = %v, want [%s]", ef.Parents, folder)
			}
		})
	}
}

// failingReader yields n good bytes, then fails instead of ending.
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

func TestUploadAbandonedWhenTheReaderFails(t *testing.T) {
	errDigest := errors.New("digest mismatch")
	for _, size := range []int{100, drive.UploadChunkSize, 2*drive.UploadChunkSize + 5} {
		e := newUploadEnv(t)
		r := &failingReader{r: bytes.NewReader(pattern(size)), err: errDigest}
		_, err := e.dc.Upload(context.Background(), drive.NewFile{Name: "x.bin"}, r)
		if !errors.Is(err, errDigest) {
			t.Errorf("%d bytes: err = %v, want the reader's error in the chain", size, err)
		}
		if n := e.binaryFiles(); n != 0 {
			t.Errorf("%d bytes: %d files created after the reader failed", size, n)
		}
		if st := e.Emu.Stats(); st.UploadsFinished != 0 {
			t.Errorf("%d bytes: %d uploads finished", size, st.UploadsFinished)
		}
	}
}

func TestUploadWithReservedID(t *testing.T) {
	e := newUploadEnv(t)
	id, err := e.dc.GenerateID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f, err := e.dc.Upload(context.Background(), drive.NewFile{ID: id, Name: "a.txt"}, strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if f.ID != id {
		t.Errorf("id = %s, want the reserved %s", f.ID, id)
	}
}

func TestUploadRefusesBadInput(t *testing.T) {
	e := newUploadEnv(t)
	cases := map[string]drive.NewFile{
		"bad parent": {Name: "a.txt", ParentID: "../etc"},
		"bad id":     {Name: "a.txt", ID: "a b"},
		"no name":    {},
	}
	for name, nf := range cases {
		if _, err := e.dc.Upload(context.Background(), nf, strings.NewReader("x")); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := e.dc.DeleteFile(context.Background(), "a/b"); !errors.Is(err, drive.ErrBadID) {
		t.Errorf("DeleteFile(bad id) = %v", err)
	}
	if st := e.Emu.Stats(); st.UploadsStarted != 0 {
		t.Errorf("%d uploads started for refused input", st.UploadsStarted)
	}
}

func TestFolderInRootIsCreatedOnce(t *testing.T) {
	e := newUploadEnv(t)
	ctx := context.Background()
	first, err := e.dc.FolderInRoot(ctx, "drivemail uploads")
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.dc.FolderInRoot(ctx, "drivemail uploads")
	if err != nil || again != first {
		t.Fatalf("second call = %q, %v; want %q", again, err, first)
	}
	// A trashed folder does not count, and one of another name is another.
	other, err := e.dc.FolderInRoot(ctx, "it's other")
	if err != nil || other == first {
		t.Fatalf("other folder = %q, %v", other, err)
	}
	f, _ := e.Emu.Drive().FileByID(first)
	if f.Name != "drivemail uploads" || f.MimeType != drive.MimeFolder || len(f.Parents) != 1 || f.Parents[0] != e.Emu.Drive().RootID(uploader) {
		t.Errorf("folder = %+v", f)
	}
}

// TestFolderInRootRaceLosesNoFile: callers that race to create the folder
// and each upload a file into the one they got keep every file, and once
// the race is over every caller settles on the oldest folder.
func TestFolderInRootRaceLosesNoFile(t *testing.T) {
	e := newUploadEnv(t)
	ctx := context.Background()
	const rounds, callers = 15, 6
	for round := range rounds {
		name := fmt.Sprintf("drivemail uploads %d", round)
		folders := make([]string, callers)
		files := make([]drive.File, callers)
		errs := make([]error, callers)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if folders[i], errs[i] = e.dc.FolderInRoot(ctx, name); errs[i] != nil {
					return
				}
				files[i], errs[i] = e.dc.Upload(ctx, drive.NewFile{Name: fmt.Sprintf("f%d.txt", i), ParentID: folders[i]}, strings.NewReader("x"))
			}()
		}
		wg.Wait()
		for i := range callers {
			if errs[i] != nil {
				t.Fatalf("round %d, caller %d: %v", round, i, errs[i])
			}
			f, ok := e.Emu.Drive().FileByID(files[i].ID)
			if !ok || f.Trashed {
				t.Fatalf("round %d: caller %d's file is gone (its folder %s was deleted under it)", round, i, folders[i])
			}
			if len(f.Parents) != 1 || f.Parents[0] != folders[i] {
				t.Fatalf("round %d: caller %d's file is in %v, want [%s]", round, i, f.Parents, folders[i])
			}
		}
		var live []drivesvc.File
		for _, f := range e.Emu.Drive().Files(uploader) {
			if f.Name == name && f.MimeType == drive.MimeFolder && !f.Trashed {
				live = append(live, f)
			}
		}
		oldest := live[0]
		for _, f := range live[1:] {
			if f.Created.Before(oldest.Created) || f.Created.Equal(oldest.Created) && f.ID < oldest.ID {
				oldest = f
			}
		}
		for range 2 {
			got, err := e.dc.FolderInRoot(ctx, name)
			if err != nil || got != oldest.ID {
				t.Fatalf("round %d: after the race FolderInRoot = %q, %v; want the oldest of %d, %s", round, got, err, len(live), oldest.ID)
			}
		}
	}
}

// TestFolderInRootPassesOverFoldersTheAppCannotWrite: with drivemail's
// real scopes (drive.file beside drive.readonly) every folder of the
// name is visible, but drive.file writes only into the app's own: a
// hand-made folder or another app's, even older, is passed over, and the
// upload into the chosen one works.
func TestFolderInRootPassesOverFoldersTheAppCannotWrite(t *testing.T) {
	e := newEnvAs(t, uploader, emutest.ScopeDriveFile, emutest.ScopeDriveReadonly)
	ctx := context.Background()
	const name = "drivemail uploads"
	handMade := e.Put(uploader, drivesvc.FileSpec{Name: name, Kind: drivesvc.KindFolder})
	otherApp := e.Put(uploader, drivesvc.FileSpec{Name: name, Kind: drivesvc.KindFolder, ClientID: "another-app"})
	got, err := e.dc.FolderInRoot(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if got == handMade.ID || got == otherApp.ID {
		t.Fatalf("FolderInRoot chose a folder drivemail cannot write to (%s)", got)
	}
	if _, err := e.dc.Upload(ctx, drive.NewFile{Name: "a.txt", MimeType: "text/plain", ParentID: got}, strings.NewReader("hello")); err != nil {
		t.Fatalf("upload into the chosen folder: %v", err)
	}
	if again, err := e.dc.FolderInRoot(ctx, name); err != nil || again != got {
		t.Errorf("second call: %q, %v; want %q again", again, err, got)
	}
}

// TestCheckUploadFolder: a folder_id is checked before any upload: only
// a folder drivemail created (or was opened with) and the user may add
// to passes; each other case has its own error.
func TestCheckUploadFolder(t *testing.T) {
	e := newEnvAs(t, uploader, emutest.ScopeDriveFile, emutest.ScopeDriveReadonly)
	ctx := context.Background()
	mine, err := e.dc.FolderInRoot(ctx, "drivemail uploads")
	if err != nil {
		t.Fatal(err)
	}
	opened := e.Put(uploader, drivesvc.FileSpec{Name: "Picked", Kind: drivesvc.KindFolder, OpenedWith: []string{"emulator-test"}})
	handMade := e.Put(uploader, drivesvc.FileSpec{Name: "Reports", Kind: drivesvc.KindFolder})
	file := e.Put(uploader, drivesvc.FileSpec{Name: "a.txt", Content: []byte("a"), ClientID: "emulator-test"})
	trashed := e.Put(uploader, drivesvc.FileSpec{Name: "Old", Kind: drivesvc.KindFolder, ClientID: "emulator-test", Trashed: true})
	theirs := e.Put(other, drivesvc.FileSpec{Name: "Shared", Kind: drivesvc.KindFolder, SharedWith: []string{uploader},
		OpenedWith: []string{"emulator-test"}})
	for _, tt := range []struct {
		name, id string
		want     error
	}{
		{"drivemail's folder", mine, nil},
		{"a folder opened with drivemail", opened.ID, nil},
		{"a hand-made folder", handMade.ID, drive.ErrAppNotAuthorized},
		{"a file", file.ID, drive.ErrNotFolder},
		{"a trashed folder", trashed.ID, drive.ErrNotFound},
		{"a folder shared read-only", theirs.ID, drive.ErrFilePermission},
		{"no such folder", "1NoSuchFolder000000000000000000000", drive.ErrNotFound},
		{"not an id", "../x", drive.ErrBadID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := e.dc.CheckUploadFolder(ctx, tt.id)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("CheckUploadFolder = %v, want %v", err, tt.want)
			}
		})
	}
}
