package drive_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/internal/logtest"
	"github.com/drivemail/drivemail/internal/memnet"
)

// fastPolls keeps tests of files.download's operation quick.
var fastPolls = drive.WithOperationPolling(5*time.Millisecond, 20*time.Millisecond, 5*time.Second)

// newEnvWith starts an emulator whose Drive client for user has the
// given options and drive.readonly.
func newEnvWith(t *testing.T, opts ...drive.Option) *env {
	t.Helper()
	return envWith(t, emutest.Start(t), opts...)
}

// newBubbleEnvWith is newEnvWith for a test inside a testing/synctest
// bubble (see newBubbleEnv).
func newBubbleEnvWith(t *testing.T, opts ...drive.Option) *env {
	t.Helper()
	return envWith(t, emutest.Start(t, emutest.OnNetwork(memnet.New())), opts...)
}

func envWith(t *testing.T, emu *emutest.Env, opts ...drive.Option) *env {
	t.Helper()
	e := &env{Env: emu}
	dc, err := drive.New(context.Background(), e.Client(user, emutest.ScopeDriveReadonly), e.Endpoints, opts...)
	if err != nil {
		t.Fatal(err)
	}
	e.dc = dc
	return e
}

// paths is how many requests each emulator route served since before.
func paths(e *env, before emulator.Stats) map[string]int64 {
	out := map[string]int64{}
	for p, n := range e.Emu.Stats().Paths {
		if d := n - before.Paths[p]; d > 0 {
			out[p] = d
		}
	}
	return out
}

// longDoc puts a Doc whose text export is over files.export's 10 MB cap
// in user's Drive and returns it as drive sees it.
func longDoc(t *testing.T, e *env) drive.File {
	t.Helper()
	doc := e.Put(user, drivesvc.FileSpec{Name: "Long", Kind: drivesvc.KindDoc, DocFillBytes: 11 << 20})
	f, err := e.dc.Get(context.Background(), drive.Ref{ID: doc.ID})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestExportPastTheCapUsesFilesDownload: files.export refuses past 10
// MB; files.download's operation, polled until done, serves the whole
// document from its downloadUri on the content host. No export link is
// used.
func TestExportPastTheCapUsesFilesDownload(t *testing.T) {
	e := newEnvWith(t, fastPolls)
	e.Emu.Drive().SetDownloadPolls(3)
	ctx := context.Background()
	got := longDoc(t, e)
	before := e.Emu.Stats()
	b := readAll(t)(e.dc.Export(ctx, got, "text/plain", nil))
	if len(b) < 11<<20 || !strings.HasPrefix(string(b), "\ufeff") {
		t.Fatalf("export read %d bytes; want the whole text export, over 11 MiB", len(b))
	}
	p := paths(e, before)
	if p["GET /drive/v3/files/{fileId}/export"] != 1 || p["POST /drive/v3/files/{fileId}/download"] != 1 ||
		p["GET /drive/v3/operations/{name}"] != 4 || p["GET /download"] != 1 {
		t.Errorf("requests %v: want files.export, files.download, 4 polls (3 pending, 1 done) and one download", p)
	}
	for route := range p {
		if strings.Contains(route, "Export") || strings.Contains(route, "/export/") {
			t.Errorf("an export link was used: %s", route)
		}
	}
}

// TestExportOperationPollingIsBounded: an operation that never finishes
// is abandoned with ErrExportNotReady within the total, after a bounded
// number of polls.
func TestExportOperationPollingIsBounded(t *testing.T) {
	synctest.Test(t, testExportOperationPollingIsBounded)
}

func testExportOperationPollingIsBounded(t *testing.T) {
	e := newBubbleEnvWith(t, drive.WithOperationPolling(5*time.Millisecond, 20*time.Millisecond, 300*time.Millisecond))
	e.Emu.Drive().SetDownloadPolls(1 << 20)
	ctx := context.Background()
	got := longDoc(t, e)
	before := e.Emu.Stats()
	start := time.Now()
	_, err := e.dc.Export(ctx, got, "text/plain", nil)
	if !errors.Is(err, drive.ErrExportNotReady) || drive.IsTransient(err) {
		t.Fatalf("err = %v, want ErrExportNotReady, not transient", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("gave up after %s; the total was 300ms", took)
	}
	if n := paths(e, before)["GET /drive/v3/operations/{name}"]; n < 2 || n > 60 {
		t.Errorf("%d polls; want a few, bounded by the total", n)
	}
}

// TestExportOperationOfAGoneFile: an operation that ends with NOT_FOUND
// (the file was deleted meanwhile) is ErrNotFound.
func TestExportOperationOfAGoneFile(t *testing.T) {
	e := newEnvWith(t, fastPolls)
	e.Emu.Drive().SetDownloadPolls(1 << 20)
	ctx := context.Background()
	got := longDoc(t, e)
	done := make(chan error, 1)
	go func() { _, err := e.dc.Export(ctx, got, "text/plain", nil); done <- err }()
	// Wait for the operation to be polled, then delete the file and let
	// the operation finish.
	deadline := time.Now().Add(10 * time.Second)
	for e.Emu.Stats().Paths["GET /drive/v3/operations/{name}"] == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the operation was never polled")
		}
		time.Sleep(time.Millisecond)
	}
	if err := deleteAs(e, user, got.ID); err != nil {
		t.Fatal(err)
	}
	e.Emu.Drive().SetDownloadPolls(0)
	if err := <-done; !errors.Is(err, drive.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
}

// deleteAs deletes a file through the API with a full Drive token.
func deleteAs(e *env, email, id string) error {
	dc, err := drive.New(context.Background(), e.Client(email, emutest.ScopeDrive), e.Endpoints)
	if err != nil {
		return err
	}
	return dc.DeleteFile(context.Background(), id)
}

// TestExportOfAnotherTypeIsRefused: whatever the route, an answer whose
// Content-Type is not the format asked for (here Google's sign-in page,
// which was once attached as "Budget - Expenses.csv") is ErrWrongType.
func TestExportOfAnotherTypeIsRefused(t *testing.T) {
	e := newEnvWith(t, fastPolls)
	ctx := context.Background()
	sheet := e.Put(user, drivesvc.FileSpec{Name: "Budget", Kind: drivesvc.KindSheet, Tabs: []drivesvc.Tab{
		{Title: "Summary", Rows: [][]string{{"a"}}}, {Title: "Expenses", Rows: [][]string{{"b"}}}}})
	big := e.Put(user, drivesvc.FileSpec{Name: "Long", Kind: drivesvc.KindDoc, DocFillBytes: 11 << 20})
	s, err := e.dc.Get(ctx, drive.Ref{ID: sheet.ID})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.dc.Get(ctx, drive.Ref{ID: big.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		fault emulator.Fault
		open  func() (io.ReadCloser, error)
	}{
		{"files.export", emulator.Fault{PathPrefix: "/drive/v3/files/" + sheet.ID + "/export", SignInPage: true},
			func() (io.ReadCloser, error) { return e.dc.Export(ctx, s, "text/csv", nil) }},
		{"files.download's downloadUri", emulator.Fault{PathPrefix: "/download", SignInPage: true},
			func() (io.ReadCloser, error) { return e.dc.Export(ctx, b, "text/plain", nil) }},
		{"a tab's values", emulator.Fault{PathPrefix: "/v4/spreadsheets/" + sheet.ID + "/values/", SignInPage: true},
			func() (io.ReadCloser, error) { return e.dc.Export(ctx, s, "text/csv", &s.Sheets[1]) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.Inject(tt.fault)
			rc, err := tt.open()
			if err == nil {
				rc.Close()
			}
			if !errors.Is(err, drive.ErrWrongType) || drive.IsTransient(err) {
				t.Fatalf("err = %v, want ErrWrongType, not transient", err)
			}
			if strings.Contains(err.Error(), "Sign in") {
				t.Errorf("error %q carries the page", err)
			}
		})
	}
}

// TestTabExportReadsFormattedValuesInWindows: one named tab goes through
// the Sheets API's values, several reads for a long tab, written as CSV
// (RFC 4180, CRLF) or TSV, with empty rows inside kept and trailing ones
// dropped, and no other tab's data.
func TestTabExportReadsFormattedValuesInWindows(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var rows [][]string
	for i := 1; i <= 5000; i++ {
		switch {
		case i >= 1900 && i < 2100: // empty rows across a read's edge
			rows = append(rows, []string{"", ""})
		default:
			rows = append(rows, []string{fmt.Sprintf("row %d", i), fmt.Sprint(i * 3)})
		}
	}
	rows[0] = []string{"name, with comma", `say "hi"`}
	rows[1] = []string{"two\nlines", "tab\there"}
	rows = append(rows, []string{"", ""}, []string{"", ""}) // trailing empty rows
	sheet := e.Put(user, drivesvc.FileSpec{Name: "Budget", Kind: drivesvc.KindSheet, Tabs: []drivesvc.Tab{
		{Title: "Summary", Rows: [][]string{{"other tab"}}},
		{Title: "It's Q1", Rows: rows},
	}})
	f, err := e.dc.Get(ctx, drive.Ref{ID: sheet.ID})
	if err != nil {
		t.Fatal(err)
	}
	tab := f.Sheets[1]
	if tab.Rows < 5000 || tab.Cols < 2 {
		t.Fatalf("tab grid %dx%d", tab.Rows, tab.Cols)
	}
	var wantCSV, wantTSV strings.Builder
	wantCSV.WriteString("\"name, with comma\",\"say \"\"hi\"\"\"\r\n\"two\r\nlines\",tab\there\r\n") // line breaks in a cell are CRLF too (encoding/csv)
	wantTSV.WriteString("name, with comma\tsay \"hi\"\r\ntwo lines\ttab here\r\n")
	for i := 3; i <= 5000; i++ {
		line := "\r\n"
		if i < 1900 || i >= 2100 {
			line = fmt.Sprintf("row %d,%d\r\n", i, i*3)
		}
		wantCSV.WriteString(line)
		wantTSV.WriteString(strings.Replace(line, ",", "\t", 1))
	}
	before := e.Emu.Stats()
	if got := readAll(t)(e.dc.Export(ctx, f, drive.MimeCSV, &tab)); string(got) != wantCSV.String() {
		t.Errorf("csv: %d bytes, want %d; starts %q", len(got), wantCSV.Len(), got[:min(len(got), 120)])
	}
	if n := paths(e, before)["GET /v4/spreadsheets/{spreadsheetId}/values/{range}"]; n < 3 {
		t.Errorf("%d values.get calls; want the tab read in several windows", n)
	}
	if got := readAll(t)(e.dc.Export(ctx, f, drive.MimeTSV, &tab)); string(got) != wantTSV.String() {
		t.Errorf("tsv: %d bytes, want %d; starts %q", len(got), wantTSV.Len(), got[:min(len(got), 120)])
	}
	if _, err := e.dc.Export(ctx, f, "application/pdf", &tab); err == nil {
		t.Error("a tab exported as PDF")
	}
}

// TestSheetsAPIIsOnlyForTabs: with the Sheets API not enabled, a Sheet
// is still found (Get without its tabs, TabsUnknown set) and exported
// whole or as its first tab; only a named tab fails, with ErrAPIDisabled
// naming sheets.googleapis.com and a log line for the operator.
func TestSheetsAPIIsOnlyForTabs(t *testing.T) {
	var logs logtest.Buffer
	e := newEnvWith(t, drive.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx := context.Background()
	sheet := e.Put(user, drivesvc.FileSpec{Name: "Budget", Kind: drivesvc.KindSheet, Tabs: []drivesvc.Tab{
		{Title: "Summary", Rows: [][]string{{"total", "12"}}}, {Title: "Q1", Rows: [][]string{{"jan", "4"}}}}})
	withTabs, err := e.dc.Get(ctx, drive.Ref{ID: sheet.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Emu.SetAPIEnabled("sheets", false); err != nil {
		t.Fatal(err)
	}
	f, err := e.dc.Get(ctx, drive.Ref{ID: sheet.ID})
	if err != nil || !f.TabsUnknown || len(f.Sheets) != 0 || f.Name != "Budget" {
		t.Fatalf("Get with Sheets off: %+v, %v; want the file without tabs, TabsUnknown", f, err)
	}
	if b := readAll(t)(e.dc.Export(ctx, f, "text/csv", nil)); !strings.Contains(string(b), "total") {
		t.Errorf("first tab without the Sheets API: %q", b)
	}
	if b := readAll(t)(e.dc.Export(ctx, f, "application/pdf", nil)); !strings.HasPrefix(string(b), "%PDF") {
		t.Errorf("pdf without the Sheets API: %q", b[:min(len(b), 20)])
	}
	if logs.String() != "" {
		t.Errorf("logged without need: %s", logs.String())
	}
	_, err = e.dc.Export(ctx, withTabs, "text/csv", &withTabs.Sheets[1])
	if svc, ok := drive.DisabledAPI(err); !ok || svc != "sheets.googleapis.com" || !errors.Is(err, drive.ErrAPIDisabled) {
		t.Fatalf("named tab with Sheets off: %v (%q); want ErrAPIDisabled naming sheets.googleapis.com", err, svc)
	}
	if _, err := e.dc.SheetTabs(ctx, f); !errors.Is(err, drive.ErrAPIDisabled) {
		t.Errorf("SheetTabs: %v", err)
	}
	if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "api=sheets.googleapis.com") ||
		!strings.Contains(l, "console.cloud.google.com/apis/library/sheets.googleapis.com") {
		t.Errorf("log %q: want an error line naming the API to enable", l)
	}
}

// TestDriveAPIDisabledIsNamed: with the Drive API off every call fails
// with ErrAPIDisabled naming drive.googleapis.com, not as a lost grant.
func TestDriveAPIDisabledIsNamed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	f := e.Put(user, drivesvc.FileSpec{Name: "a.txt", Content: []byte("a")})
	if err := e.Emu.SetAPIEnabled("drive", false); err != nil {
		t.Fatal(err)
	}
	_, err := e.dc.Get(ctx, drive.Ref{ID: f.ID})
	if svc, ok := drive.DisabledAPI(err); !ok || svc != "drive.googleapis.com" || errors.Is(err, drive.ErrUnauthorized) ||
		errors.Is(err, drive.ErrScope) || drive.IsTransient(err) {
		t.Errorf("Get with Drive off: %v; want ErrAPIDisabled naming drive.googleapis.com", err)
	}
	_, err = e.dc.Search(ctx, drive.Query{Text: "a"})
	if _, ok := drive.DisabledAPI(err); !ok {
		t.Errorf("Search with Drive off: %v", err)
	}
}

// TestSharedDriveExport: a shared-drive file exports (files.export takes
// no supportsAllDrives; the emulator used to answer 404).
func TestSharedDriveExport(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	d, err := e.Emu.Drive().PutSharedDrive("Finance", user)
	if err != nil {
		t.Fatal(err)
	}
	doc := e.Put(user, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "shared plan", SharedDrive: d.ID})
	f, err := e.dc.Get(ctx, drive.Ref{ID: doc.ID})
	if err != nil {
		t.Fatal(err)
	}
	if b := readAll(t)(e.dc.Export(ctx, f, "text/plain", nil)); !strings.Contains(string(b), "shared plan") {
		t.Errorf("export = %q", b)
	}
}

// TestExportOperationPollThatHangsIsBounded: a poll Google never answers
// ends with the polling total, not with the send's own deadline.
func TestExportOperationPollThatHangsIsBounded(t *testing.T) {
	synctest.Test(t, testExportOperationPollThatHangsIsBounded)
}

func testExportOperationPollThatHangsIsBounded(t *testing.T) {
	e := newBubbleEnvWith(t, drive.WithOperationPolling(5*time.Millisecond, 20*time.Millisecond, 300*time.Millisecond))
	got := longDoc(t, e)
	e.Inject(emulator.Fault{PathPrefix: "/drive/v3/operations/", Delay: 60_000_000_000})
	start := time.Now()
	_, err := e.dc.Export(context.Background(), got, "text/plain", nil)
	if !errors.Is(err, drive.ErrExportNotReady) {
		t.Fatalf("err = %v, want ErrExportNotReady", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("gave up after %s; the total was 300ms", took)
	}
}
