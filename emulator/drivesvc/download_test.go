package drivesvc_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/drive/v3"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
)

// operationResponse is a finished files.download operation's response.
type operationResponse struct {
	Type                   string `json:"@type"`
	DownloadURI            string `json:"downloadUri"`
	PartialDownloadAllowed bool   `json:"partialDownloadAllowed"`
}

// finish polls op with operations.get until it is done, at most tries
// times, and returns its response.
func finish(t *testing.T, c *drive.Service, op *drive.Operation, tries int) (*drive.Operation, operationResponse) {
	t.Helper()
	for i := 0; !op.Done; i++ {
		if i == tries {
			t.Fatalf("operation %s not done after %d polls", op.Name, tries)
		}
		var err error
		if op, err = c.Operations.Get(op.Name).Do(); err != nil {
			t.Fatalf("operations.get: %v", err)
		}
	}
	var res operationResponse
	if op.Error == nil {
		if err := json.Unmarshal(op.Response, &res); err != nil {
			t.Fatalf("operation response %s: %v", op.Response, err)
		}
	}
	return op, res
}

// TestFilesDownloadOperation: files.download answers a pending Operation
// (Drive's long-running operations guide); operations.get is pending,
// then done with a DownloadFileResponse whose downloadUri, on the content
// host, serves the export (past files.export's cap) to the same user.
func TestFilesDownloadOperation(t *testing.T) {
	e := newEnv(t)
	tok := e.token(ann)
	c := e.driveClient(tok)
	doc := e.put(ann, drivesvc.FileSpec{Name: "Big doc", Kind: drivesvc.KindDoc, DocFillBytes: drivesvc.ExportLimit + 1})
	e.drive.SetDownloadPolls(1)

	op, err := c.Files.Download(doc.ID).MimeType("text/plain").Do()
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	_ = json.Unmarshal(op.Metadata, &meta)
	if op.Done || op.Name == "" || len(op.Response) != 0 || meta["@type"] != "type.googleapis.com/google.apps.drive.v3.DownloadFileMetadata" {
		t.Fatalf("first answer: %+v, metadata %v; want a pending operation with a name", op, meta)
	}
	again, err := c.Operations.Get(op.Name).Do()
	if err != nil || again.Done {
		t.Fatalf("first poll: %+v, %v; want still pending (SetDownloadPolls(1))", again, err)
	}
	op, res := finish(t, c, again, 3)
	if res.Type != "type.googleapis.com/google.apps.drive.v3.DownloadFileResponse" || res.PartialDownloadAllowed {
		t.Errorf("response %+v: want a DownloadFileResponse without partial downloads", res)
	}
	u, err := url.Parse(res.DownloadURI)
	api, _ := url.Parse(e.srv.URL)
	if err != nil || u.Hostname() != "localhost" || u.Port() != api.Port() {
		t.Fatalf("downloadUri %q: want the content host localhost:%s beside the API's %s", res.DownloadURI, api.Port(), api.Host)
	}

	e.emu.ResetStats()
	code, hdr, body := e.do("GET", res.DownloadURI, tok, nil, nil)
	if code != 200 || hdr.Get("Content-Type") != "text/plain" || len(body) <= drivesvc.ExportLimit || !bytes.HasPrefix(body, []byte("\ufeff")) {
		t.Fatalf("downloadUri: %d %s, %d bytes; want the whole text export", code, hdr.Get("Content-Type"), len(body))
	}
	if st := e.emu.Stats(); st.Downloads != 1 || st.Files[doc.ID].BytesServed != int64(len(body)) {
		t.Errorf("stats: %+v, want one download of %d bytes", st, len(body))
	}
	// The URI is the owner's: no token is a 401, another user a 404, and
	// the API host does not serve it.
	if code, _, _ := e.do("GET", res.DownloadURI, "", nil, nil); code != 401 {
		t.Errorf("downloadUri without a token: %d, want 401", code)
	}
	if code, _, _ := e.do("GET", res.DownloadURI, e.token(bob), nil, nil); code != 404 {
		t.Errorf("downloadUri as another user: %d, want 404", code)
	}
	onAPI := *u
	onAPI.Host = api.Host
	if code, _, _ := e.do("GET", onAPI.String(), tok, nil, nil); code != 404 {
		t.Errorf("downloadUri on the API host: %d, want 404", code)
	}
	if _, err := e.driveClient(e.token(bob)).Operations.Get(op.Name).Do(); err == nil {
		t.Error("another user polled ann's operation")
	} else {
		wantReason(t, err, 404, "notFound")
	}
}

// TestFilesDownloadBinaryAndRefusals: a binary file downloads whole with
// partial downloads allowed (Range works); mimeType on a binary file, a
// revisionId, a format the file lacks and a locked file are refused as
// files.export refuses them.
func TestFilesDownloadBinaryAndRefusals(t *testing.T) {
	e := newEnv(t)
	tok := e.token(ann)
	c := e.driveClient(tok)
	content := bytes.Repeat([]byte("0123456789"), 1000)
	bin := e.put(ann, drivesvc.FileSpec{Name: "data.bin", Content: content})
	op, err := c.Files.Download(bin.ID).Do()
	if err != nil {
		t.Fatal(err)
	}
	_, res := finish(t, c, op, 3)
	if !res.PartialDownloadAllowed {
		t.Errorf("binary file: %+v, want partial downloads allowed", res)
	}
	if code, _, body := e.do("GET", res.DownloadURI, tok, nil, nil); code != 200 || !bytes.Equal(body, content) {
		t.Errorf("binary download: %d, %d bytes", code, len(body))
	}
	if code, _, body := e.do("GET", res.DownloadURI, tok, map[string]string{"Range": "bytes=10-19"}, nil); code != 206 || string(body) != "0123456789" {
		t.Errorf("range of the download: %d %q", code, body)
	}

	doc := e.put(ann, drivesvc.FileSpec{Name: "Doc", Kind: drivesvc.KindDoc, DocText: "hi"})
	locked := e.put(ann, drivesvc.FileSpec{Name: "Locked", Kind: drivesvc.KindDoc, DocText: "x", NoDownload: true})
	folder := e.put(ann, drivesvc.FileSpec{Name: "Folder", Kind: drivesvc.KindFolder})
	for _, tt := range []struct {
		name   string
		call   *drive.FilesDownloadCall
		code   int
		reason string
	}{
		{"mimeType of a binary file", c.Files.Download(bin.ID).MimeType("application/pdf"), 400, "badRequest"},
		{"a revision", c.Files.Download(doc.ID).RevisionId("1").MimeType("application/pdf"), 400, "badRequest"},
		{"a format Docs lack", c.Files.Download(doc.ID).MimeType("text/csv"), 400, "badRequest"},
		{"downloads turned off", c.Files.Download(locked.ID).MimeType("application/pdf"), 403, "cannotDownloadFile"},
		{"a folder", c.Files.Download(folder.ID), 403, "fileNotDownloadable"},
		{"another user's file", e.driveClient(e.token(bob)).Files.Download(doc.ID).MimeType("application/pdf"), 404, "notFound"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.call.Do()
			wantReason(t, err, tt.code, tt.reason)
		})
	}
	// Without mimeType a Doc downloads as PDF (Google: "a default MIME type").
	op, err = c.Files.Download(doc.ID).Do()
	if err != nil {
		t.Fatal(err)
	}
	_, res = finish(t, c, op, 3)
	if code, hdr, _ := e.do("GET", res.DownloadURI, tok, nil, nil); code != 200 || hdr.Get("Content-Type") != "application/pdf" {
		t.Errorf("default format: %d %s", code, hdr.Get("Content-Type"))
	}
}

// TestFilesDownloadOperationEnds: an operation whose file went away ends
// with an error (google.rpc.Code 5, NOT_FOUND); operations live 24 hours;
// SetDownloadPolls sets how long one stays pending.
func TestFilesDownloadOperationEnds(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	e := newEnvWith(t, emulator.Config{Now: func() time.Time { return now }})
	c := e.driveClient(e.token(ann))
	doc := e.put(ann, drivesvc.FileSpec{Name: "Doc", Kind: drivesvc.KindDoc, DocText: "hi"})

	op, err := c.Files.Download(doc.ID).MimeType("text/plain").Do()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Files.Delete(doc.ID).Do(); err != nil {
		t.Fatal(err)
	}
	op, _ = finish(t, c, op, 3)
	if op.Error == nil || op.Error.Code != 5 || len(op.Response) != 0 {
		t.Errorf("operation of a deleted file: %+v, want done with error code 5", op)
	}

	e.drive.SetDownloadPolls(5)
	doc = e.put(ann, drivesvc.FileSpec{Name: "Doc 2", Kind: drivesvc.KindDoc, DocText: "hi"})
	op, err = c.Files.Download(doc.ID).MimeType("text/plain").Do()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if got, err := c.Operations.Get(op.Name).Do(); err != nil || got.Done {
			t.Fatalf("poll %d: %+v %v, want pending", i+1, got, err)
		}
	}
	if got, err := c.Operations.Get(op.Name).Do(); err != nil || !got.Done {
		t.Fatalf("poll 6: %+v %v, want done", got, err)
	}
	now = now.Add(24 * time.Hour)
	_, err = e.driveClient(e.token(ann)).Operations.Get(op.Name).Do()
	wantReason(t, err, 404, "notFound")
}

// TestSharedDriveExportWithoutSupportsAllDrives: files.export and
// files.download take no supportsAllDrives (drive/v3 discovery), so a
// member exports a shared-drive file without it; files.get still needs it.
func TestSharedDriveExportWithoutSupportsAllDrives(t *testing.T) {
	e := newEnv(t)
	d, err := e.drive.PutSharedDrive("Finance", ann)
	if err != nil {
		t.Fatal(err)
	}
	doc := e.put(ann, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "shared plan", SharedDrive: d.ID})
	c := e.driveClient(e.token(ann))
	res, err := c.Files.Export(doc.ID, "text/plain").Download()
	if err != nil {
		t.Fatalf("files.export of a shared-drive file: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(b), "shared plan") {
		t.Errorf("export: %q", b)
	}
	op, err := c.Files.Download(doc.ID).MimeType("text/plain").Do()
	if err != nil {
		t.Fatalf("files.download of a shared-drive file: %v", err)
	}
	if _, res := finish(t, c, op, 3); res.DownloadURI == "" {
		t.Error("no downloadUri")
	}
	_, err = c.Files.Get(doc.ID).Do()
	wantReason(t, err, 404, "notFound")
	if _, err := e.driveClient(e.token(bob)).Files.Export(doc.ID, "text/plain").Download(); err == nil {
		t.Error("a non-member exported the shared-drive file")
	}
}

// noRedirects is a client that shows redirects instead of following them.
func noRedirects() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// TestExportLinksAreWebEndpoints: an export link is a web URL. With a
// token that reaches the file it redirects to a one-time URL on another
// host name (the content host), which serves the export without a token;
// a stranger is sent to a sign-in page that answers 200 text/html, the
// page a client that does not check Content-Type would attach.
func TestExportLinksAreWebEndpoints(t *testing.T) {
	e := newEnv(t)
	sheet := threeTabSheet(t, e)
	key := drivesvc.NewResourceKey()
	shared := e.put(ann, drivesvc.FileSpec{Name: "Prices", Kind: drivesvc.KindSheet, LinkShared: true, ResourceKey: key,
		Tabs: []drivesvc.Tab{{Title: "Prices", Rows: [][]string{{"Item", "Price"}}}}})
	link := func(id, tok string) string {
		meta, err := e.driveClient(tok).Files.Get(id).Fields("exportLinks").Do()
		if err != nil {
			t.Fatal(err)
		}
		return meta.ExportLinks["text/csv"]
	}
	get := func(u, tok string) *http.Response {
		req, _ := http.NewRequest("GET", u, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		res, err := noRedirects().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(b))
		return res
	}
	tok := e.token(ann)
	l := link(sheet.ID, tok)
	res := get(l, tok)
	target, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusTemporaryRedirect || err != nil || target.Hostname() != "localhost" {
		t.Fatalf("export link with a token: %d to %q; want 307 to the content host", res.StatusCode, res.Header.Get("Location"))
	}
	res = get(target.String(), "")
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/csv" || !strings.HasPrefix(string(body), "Area,Total") {
		t.Errorf("content URL: %d %s %q", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	if res := get(target.String(), ""); res.StatusCode != 404 {
		t.Errorf("content URL used twice: %d, want 404", res.StatusCode)
	}

	for who, tk := range map[string]string{
		"no token":                "",
		"another user":            e.token(bob),
		"a drive.file token":      e.emu.AccessTokenFor(ann, "other-app", drivesvc.ScopeDriveFile),
		"a token without a scope": e.token(ann, "https://www.googleapis.com/auth/gmail.send"),
	} {
		res := get(l, tk)
		signIn, _ := url.Parse(res.Header.Get("Location"))
		if res.StatusCode != http.StatusFound || signIn == nil || signIn.Path != "/ServiceLogin" {
			t.Errorf("%s: %d to %q, want 302 to the sign-in page", who, res.StatusCode, res.Header.Get("Location"))
			continue
		}
		page := get(e.srv.URL+signIn.RequestURI(), tk)
		b, _ := io.ReadAll(page.Body)
		if page.StatusCode != 200 || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(b), "Sign in") {
			t.Errorf("%s: sign-in page %d %s", who, page.StatusCode, page.Header.Get("Content-Type"))
		}
	}

	// A link-shared file's export links carry its resource key, which is
	// what lets a user who was only given the link use them.
	sl := link(shared.ID, tok)
	if u, _ := url.Parse(sl); u.Query().Get("resourcekey") != key {
		t.Fatalf("export link %q lacks the resource key", sl)
	}
	if res := get(sl, e.token(bob)); res.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("link-shared export link with its key, as bob: %d, want 307", res.StatusCode)
	}
	u, _ := url.Parse(sl)
	q := u.Query()
	q.Del("resourcekey")
	u.RawQuery = q.Encode()
	if res := get(u.String(), e.token(bob)); res.StatusCode != http.StatusFound {
		t.Errorf("without the key, as bob: %d, want 302 to sign in", res.StatusCode)
	}

	// Bad parameters on a file the user reaches are HTML errors, not the API's JSON.
	for _, bad := range []string{
		e.srv.URL + "/spreadsheets/export?exportFormat=csv",
		e.srv.URL + "/spreadsheets/export?id=" + sheet.ID + "&exportFormat=docx",
	} {
		if res := get(bad, tok); res.StatusCode != 400 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %s, want a 400 page", bad, res.StatusCode, res.Header.Get("Content-Type"))
		}
	}
}
