package drivesvc_test

import (
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
)

// blobFiles lists what the emulator keeps on disk in dir.
func blobFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestDeleteReleasesContent(t *testing.T) {
	dir := t.TempDir()
	e := newEnvWith(t, emulator.Config{DataDir: dir})
	c := e.driveClient(e.token(ann))
	folder, err := c.Files.Create(&drive.File{Name: "Reports", MimeType: drivesvc.MimeFolder}).Do()
	if err != nil {
		t.Fatal(err)
	}
	upload := func(name, parent string, size int) *drive.File {
		t.Helper()
		f := &drive.File{Name: name}
		if parent != "" {
			f.Parents = []string{parent}
		}
		got, err := c.Files.Create(f).Media(strings.NewReader(strings.Repeat("x", size)), googleapi.ChunkSize(chunk)).Do()
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	big := upload("big.bin", "", 2*chunk+10) // resumable
	small := upload("small.txt", "", 10)     // multipart
	nested := upload("nested.txt", folder.Id, 20)
	doc := e.put(ann, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, Parents: []string{folder.Id}, DocText: "# Plan\nship it"})
	if n := len(blobFiles(t, dir)); n != 4 {
		t.Fatalf("%d blobs on disk for three uploads and a Doc, want 4", n)
	}

	// A download begun before the delete still gets every byte.
	res, err := c.Files.Get(big.Id).Download()
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := c.Files.Delete(big.Id).Do(); err != nil {
		t.Fatal(err)
	}
	if n := len(blobFiles(t, dir)); n != 3 {
		t.Errorf("%d blobs on disk after deleting one file of four, want 3", n)
	}
	if n, err := io.Copy(io.Discard, res.Body); err != nil || n != 2*chunk+10 {
		t.Errorf("download begun before the delete read %d bytes, err %v", n, err)
	}

	// A folder takes its files' and its Doc's content with it.
	if err := c.Files.Delete(folder.Id).Do(); err != nil {
		t.Fatal(err)
	}
	if left := blobFiles(t, dir); len(left) != 1 {
		t.Errorf("blobs on disk after deleting the folder: %v, want only small.txt's", left)
	}
	for _, id := range []string{nested.Id, doc.ID} {
		if _, err := c.Files.Get(id).Do(); err == nil {
			t.Errorf("%s survives its folder's deletion", id)
		}
	}
	if err := c.Files.Delete(small.Id).Do(); err != nil {
		t.Fatal(err)
	}
	if left := blobFiles(t, dir); len(left) != 0 {
		t.Errorf("blobs on disk with no file left: %v", left)
	}
	// Trash keeps the content: a trashed file can be restored.
	kept := upload("kept.txt", "", 5)
	if _, err := c.Files.Update(kept.Id, &drive.File{Trashed: true}).Do(); err != nil {
		t.Fatal(err)
	}
	if n := len(blobFiles(t, dir)); n != 1 {
		t.Errorf("%d blobs on disk for one trashed file, want 1", n)
	}
}

func TestRefusedUploadLeavesNoContent(t *testing.T) {
	dir := t.TempDir()
	e := newEnvWith(t, emulator.Config{DataDir: dir})
	c := e.driveClient(e.token(ann))
	for _, tc := range []struct {
		name string
		meta *drive.File
		size int
	}{
		{"two parents, multipart", &drive.File{Name: "a", Parents: []string{"root", "root"}}, 10},
		{"two parents, resumable", &drive.File{Name: "a", Parents: []string{"root", "root"}}, chunk + 1},
		{"missing parent", &drive.File{Name: "a", Parents: []string{"1NoSuchFolder00000000"}}, 10},
		{"content for a folder", &drive.File{Name: "a", MimeType: drivesvc.MimeFolder}, 10},
		{"unsupported conversion", &drive.File{Name: "a", MimeType: drivesvc.MimeSheet}, 10},
	} {
		_, err := c.Files.Create(tc.meta).Media(strings.NewReader(strings.Repeat("x", tc.size)), googleapi.ChunkSize(chunk)).Do()
		if err == nil {
			t.Errorf("%s: created", tc.name)
		}
		if left := blobFiles(t, dir); len(left) != 0 {
			t.Errorf("%s: content left on disk: %v", tc.name, left)
		}
	}
	// A converted upload keeps the Doc's body, not the uploaded text.
	doc, err := c.Files.Create(&drive.File{Name: "notes", MimeType: drivesvc.MimeDoc}).
		Media(strings.NewReader("one\ntwo"), googleapi.ContentType("text/plain")).Do()
	if err != nil {
		t.Fatal(err)
	}
	if left := blobFiles(t, dir); len(left) != 1 {
		t.Errorf("blobs after one converted upload: %v, want the Doc's body only", left)
	}
	if err := c.Files.Delete(doc.Id).Do(); err != nil {
		t.Fatal(err)
	}
	if left := blobFiles(t, dir); !slices.Equal(left, nil) {
		t.Errorf("blobs after deleting the Doc: %v", left)
	}
}
