package upload_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/upload"
)

// opener gives data as a source, failing with fail after cutAt bytes
// when fail is set; opened counts the opens.
type opener struct {
	data   []byte
	cutAt  int
	fail   error
	opened int
}

func (o *opener) open(context.Context) (io.ReadCloser, error) {
	o.opened++
	if o.fail != nil {
		return io.NopCloser(io.MultiReader(bytes.NewReader(o.data[:o.cutAt]), errReader{o.fail})), nil
	}
	return io.NopCloser(bytes.NewReader(o.data)), nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestSaveStreamsIntoTheUploadsFolder(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	data := make([]byte, 5<<20+3) // past one Drive chunk: a resumable upload
	rand.Read(data)
	src := &opener{data: data}
	res, err := e.svc.Save(context.Background(), u.acct, upload.SaveFile{Name: "invoice.pdf", Size: int64(len(data))}, src.open)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if res.Size != int64(len(data)) || res.SHA256 != hex.EncodeToString(sum[:]) || res.MimeType != "application/pdf" ||
		!strings.HasPrefix(res.Handle, "mcp-file://") || !strings.HasSuffix(res.Handle, "/"+res.FileID) {
		t.Errorf("result %+v", res)
	}
	rc, err := e.emu.Drive().Content(res.FileID)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, data) {
		t.Error("Drive holds other bytes")
	}
	f, _ := e.emu.Drive().FileByID(res.FileID)
	folder, _ := e.emu.Drive().FileByID(f.Parents[0])
	if folder.Name != upload.DefaultFolderName {
		t.Errorf("saved into %q, want the uploads folder", folder.Name)
	}
}

// TestSaveSavesNothingHalf: a source that fails part-way, or yields
// fewer or more bytes than it announced, leaves no file in Drive, and
// the source's own error comes back.
func TestSaveSavesNothingHalf(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	data := make([]byte, 5<<20)
	rand.Read(data)
	boom := errors.New("gmail stopped")
	for _, tt := range []struct {
		name string
		src  *opener
		size int64
		want error
	}{
		{"fails part-way", &opener{data: data, cutAt: 4 << 20, fail: boom}, int64(len(data)), boom},
		{"ends short", &opener{data: data}, int64(len(data)) + 1, nil},
		{"runs long", &opener{data: data}, int64(len(data)) - 1, nil},
	} {
		before := e.emu.Stats()
		_, err := e.svc.Save(context.Background(), u.acct, upload.SaveFile{Name: "x.bin", Size: tt.size}, tt.src.open)
		if err == nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%s: err %v, want %v", tt.name, err, tt.want)
		}
		if st := e.emu.Stats(); st.UploadsFinished != before.UploadsFinished {
			t.Errorf("%s: Drive finished an upload", tt.name)
		}
	}
	for _, f := range e.emu.Drive().Files(u.email) {
		if f.Name == "x.bin" {
			t.Errorf("a file x.bin (%d bytes) stands in Drive", f.Size)
		}
	}
}

// TestSaveChecksBeforeItOpens: a folder drivemail may not write to, a
// size over the limit, a Google type, or a user without drive.file are
// refused before the source is opened.
func TestSaveChecksBeforeItOpens(t *testing.T) {
	e := newEnv(t, func(c *upload.Config) { c.MaxBytes = 1000 })
	u := e.signIn("ann@example.com")
	handMade, err := e.emu.Drive().PutFile(u.email, drivesvc.FileSpec{Name: "Reports", Kind: drivesvc.KindFolder})
	if err != nil {
		t.Fatal(err)
	}
	src := &opener{data: []byte("x")}
	for _, tt := range []struct {
		name string
		f    upload.SaveFile
		kind string
	}{
		{"foreign folder", upload.SaveFile{Name: "a.txt", Size: 1, FolderID: handMade.ID}, "folder_not_writable"},
		{"bad folder id", upload.SaveFile{Name: "a.txt", Size: 1, FolderID: "a/b"}, "bad_folder_id"},
		{"one byte past the limit", upload.SaveFile{Name: "a.txt", Size: 1001}, "too_large"},
		{"a Google type", upload.SaveFile{Name: "a", MimeType: "application/vnd.google-apps.document", Size: 1}, "google_type"},
		{"no name", upload.SaveFile{Name: " ", Size: 1}, "no_name"},
	} {
		_, err := e.svc.Save(context.Background(), u.acct, tt.f, src.open)
		var ue *upload.Error
		if !errors.As(err, &ue) || string(ue.Kind) != tt.kind {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.kind)
		}
	}
	if src.opened != 0 {
		t.Errorf("the source was opened %d times", src.opened)
	}
	if _, err := e.svc.Save(context.Background(), u.acct, upload.SaveFile{Name: "a.txt", Size: 1000}, (&opener{data: make([]byte, 1000)}).open); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	_, err = e.svc.Save(context.Background(), e.account(u.id, u.email, "openid", "email"), upload.SaveFile{Name: "a.txt", Size: 1}, src.open)
	var ue *upload.Error
	if !errors.As(err, &ue) || ue.Status != http.StatusForbidden || src.opened != 0 {
		t.Errorf("a user without drive.file: %v, opened %d", err, src.opened)
	}
}
