package drivesvc_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
)

const chunk = googleapi.MinUploadChunkSize

// hooked is a bearer transport that runs hooks[n] before the n-th request
// carrying an upload_id (a resumable chunk), to aim faults at one chunk.
type hooked struct {
	bearer
	mu    sync.Mutex
	n     int
	hooks map[int]func()
}

func (h *hooked) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.Contains(r.URL.RawQuery, "upload_id=") {
		h.mu.Lock()
		h.n++
		hook := h.hooks[h.n]
		h.mu.Unlock()
		if hook != nil {
			hook()
		}
	}
	return h.bearer.RoundTrip(r)
}

func (e *env) hookedDrive(tok string, hooks map[int]func()) *drive.Service {
	e.t.Helper()
	svc, err := drive.NewService(context.Background(), option.WithEndpoint(e.srv.URL+"/drive/v3/"),
		option.WithHTTPClient(&http.Client{Transport: &hooked{bearer: bearer{base: e.hc.Transport, token: tok}, hooks: hooks}}))
	if err != nil {
		e.t.Fatal(err)
	}
	return svc
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestMultipartAndResumableCreates(t *testing.T) {
	for _, size := range []int{0, 1000, chunk - 1, chunk, 3*chunk + 100} {
		e := newEnv(t)
		c := e.driveClient(e.token(ann))
		content := pattern(size)
		got, err := c.Files.Create(&drive.File{Name: "upload.bin", MimeType: "application/x-thing"}).
			Media(bytes.NewReader(content), googleapi.ChunkSize(chunk)).
			Fields("id,name,mimeType,size,md5Checksum,sha256Checksum,parents").Do()
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		if got.Size != int64(size) || got.Sha256Checksum != sha(content) || got.MimeType != "application/x-thing" || len(got.Parents) != 1 || got.Parents[0] != e.drive.RootID(ann) {
			t.Errorf("%d bytes: created %+v", size, got)
		}
		rc, err := e.drive.Content(got.Id)
		if err != nil {
			t.Fatal(err)
		}
		stored, _ := io.ReadAll(rc)
		rc.Close()
		if !bytes.Equal(stored, content) {
			t.Errorf("%d bytes: stored content differs", size)
		}
		if st := e.emu.Stats(); st.UploadsStarted != 1 || st.UploadsFinished != 1 {
			t.Errorf("%d bytes: uploads started %d finished %d", size, st.UploadsStarted, st.UploadsFinished)
		}
	}
}

// TestResumableAtTheDiscoveryPath drives a resumable upload by hand at
// the path drive/v3's discovery document gives for the protocol, as
// clients built from it (not the Go one) use.
func TestResumableAtTheDiscoveryPath(t *testing.T) {
	e := newEnv(t)
	tok := e.token(ann)
	content := pattern(1000)
	code, h, body := e.do("POST", e.srv.URL+"/resumable/upload/drive/v3/files?uploadType=resumable&fields=id,name,size", tok,
		map[string]string{"Content-Type": "application/json; charset=UTF-8", "X-Upload-Content-Type": "application/pdf"},
		[]byte(`{"name":"r.pdf"}`))
	loc := h.Get("Location")
	if code != http.StatusOK || !strings.HasPrefix(loc, e.srv.URL+"/resumable/upload/drive/v3/files?") {
		t.Fatalf("open session: %d, Location %q, %s", code, loc, body)
	}
	code, _, body = e.do("PUT", loc, "", map[string]string{"Content-Range": "bytes 0-999/1000"}, content)
	var f drive.File
	if err := json.Unmarshal(body, &f); code != http.StatusOK || err != nil || f.Name != "r.pdf" || f.Size != 1000 {
		t.Fatalf("upload: %d %s", code, body)
	}
	if got, ok := e.drive.FileByID(f.Id); !ok || got.MimeType != "application/pdf" || got.SHA256 != sha(content) {
		t.Errorf("stored %+v", got)
	}
}

func TestResumableCreateSurvivesInjected503sAndCuts(t *testing.T) {
	synctest.Test(t, testResumableCreateSurvivesInjected503sAndCuts)
}

func testResumableCreateSurvivesInjected503sAndCuts(t *testing.T) {
	e := newBubbleEnv(t)
	path := "/upload/drive/v3/files"
	fault := func(f emulator.Fault) func() {
		return func() {
			if err := e.emu.InjectFault(f); err != nil {
				t.Error(err)
			}
		}
	}
	cut := int64(5000)
	hooks := map[int]func(){
		2: fault(emulator.Fault{PathPrefix: path, Status: 503, Times: 2}), // second chunk: two 503s
		5: fault(emulator.Fault{PathPrefix: path, CutRequestAfter: &cut}), // third chunk: connection cut mid-body
	}
	content := pattern(4*chunk + 17)
	c := e.hookedDrive(e.token(ann), hooks)
	got, err := c.Files.Create(&drive.File{Name: "big.bin"}).
		Media(bytes.NewReader(content), googleapi.ChunkSize(chunk), googleapi.ContentType("application/octet-stream")).
		Fields("id,size,sha256Checksum").Do()
	if err != nil {
		t.Fatalf("create with faults: %v", err)
	}
	if got.Size != int64(len(content)) || got.Sha256Checksum != sha(content) {
		t.Errorf("created %+v, want %d bytes %s", got, len(content), sha(content))
	}
	if n := len(e.drive.Files(ann)); n != 1 {
		t.Errorf("%d files after one upload", n)
	}
	if p := e.emu.Stats(); p.UploadsFinished != 1 {
		t.Errorf("uploads finished = %d", p.UploadsFinished)
	}
	if _, _, pending := e.do("GET", e.srv.URL+"/_emulator/faults", "", nil, nil); strings.TrimSpace(string(pending)) != "[]" {
		t.Errorf("faults left unused (the test did not exercise them): %s", pending)
	}
}

func TestCreateConvertsToNativeTypes(t *testing.T) {
	e := newEnv(t)
	tok := e.token(ann)
	c := e.driveClient(tok)
	create := func(name, target, contentType, content string) (*drive.File, error) {
		return c.Files.Create(&drive.File{Name: name, MimeType: target}).
			Media(strings.NewReader(content), googleapi.ContentType(contentType)).Fields("id,mimeType,name").Do()
	}
	sheet, err := create("costs.csv", drivesvc.MimeSheet, "text/csv", "item,amount\nrent,1200\n")
	if err != nil || sheet.MimeType != drivesvc.MimeSheet {
		t.Fatalf("csv → sheet: %+v %v", sheet, err)
	}
	ss, err := e.sheetsClient(tok).Spreadsheets.Values.Get(sheet.Id, "costs!A1:B2").Do()
	if err != nil || len(ss.Values) != 2 || ss.Values[1][1] != "1200" {
		t.Errorf("converted sheet values %+v %v", ss, err)
	}

	doc, err := create("notes", drivesvc.MimeDoc, "text/plain; charset=utf-8", "# not a heading\nsecond line\n")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Files.Export(doc.Id, "text/plain").Download()
	if err != nil {
		t.Fatal(err)
	}
	txt, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(txt) != "\ufeff# not a heading\r\nsecond line\r\n" {
		t.Errorf("text/plain → Doc → txt = %q", txt)
	}

	html, err := create("page", drivesvc.MimeDoc, "text/html", "<h2>Title</h2><p>Body &lt;3</p>")
	if err != nil {
		t.Fatal(err)
	}
	res, err = c.Files.Export(html.Id, "text/markdown").Download()
	if err != nil {
		t.Fatal(err)
	}
	md, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(md) != "## Title\n\nBody \\<3\n\n" {
		t.Errorf("text/html → Doc → md = %q", md)
	}

	deck, err := create("deck", drivesvc.MimeSlides, "text/plain", "Welcome\nagenda\n---\nNext\nsteps")
	if err != nil {
		t.Fatal(err)
	}
	res, err = c.Files.Export(deck.Id, "text/plain").Download()
	if err != nil {
		t.Fatal(err)
	}
	st, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(st) != "Welcome\nagenda\n\nNext\nsteps\n" {
		t.Errorf("text/plain → Slides → txt = %q", st)
	}

	_, err = create("logo", drivesvc.MimeDoc, "image/png", "\x89PNG")
	wantReason(t, err, 400, "conversionUnsupportedConversionPath")
	_, err = create("x", drivesvc.MimeFolder, "text/plain", "x")
	wantReason(t, err, 400, "badRequest")
}

func TestMetadataCreateUpdateAndDelete(t *testing.T) {
	e := newEnv(t)
	c := e.driveClient(e.token(ann))
	folder, err := c.Files.Create(&drive.File{Name: "Reports", MimeType: drivesvc.MimeFolder}).Fields("id,mimeType,capabilities(canAddChildren)").Do()
	if err != nil || folder.MimeType != drivesvc.MimeFolder || !folder.Capabilities.CanAddChildren {
		t.Fatalf("folder: %+v %v", folder, err)
	}
	inside, err := c.Files.Create(&drive.File{Name: "q3.txt", Parents: []string{folder.Id}}).
		Media(strings.NewReader("numbers")).Fields("id,parents,mimeType,webViewLink").Do()
	if err != nil || inside.Parents[0] != folder.Id || inside.MimeType != "text/plain" {
		t.Fatalf("file in folder: %+v %v", inside, err)
	}
	if !strings.HasPrefix(inside.WebViewLink, e.srv.URL+"/file/d/"+inside.Id+"/view") {
		t.Errorf("webViewLink %q", inside.WebViewLink)
	}
	if code, _, _ := e.do("GET", inside.WebViewLink, "", nil, nil); code != 200 {
		t.Errorf("webViewLink page: %d", code)
	}
	sc, err := c.Files.Create(&drive.File{Name: "link", MimeType: drivesvc.MimeShortcut,
		ShortcutDetails: &drive.FileShortcutDetails{TargetId: inside.Id}}).Fields("shortcutDetails").Do()
	if err != nil || sc.ShortcutDetails.TargetMimeType != "text/plain" {
		t.Errorf("shortcut: %+v %v", sc, err)
	}
	_, err = c.Files.Create(&drive.File{Name: "orphan", Parents: []string{"1NoSuchFolder00000000"}}).Do()
	wantReason(t, err, 404, "notFound")
	_, err = c.Files.Create(&drive.File{Name: "two", Parents: []string{folder.Id, "root"}}).Do()
	wantReason(t, err, 400, "badRequest")

	// Bob can read a shared file but not change it.
	shared := e.put(ann, drivesvc.FileSpec{Name: "shared.txt", Content: []byte("s"), SharedWith: []string{bob}})
	_, err = e.driveClient(e.token(bob)).Files.Update(shared.ID, &drive.File{Name: "mine now"}).Do()
	wantReason(t, err, 403, "insufficientFilePermissions")

	upd, err := c.Files.Update(inside.Id, &drive.File{Name: "q3-final.txt", Trashed: true}).Fields("name,trashed,version").Do()
	if err != nil || upd.Name != "q3-final.txt" || !upd.Trashed || upd.Version != 2 {
		t.Errorf("update: %+v %v", upd, err)
	}
	if err := c.Files.Delete(folder.Id).Do(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{folder.Id, inside.Id} {
		_, err = c.Files.Get(id).Do()
		wantReason(t, err, 404, "notFound")
	}
}

func TestCreateInSharedDriveNeedsSupportsAllDrives(t *testing.T) {
	e := newEnv(t)
	d, err := e.drive.PutSharedDrive("Team", ann)
	if err != nil {
		t.Fatal(err)
	}
	c := e.driveClient(e.token(ann))
	_, err = c.Files.Create(&drive.File{Name: "x.txt", Parents: []string{d.ID}}).Media(strings.NewReader("x")).Do()
	wantReason(t, err, 404, "notFound")
	f, err := c.Files.Create(&drive.File{Name: "x.txt", Parents: []string{d.ID}}).SupportsAllDrives(true).
		Media(strings.NewReader("x")).Fields("id,driveId").Do()
	if err != nil || f.DriveId != d.ID {
		t.Errorf("create in shared drive: %+v %v", f, err)
	}
}

func TestConcurrentUse(t *testing.T) {
	e := newEnv(t)
	sheet := threeTabSheet(t, e)
	doc := e.put(ann, drivesvc.FileSpec{Name: "Doc", Kind: drivesvc.KindDoc, DocText: "# Hello\nworld"})
	tok := e.token(ann)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := e.driveClient(tok)
			sc := e.sheetsClient(tok)
			for j := range 5 {
				if _, err := c.Files.Create(&drive.File{Name: "f.txt"}).Media(strings.NewReader(strings.Repeat("x", i*j))).Do(); err != nil {
					errs <- err
				}
				if _, err := c.Files.List().Q("name contains 'f'").Fields("files(id,size)").Do(); err != nil {
					errs <- err
				}
				if res, err := c.Files.Export(doc.ID, "application/pdf").Download(); err != nil {
					errs <- err
				} else {
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
				if _, err := sc.Spreadsheets.Values.Update(sheet.ID, "Summary!C1", &sheets.ValueRange{Values: [][]any{{j}}}).ValueInputOption("RAW").Do(); err != nil {
					errs <- err
				}
				if _, err := c.Files.Update(doc.ID, &drive.File{Name: "Doc"}).Do(); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(e.drive.Files(ann)); n != 2+40 {
		t.Errorf("%d files after 40 concurrent uploads, want 42", n)
	}
}
