package drive_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/internal/memnet"
)

const (
	user  = "ana@example.com"
	other = "bob@example.com"
)

// env is an emulator and ana's Drive client of it.
type env struct {
	*emutest.Env
	dc *drive.Client
}

// newEnv starts an emulator; ana's client has scopes (drive.readonly by
// default).
func newEnv(t *testing.T, scopes ...string) *env {
	t.Helper()
	if len(scopes) == 0 {
		scopes = []string{emutest.ScopeDriveReadonly}
	}
	return newEnvAs(t, user, scopes...)
}

// newBubbleEnv is newEnv for a test inside a testing/synctest bubble
// (call it there): the emulator on an in-memory network, so the bubble's
// clock runs the client's idle timeouts and polls, at once.
func newBubbleEnv(t *testing.T, scopes ...string) *env {
	t.Helper()
	if len(scopes) == 0 {
		scopes = []string{emutest.ScopeDriveReadonly}
	}
	return startEnv(t, emutest.Start(t, emutest.OnNetwork(memnet.New())), user, scopes...)
}

// newEnvAs starts an emulator with email's Drive client.
func newEnvAs(t *testing.T, email string, scopes ...string) *env {
	t.Helper()
	return startEnv(t, emutest.Start(t), email, scopes...)
}

func startEnv(t *testing.T, emu *emutest.Env, email string, scopes ...string) *env {
	t.Helper()
	e := &env{Env: emu}
	dc, err := drive.New(context.Background(), e.Client(email, scopes...), e.Endpoints)
	if err != nil {
		t.Fatal(err)
	}
	e.dc = dc
	return e
}

func random(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// readAll returns a function that reads a whole stream, failing t on
// any error: readAll(t)(dc.Download(ctx, f)).
func readAll(t *testing.T) func(io.ReadCloser, error) []byte {
	return func(rc io.ReadCloser, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return b
	}
}

func TestGetBinary(t *testing.T) {
	e := newEnv(t)
	content := random(10_000)
	f := e.Put(user, drivesvc.FileSpec{Name: "Q3 report.pdf", Content: content})
	got, err := e.dc.Get(context.Background(), drive.Ref{ID: f.ID})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	md := md5.Sum(content)
	sh := sha256.Sum256(content)
	if got.ID != f.ID || got.Name != "Q3 report.pdf" || got.MimeType != "application/pdf" || got.Size != int64(len(content)) ||
		got.MD5 != hex.EncodeToString(md[:]) || got.SHA256 != hex.EncodeToString(sh[:]) || !got.CanDownload || got.Native() ||
		got.WebViewLink == "" || got.ModifiedTime.IsZero() {
		t.Errorf("Get = %+v", got)
	}
	b := readAll(t)(e.dc.Download(context.Background(), got))
	if !bytes.Equal(b, content) {
		t.Errorf("Download returned %d bytes that differ from the file's", len(b))
	}
}

func TestGetNotFoundIsTheSameForOthersFiles(t *testing.T) {
	e := newEnv(t)
	theirs := e.Put(other, drivesvc.FileSpec{Name: "private.pdf", Content: []byte("x")})
	for _, id := range []string{theirs.ID, "1NoSuchFileNoSuchFileNoSuchFile00"} {
		_, err := e.dc.Get(context.Background(), drive.Ref{ID: id})
		if !errors.Is(err, drive.ErrNotFound) {
			t.Errorf("Get(%s) error = %v, want ErrNotFound", id, err)
		}
		if err != nil && err.Error() != "drive files.get: HTTP 404 notFound: file not found" {
			t.Errorf("error text = %q, want the operation, status, reason and cause only", err)
		}
	}
	if _, err := e.dc.Get(context.Background(), drive.Ref{ID: "not an id"}); !errors.Is(err, drive.ErrBadID) {
		t.Errorf("Get(bad id) error = %v, want ErrBadID", err)
	}
}

func TestGetShortcutSharedDriveAndResourceKey(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	target := e.Put(user, drivesvc.FileSpec{Name: "target.pdf", Content: []byte("target")})
	sc := e.Put(user, drivesvc.FileSpec{Name: "shortcut", Kind: drivesvc.KindShortcut, ShortcutTo: target.ID})
	got, err := e.dc.Get(ctx, drive.Ref{ID: sc.ID})
	if err != nil {
		t.Fatalf("Get(shortcut): %v", err)
	}
	if got.ID != target.ID || got.ShortcutID != sc.ID || got.Name != "target.pdf" {
		t.Errorf("shortcut resolved to %+v", got)
	}

	sd, err := e.Emu.Drive().PutSharedDrive("Team", user)
	if err != nil {
		t.Fatal(err)
	}
	inTeam := e.Put(user, drivesvc.FileSpec{Name: "team.pdf", Content: []byte("team"), SharedDrive: sd.ID})
	got, err = e.dc.Get(ctx, drive.Ref{ID: inTeam.ID})
	if err != nil || got.DriveID != sd.ID {
		t.Fatalf("Get(shared drive file) = %+v, %v", got, err)
	}
	if b := readAll(t)(e.dc.Download(ctx, got)); string(b) != "team" {
		t.Errorf("shared drive download = %q", b)
	}

	key := drivesvc.NewResourceKey()
	linked := e.Put(other, drivesvc.FileSpec{Name: "linked.pdf", Content: []byte("linked"), LinkShared: true, ResourceKey: key})
	if _, err := e.dc.Get(ctx, drive.Ref{ID: linked.ID}); !errors.Is(err, drive.ErrNotFound) {
		t.Errorf("Get(link-shared without key) error = %v, want ErrNotFound", err)
	}
	got, err = e.dc.Get(ctx, drive.Ref{ID: linked.ID, ResourceKey: key})
	if err != nil {
		t.Fatalf("Get(link-shared with key): %v", err)
	}
	if b := readAll(t)(e.dc.Download(ctx, got)); string(b) != "linked" {
		t.Errorf("link-shared download = %q", b)
	}
}

func TestSpreadsheetTabsAndExports(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	sheet := e.Put(user, drivesvc.FileSpec{Name: "Budget", Kind: drivesvc.KindSheet, Tabs: []drivesvc.Tab{
		{Title: "Summary", Rows: [][]string{{"total", "12"}}},
		{Title: "Q1", Rows: [][]string{{"jan", "4"}, {"feb", "8"}}},
	}})
	got, err := e.dc.Get(ctx, drive.Ref{ID: sheet.ID})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if len(got.Sheets) != 2 || got.Sheets[0].Title != "Summary" || got.Sheets[1].Title != "Q1" || !got.Native() {
		t.Fatalf("sheets = %+v", got.Sheets)
	}
	first := readAll(t)(e.dc.Export(ctx, got, "text/csv", nil))
	second := readAll(t)(e.dc.Export(ctx, got, "text/csv", &got.Sheets[1]))
	if !strings.Contains(string(first), "total") || strings.Contains(string(first), "jan") {
		t.Errorf("csv without a tab = %q, want the first tab", first)
	}
	if !strings.Contains(string(second), "jan") || strings.Contains(string(second), "total") {
		t.Errorf("csv of Q1 = %q, want the Q1 tab only", second)
	}
	if _, err := e.dc.Download(ctx, got); !errors.Is(err, drive.ErrNotDownloadable) {
		t.Errorf("Download(native) error = %v, want ErrNotDownloadable", err)
	}
}

func TestDownloadCutIsAnErrorNotEOF(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	f := e.Put(user, drivesvc.FileSpec{Name: "big.bin", Content: random(300_000)})
	got, err := e.dc.Get(ctx, drive.Ref{ID: f.ID})
	if err != nil {
		t.Fatal(err)
	}
	cut := int64(100_000)
	e.Inject(emulator.Fault{PathPrefix: "/drive/v3/files/" + f.ID, CutResponseAfter: &cut})
	rc, err := e.dc.Download(ctx, got)
	if err != nil {
		t.Fatalf("Download: %v", err)
	}
	defer rc.Close()
	n, err := io.Copy(io.Discard, rc)
	if err == nil {
		t.Fatalf("a download cut after %d bytes read as complete", n)
	}
	if !drive.IsTransient(err) {
		t.Errorf("cut download error %v is not transient", err)
	}
}

func TestRangeReader(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	content := random(50_000)
	f := e.Put(user, drivesvc.FileSpec{Name: "a.zip", Content: content})
	got, err := e.dc.Get(ctx, drive.Ref{ID: f.ID})
	if err != nil {
		t.Fatal(err)
	}
	rr := e.dc.RangeReader(ctx, got, 2, 30_000)
	p := make([]byte, 1000)
	if n, err := rr.ReadAt(p, 49_500); n != 500 || err != io.EOF || !bytes.Equal(p[:500], content[49_500:]) {
		t.Errorf("ReadAt(tail) = %d, %v", n, err)
	}
	if n, err := rr.ReadAt(p, 10); n != 1000 || err != nil || !bytes.Equal(p, content[10:1010]) {
		t.Errorf("ReadAt(middle) = %d, %v", n, err)
	}
	if _, err := rr.ReadAt(p, 0); !errors.Is(err, drive.ErrRangeBudget) {
		t.Errorf("third read error = %v, want ErrRangeBudget", err)
	}
	big := make([]byte, 30_001)
	if _, err := e.dc.RangeReader(ctx, got, 5, 30_000).ReadAt(big, 0); !errors.Is(err, drive.ErrRangeBudget) {
		t.Errorf("read past the byte budget: error = %v, want ErrRangeBudget", err)
	}
	// The emulator counts 206 answers apart from whole downloads.
	if st := e.Emu.Stats().Files[f.ID]; st.Downloads != 0 || st.RangeReads != 2 || st.RangeBytes != 1_500 {
		t.Errorf("range reads: %d downloads, %d Range requests for %d bytes; want 0, 2 for 1500", st.Downloads, st.RangeReads, st.RangeBytes)
	}
}

// TestSearchByKind: drive_search's kind words keep what a user means by
// them, as Drive answers the query: "sheet" the Google Sheets and Excel
// files, not a CSV (which "csv" finds).
func TestSearchByKind(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.Put(user, drivesvc.FileSpec{Name: "Budget 2025", Kind: drivesvc.KindSheet})
	e.Put(user, drivesvc.FileSpec{Name: "forecast.xlsx", Content: []byte("PK")})
	e.Put(user, drivesvc.FileSpec{Name: "customers.csv", Content: []byte("a,b\n")})
	e.Put(user, drivesvc.FileSpec{Name: "Q3 Report.pdf", Content: []byte("%PDF")})
	for word, want := range map[string]string{
		"sheet":       "Budget 2025|forecast.xlsx",
		"spreadsheet": "Budget 2025|forecast.xlsx",
		"csv":         "customers.csv",
		"pdf":         "Q3 Report.pdf",
	} {
		page, err := e.dc.Search(ctx, drive.Query{Type: word})
		if err != nil {
			t.Fatalf("%s: %v", word, err)
		}
		var got []string
		for _, f := range page.Files {
			got = append(got, f.Name)
		}
		slices.Sort(got)
		if strings.Join(got, "|") != want {
			t.Errorf("mime_type %q found %q, want %q", word, got, want)
		}
	}
}

func TestSearch(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	old := time.Now().Add(-48 * time.Hour)
	e.Put(user, drivesvc.FileSpec{Name: "Bob's report.pdf", Content: []byte("x"), Modified: old, Created: old})
	e.Put(user, drivesvc.FileSpec{Name: "report draft.pdf", Content: []byte("x")})
	e.Put(user, drivesvc.FileSpec{Name: "report old.pdf", Content: []byte("x"), Trashed: true})
	e.Put(user, drivesvc.FileSpec{Name: "Report notes", Kind: drivesvc.KindDoc, DocText: "report"})
	sd, err := e.Emu.Drive().PutSharedDrive("Team", user)
	if err != nil {
		t.Fatal(err)
	}
	e.Put(user, drivesvc.FileSpec{Name: "team report.pdf", Content: []byte("x"), SharedDrive: sd.ID})
	e.Put(other, drivesvc.FileSpec{Name: "their report.pdf", Content: []byte("x")})

	names := func(p drive.Page) string {
		var n []string
		for _, f := range p.Files {
			n = append(n, f.Name)
		}
		return strings.Join(n, "|")
	}
	page, err := e.dc.Search(ctx, drive.Query{Text: "report"})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	got := names(page)
	for _, want := range []string{"Bob's report.pdf", "report draft.pdf", "Report notes", "team report.pdf"} {
		if !strings.Contains(got, want) {
			t.Errorf("search for report lacks %q: %s", want, got)
		}
	}
	for _, not := range []string{"report old.pdf", "their report.pdf"} {
		if strings.Contains(got, not) {
			t.Errorf("search for report shows %q: %s", not, got)
		}
	}
	if page, err = e.dc.Search(ctx, drive.Query{Text: "Bob's"}); err != nil || names(page) != "Bob's report.pdf" {
		t.Errorf("search with a quote = %s, %v", names(page), err)
	}
	if page, err = e.dc.Search(ctx, drive.Query{Text: "report", MimeType: "application/vnd.google-apps.document"}); err != nil || names(page) != "Report notes" {
		t.Errorf("search by type = %s, %v", names(page), err)
	}
	if page, err = e.dc.Search(ctx, drive.Query{Text: "report", ModifiedAfter: time.Now().Add(-time.Hour)}); err != nil || strings.Contains(names(page), "Bob's") {
		t.Errorf("search modified after an hour ago = %s, %v", names(page), err)
	}
	// Paging visits every file once.
	seen := map[string]bool{}
	q := drive.Query{PageSize: 2}
	for i := 0; i < 10; i++ {
		page, err := e.dc.Search(ctx, q)
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		for _, f := range page.Files {
			if seen[f.ID] {
				t.Errorf("%s listed twice", f.Name)
			}
			seen[f.ID] = true
		}
		if page.NextPageToken == "" {
			break
		}
		q.PageToken = page.NextPageToken
	}
	if len(seen) != 4 {
		t.Errorf("paging saw %d files, want 4 (untrashed, own and shared drive)", len(seen))
	}
	if _, err := e.dc.Search(ctx, drive.Query{PageToken: "bogus"}); !errors.Is(err, drive.ErrQueryToken) {
		t.Errorf("bogus page token error = %v, want ErrQueryToken", err)
	}
}

func TestUpload(t *testing.T) {
	e := newEnv(t, emutest.ScopeDrive)
	content := random(100_000)
	f, err := e.dc.Upload(context.Background(), drive.NewFile{Name: "up.bin", MimeType: "application/octet-stream"}, bytes.NewReader(content))
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if got := e.Content(f.ID); !bytes.Equal(got, content) {
		t.Errorf("uploaded content differs")
	}
}
