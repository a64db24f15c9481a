package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/exportfmt"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/upload"
)

var modified = time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)

func sampleFiles() []drive.File {
	return []drive.File{
		{ID: id33, Name: "Q3 report.pdf", MimeType: "application/pdf", Size: 2_516_582, ModifiedTime: modified, WebViewLink: "https://drive.google.com/file/d/" + id33 + "/view"},
		{ID: "sheet1sheet1sheet1", Name: "Budget", MimeType: exportfmt.Spreadsheet, ModifiedTime: modified, WebViewLink: "https://docs.google.com/spreadsheets/d/sheet1sheet1sheet1/edit"},
		{ID: "short1short1short1", Name: "Q3 (shortcut)", MimeType: exportfmt.Shortcut, ModifiedTime: modified},
		{ID: "empty1empty1empty1", Name: "empty.txt", MimeType: "text/plain", Size: 0, ModifiedTime: modified, WebViewLink: "https://drive.google.com/file/d/empty1empty1empty1/view"},
	}
}

func TestDriveSearch(t *testing.T) {
	h := newHarness(t, nil)
	h.drive.page = drive.Page{Files: sampleFiles(), NextPageToken: "tok-2"}
	res := h.call("drive_search", map[string]any{"query": "  Q3 report ", "mime_type": "PDF", "modified_after": "2026-04-01", "page_size": "50"})
	if res.IsError {
		t.Fatalf("refused: %s", res.text())
	}
	q := h.drive.query
	if q.Text != "Q3 report" || q.Type != "pdf" || q.MimeType != "" || q.PageSize != 50 ||
		!q.ModifiedAfter.Equal(time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("query = %+v", q)
	}
	var out SearchResult
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Files) != 4 || out.NextPageToken != "tok-2" {
		t.Fatalf("structured = %+v", out)
	}
	pdf, sheet, empty := out.Files[0], out.Files[1], out.Files[3]
	if pdf.Size == nil || *pdf.Size != 2_516_582 || pdf.Native || pdf.ExportFormats != nil {
		t.Errorf("pdf = %+v", pdf)
	}
	if sheet.Size != nil || !sheet.Native || !strings.Contains(strings.Join(sheet.ExportFormats, ","), "xlsx") {
		t.Errorf("sheet = %+v", sheet)
	}
	if empty.Size == nil || *empty.Size != 0 {
		t.Errorf("a 0-byte file must keep its size: %+v", empty)
	}
	lines := strings.Split(res.text(), "\n")
	if len(lines) != 6 || lines[0] != "4 files:" {
		t.Fatalf("text = %q", res.text())
	}
	if lines[1] != "- Q3 report.pdf | id "+id33+" | application/pdf | 2.4 MiB | modified 2026-05-01 09:30 UTC" {
		t.Errorf("line = %q", lines[1])
	}
	if !strings.Contains(lines[2], "Google Sheet (a link, or attach with as: xlsx/") {
		t.Errorf("native line = %q", lines[2])
	}
	if !strings.Contains(lines[3], "Drive shortcut (attach it by this id and its target goes in)") {
		t.Errorf("shortcut line = %q", lines[3])
	}
	if !strings.Contains(lines[5], `page_token "tok-2"`) {
		t.Errorf("paging line = %q", lines[5])
	}
}

func TestDriveSearchDefaultsAndEdges(t *testing.T) {
	cases := []struct {
		args     string
		pageSize int
		mime     string
		kind     string
	}{
		{`{"query":""}`, 20, "", ""},
		{`{"query":"x","page_size":1}`, 1, "", ""},
		{`{"query":"x","page_size":100}`, 100, "", ""},
		{`{"query":"x","page_size":20.0}`, 20, "", ""},
		{`{"query":"x","mime_type":"Google  Doc"}`, 20, "", "google doc"},
		{`{"query":"x","mime_type":"images"}`, 20, "", "images"},
		{`{"query":"x","mime_type":"Image/PNG"}`, 20, "image/png", ""},
		{`{"query":"x","mime_type":"any"}`, 20, "", ""},
		{`{"query":"` + strings.Repeat("é", maxQueryRunes) + `"}`, 20, "", ""},
		{`{}`, 20, "", ""},
	}
	for _, c := range cases {
		h := newHarness(t, nil)
		res := h.call("drive_search", c.args)
		if res.IsError {
			t.Errorf("%.60s: refused: %s", c.args, res.text())
			continue
		}
		if h.drive.query.PageSize != c.pageSize || h.drive.query.MimeType != c.mime || h.drive.query.Type != c.kind {
			t.Errorf("%.60s: query = %+v", c.args, h.drive.query)
		}
		if !strings.Contains(res.text(), "No files match") {
			t.Errorf("%.60s: empty result text = %q", c.args, res.text())
		}
	}
}

func TestDriveSearchRefuses(t *testing.T) {
	cases := []struct {
		args string
		want string
	}{
		{`{"query":"x","page_size":0}`, `"page_size" is 0; use 1 to 100`},
		{`{"query":"x","page_size":101}`, `"page_size" is 101`},
		{`{"query":"x","page_size":2.5}`, `"page_size" must be a whole number`},
		{`{"query":"x","page_size":"lots"}`, `"page_size" must be a whole number`},
		{`{"query":"x","page_size":1e20}`, `"page_size" must be a whole number, not 1e20`},
		{`{"query":"x","mime_type":"spreadsheets please"}`, `not a kind drive_search knows; use archive, audio,`},
		{`{"query":"x","modified_after":"last week"}`, `"modified_after" "last week" is not a date`},
		{`{"query":"` + strings.Repeat("a", maxQueryRunes+1) + `"}`, `use at most 1000`},
		{`{"query":"x","type":"pdf"}`, `unknown field "type"`},
		{`{"query":["x"]}`, `"query" must be a string, not a list.`},
		{`{"query":"x","page_size":{"n":5}}`, `"page_size" must be a whole number, not an object.`},
	}
	for _, c := range cases {
		h := newHarness(t, nil)
		h.mustRefuse("drive_search", c.args, c.want)
		if h.drive.called != 0 {
			t.Errorf("%.60s: Drive was called for a refused search", c.args)
		}
	}
}

func TestDriveErrorsBecomeSentences(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&drive.Error{Op: "files.get", Code: 404, Err: drive.ErrNotFound}, "No Drive file with id"},
		{&drive.Error{Op: "files.get", Code: 403, Reason: "insufficientPermissions", Err: drive.ErrScope}, "Reconnect drivemail"},
		{&drive.Error{Op: "files.get", Code: 401, Err: drive.ErrUnauthorized}, "expired or was revoked"},
		{&drive.Error{Op: "files.get", Code: 503, Err: drive.ErrUnavailable}, "Try again in a minute"},
		{&drive.Error{Op: "files.list", Code: 403, Reason: "domainPolicy", Err: drive.ErrDomainPolicy}, "Workspace administrator does not allow drivemail"},
		{&drive.Error{Op: "files.get", Code: 403, Reason: "accessNotConfigured", Service: drive.DriveService, Err: drive.ErrAPIDisabled}, "has not enabled the Google Drive API"},
		{drive.ErrQueryToken, `"page_token" is not one this server returned; start the search again without it.`},
		{drive.ErrQueryMimeType, `"mime_type" must be a MIME type such as "application/pdf".`},
		{drive.ErrQueryPageSize, `"page_size" must be between 1 and 100.`},
		{drive.ErrQueryType, "The type is not one drive_search knows"},
		{fmt.Errorf("dial: connection refused"), "internal error"},
	}
	for _, c := range cases {
		h := newHarness(t, nil)
		h.drive.err = c.err
		res := h.mustRefuse("drive_get_file", map[string]any{"file_id": id33}, c.want)
		if strings.Contains(res.text(), "HTTP") || strings.Contains(res.text(), "files.get") {
			t.Errorf("%v: leaks internals: %s", c.err, res.text())
		}
	}
}

func TestDriveGetFile(t *testing.T) {
	h := newHarness(t, nil)
	f := sampleFiles()[1]
	f.Sheets = []drive.Sheet{{ID: 0, Title: "Q3"}, {ID: 7, Title: "Q4 forecast"}}
	h.drive.file = f
	res := h.call("drive_get_file", map[string]any{"file_id": "https://docs.google.com/spreadsheets/d/sheet1sheet1sheet1/edit#gid=0"})
	if res.IsError {
		t.Fatalf("refused: %s", res.text())
	}
	if h.drive.gotID != "sheet1sheet1sheet1" {
		t.Errorf("asked Drive for %q", h.drive.gotID)
	}
	var out File
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Join(out.Sheets, "|") != "Q3|Q4 forecast" || !out.Native {
		t.Errorf("file = %+v", out)
	}
	if !strings.Contains(res.text(), "Tabs (for \"sheet\" with as csv or tsv): Q3, Q4 forecast") {
		t.Errorf("text = %q", res.text())
	}
	// An mcp-file:// handle names a Drive file too.
	h.call("drive_get_file", map[string]any{"file_id": "mcp-file://drivemail.example.com/" + id33})
	if h.drive.gotID != id33 {
		t.Errorf("handle resolved to %q", h.drive.gotID)
	}
}

func TestDriveGetFileRefuses(t *testing.T) {
	for args, want := range map[string]string{
		`{}`:                          `"file_id" is required`,
		`{"file_id":"  "}`:            `"file_id" is required`,
		`{"file_id":"Budget 2026"}`:   "not a Drive file id",
		`{"file_id":"x","extra":1}`:   `unknown field "extra"`,
		`{"file_id":"https://x.y/z"}`: "is a link, not a Drive file id",
	} {
		h := newHarness(t, nil)
		h.mustRefuse("drive_get_file", args, want)
		if h.drive.called != 0 {
			t.Errorf("%s: Drive called", args)
		}
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 26_214_400: "25.0 MiB", 1 << 30: "1.0 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestDriveLinkKeepsResourceKey: a link-shared file's link carries the
// resource key Drive needs to serve it to anyone but its owner; a pasted
// link must reach Drive with it, for drive_get_file and for attachments.
func TestDriveLinkKeepsResourceKey(t *testing.T) {
	const key = "0-abcDEF_12"
	link := "https://drive.google.com/file/d/" + id33 + "/view?usp=sharing&resourcekey=" + key
	keyOf := func(what string, ref drive.Ref) {
		t.Helper()
		if ref.ID != id33 || ref.ResourceKey != key {
			t.Errorf("%s reaches Drive as %+v; want id %s with resource key %s", what, ref, id33, key)
		}
	}

	h := newHarness(t, nil)
	h.drive.file = sampleFiles()[0]
	if res := h.call("drive_get_file", map[string]any{"file_id": link}); res.IsError {
		t.Fatalf("drive_get_file refused: %s", res.text())
	}
	keyOf("drive_get_file", h.drive.gotRef)

	res := h.call("send_email", map[string]any{"to": "ana@example.com", "subject": "s", "body_text": "hi",
		"attachments": []any{link, map[string]any{"file_id": link, "as": "pdf"}}})
	if res.IsError {
		t.Fatalf("send_email refused: %s", res.text())
	}
	for i, a := range h.mail.req.Attachments {
		ref, _ := handle.DriveRef(a.Source.(compose.DriveFile).Handle)
		keyOf(fmt.Sprintf("attachment %d", i+1), ref)
	}

	// An upload goes into a folder by its id alone.
	h.uploads.ticket = upload.Ticket{UploadURL: "https://dm.example.com/upload/tkt", Method: "PUT", ExpiresAt: time.Now().Add(time.Hour)}
	if res := h.call("request_upload", map[string]any{"name": "a.pdf", "folder_id": "https://drive.google.com/open?id=" + id33 + "&resourcekey=" + key}); res.IsError {
		t.Fatalf("request_upload refused: %s", res.text())
	}
	if h.uploads.req.FolderID != id33 {
		t.Errorf("folder_id reached uploads as %q, want %s", h.uploads.req.FolderID, id33)
	}

	// Without a key a link still becomes the bare id.
	h.call("drive_get_file", map[string]any{"file_id": "https://drive.google.com/file/d/" + id33 + "/view"})
	if h.drive.gotRef != (drive.Ref{ID: id33}) {
		t.Errorf("a link without a key reached Drive as %+v", h.drive.gotRef)
	}
}

// TestPageText: a search's text counts its lines in the header, gives
// one line per result, and says how to get the next page only when
// there is one. Google may answer an empty page that has a next one:
// that is not "nothing matches".
func TestPageText(t *testing.T) {
	for _, tt := range []struct {
		lines []string
		next  string
		want  string
	}{
		{nil, "", "None."},
		{nil, "tok", "No files on this page.\nMore files match: call again with page_token \"tok\"."},
		{[]string{"a"}, "", "1 file (cols):\n- a"},
		{[]string{"a", "b"}, "tok", "2 files (cols):\n- a\n- b\nMore files match: call again with page_token \"tok\"."},
	} {
		if got := pageText(tt.lines, "file", " (cols)", "None.", tt.next); got != tt.want {
			t.Errorf("pageText(%q, %q) =\n%s\nwant\n%s", tt.lines, tt.next, got, tt.want)
		}
	}
}
