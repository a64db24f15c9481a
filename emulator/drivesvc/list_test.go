package drivesvc_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/drive/v3"

	"github.com/drivemail/drivemail/emulator/drivesvc"
)

// searchFixture puts a small, varied Drive for ann and returns her client.
func searchFixture(t *testing.T) (*env, *drive.Service, map[string]string) {
	e := newEnv(t)
	day := func(d int) time.Time { return time.Date(2025, 6, d, 12, 0, 0, 0, time.UTC) }
	ids := map[string]string{}
	put := func(spec drivesvc.FileSpec) {
		ids[spec.Name] = e.put(ann, spec).ID
	}
	put(drivesvc.FileSpec{Name: "Projects", Kind: drivesvc.KindFolder, Modified: day(1)})
	put(drivesvc.FileSpec{Name: "Q3 Report.pdf", Content: []byte("%PDF-1.4\nBT (Quarterly revenue grew) Tj ET\n"), Modified: day(10)})
	put(drivesvc.FileSpec{Name: "HelloWorld.txt", Content: []byte("greetings from the plain text file"), Modified: day(5)})
	put(drivesvc.FileSpec{Name: "Ann's notes", Kind: drivesvc.KindDoc, DocText: "Budget meeting\nWe discussed pineapples.", Modified: day(7)})
	put(drivesvc.FileSpec{Name: `back\slash`, Content: []byte("b"), Modified: day(3)})
	put(drivesvc.FileSpec{Name: "logo.png", Content: []byte("\x89PNG"), Modified: day(2), Description: "company mark"})
	put(drivesvc.FileSpec{Name: "old draft.txt", Content: []byte("old"), Modified: day(4), Trashed: true})
	put(drivesvc.FileSpec{Name: "in projects.txt", Content: []byte("p"), Parents: []string{ids["Projects"]}, Modified: day(6)})
	put(drivesvc.FileSpec{Name: "Budget", Kind: drivesvc.KindSheet, Tabs: []drivesvc.Tab{{Title: "Costs", Rows: [][]string{{"Item", "Amount"}, {"Espresso machine", "899"}}}}, Modified: day(8)})
	e.put(bob, drivesvc.FileSpec{Name: "bob's Q3 Report.pdf", Content: []byte("%PDF"), Modified: day(9)})
	return e, e.driveClient(e.token(ann)), ids
}

func listNames(t *testing.T, c *drive.Service, q, orderBy string) []string {
	t.Helper()
	call := c.Files.List().Q(q).Fields("files(name)")
	if orderBy != "" {
		call = call.OrderBy(orderBy)
	}
	l, err := call.Do()
	if err != nil {
		t.Fatalf("q=%s: %v", q, err)
	}
	var out []string
	for _, f := range l.Files {
		out = append(out, f.Name)
	}
	slices.Sort(out)
	return out
}

func TestQueryGrammar(t *testing.T) {
	_, c, ids := searchFixture(t)
	tests := []struct {
		q    string
		want string
	}{
		{"", "[Ann's notes Budget HelloWorld.txt Projects Q3 Report.pdf back\\slash in projects.txt logo.png old draft.txt]"},
		{"trashed = false", "[Ann's notes Budget HelloWorld.txt Projects Q3 Report.pdf back\\slash in projects.txt logo.png]"},
		{"trashed = true", "[old draft.txt]"},
		{"name contains 'report'", "[Q3 Report.pdf]"},
		{"name contains 'Hello'", "[HelloWorld.txt]"},
		{"name contains 'World'", "[]"}, // prefix matching on words, as Drive
		{"name contains 'proj'", "[Projects in projects.txt]"},
		{`name = 'Ann\'s notes'`, "[Ann's notes]"},
		{`name = 'back\\slash'`, "[back\\slash]"},
		{"name != 'Budget' and name contains 'b'", "[back\\slash]"},
		{"fullText contains 'pineapples'", "[Ann's notes]"},
		{"fullText contains 'revenue'", "[Q3 Report.pdf]"}, // text runs of a simple PDF
		{"fullText contains 'espresso'", "[Budget]"},
		{"fullText contains 'company'", "[logo.png]"}, // description
		{"fullText contains 'greetings from'", "[HelloWorld.txt]"},
		{"mimeType = 'application/vnd.google-apps.folder'", "[Projects]"},
		{"mimeType != 'application/vnd.google-apps.folder' and mimeType contains 'google-apps'", "[Ann's notes Budget]"},
		{"mimeType contains 'image/'", "[logo.png]"},
		{"modifiedTime > '2025-06-07T12:00:00Z'", "[Budget Q3 Report.pdf]"},
		{"modifiedTime >= '2025-06-07T12:00:00'", "[Ann's notes Budget Q3 Report.pdf]"},
		{"modifiedTime < '2025-06-02T12:00:00.000Z'", "[Projects]"},
		{"modifiedTime <= '2025-06-02T14:00:00+02:00'", "[Projects logo.png]"},
		{"modifiedTime = '2025-06-05T12:00:00Z'", "[HelloWorld.txt]"},
		{"createdTime > '2000-01-01'", "[Ann's notes Budget HelloWorld.txt Projects Q3 Report.pdf back\\slash in projects.txt logo.png old draft.txt]"},
		{"'" + ids["Projects"] + "' in parents", "[in projects.txt]"},
		{"'root' in parents and trashed = false and mimeType = 'application/pdf'", "[Q3 Report.pdf]"},
		{"'me' in owners and name contains 'q3'", "[Q3 Report.pdf]"},
		{"'bob@example.com' in owners", "[]"},
		{"not name contains 'b' and trashed = false and not mimeType contains 'google'", "[HelloWorld.txt Q3 Report.pdf in projects.txt logo.png]"},
		{"(name contains 'logo' or name contains 'hello') and trashed = false", "[HelloWorld.txt logo.png]"},
		{"name contains 'logo' or name contains 'hello' and trashed = true", "[logo.png]"}, // and binds tighter
		{"NOT (name contains 'b') AND trashed = FALSE AND name contains 'q'", "[Q3 Report.pdf]"},
		{"sharedWithMe = true", "[]"},
		{"starred = false and name = 'logo.png'", "[logo.png]"},
	}
	for _, tt := range tests {
		if got := fmt.Sprint(listNames(t, c, tt.q, "")); got != tt.want {
			t.Errorf("q=%s\n got %s\nwant %s", tt.q, got, tt.want)
		}
	}
}

func TestQueryErrorsAreGooglesInvalidValue(t *testing.T) {
	_, c, _ := searchFixture(t)
	for _, q := range []string{
		"properties has { key='a' and value='b' }",
		"title contains 'x'",               // a v2 field
		"name contains 'unterminated",      // quoting
		`name = 'bad \escape'`,             // only \' and \\ escape
		"name > 'x'",                       // operator not for names
		"fullText = 'x'",                   // fullText only contains
		"modifiedTime > 'yesterday'",       // not RFC 3339
		"trashed = 'false'",                // boolean as a string
		"name contains 'a' and",            // dangling and
		"(name contains 'a'",               // unbalanced
		"name contains 'a')",               // unbalanced
		"'x' in ancestors",                 // unknown collection
		"name contains \"double\"",         // double quotes
		"name contains 'a' xor name = 'b'", // no such keyword
		strings.Repeat("(", 200) + "name = 'a'" + strings.Repeat(")", 200), // too deep
	} {
		_, err := c.Files.List().Q(q).Do()
		ge := wantReason(t, err, 400, "invalid")
		if ge.Message != "Invalid Value" || !strings.Contains(string(ge.Body), `"location": "q"`) {
			t.Errorf("q=%s: %s", q, ge.Body)
		}
	}
}

func TestOrderByAndFullTextSorting(t *testing.T) {
	_, c, _ := searchFixture(t)
	l, err := c.Files.List().Q("trashed = false").OrderBy("modifiedTime desc").Fields("files(name)").Do()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range l.Files {
		got = append(got, f.Name)
	}
	want := "[Q3 Report.pdf Budget Ann's notes in projects.txt HelloWorld.txt back\\slash logo.png Projects]"
	if fmt.Sprint(got) != want {
		t.Errorf("modifiedTime desc = %v", got)
	}
	l, err = c.Files.List().Q("trashed = false").OrderBy("folder,name").Fields("files(name)").Do()
	if err != nil || l.Files[0].Name != "Projects" || l.Files[1].Name != "Ann's notes" {
		t.Errorf("folder,name: %v %v", l, err)
	}
	_, err = c.Files.List().Q("fullText contains 'x'").OrderBy("name").Do()
	ge := wantReason(t, err, 400, "badRequest")
	if !strings.Contains(ge.Message, "Sorting is not supported for queries with fullText terms") {
		t.Errorf("message %q", ge.Message)
	}
	_, err = c.Files.List().OrderBy("size desc").Do()
	wantReason(t, err, 400, "invalid")
}

func TestPaging(t *testing.T) {
	e := newEnv(t)
	for i := range 25 {
		e.put(ann, drivesvc.FileSpec{Name: fmt.Sprintf("file %02d.txt", i), Content: []byte("x"),
			Modified: time.Date(2025, 1, 1, 0, 0, i%3, 0, time.UTC)}) // ties on purpose
	}
	c := e.driveClient(e.token(ann))
	seen := map[string]bool{}
	token := ""
	pages := 0
	for {
		l, err := c.Files.List().PageSize(10).PageToken(token).Fields("nextPageToken,files(id)").Do()
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, f := range l.Files {
			if seen[f.Id] {
				t.Fatalf("file %s on two pages", f.Id)
			}
			seen[f.Id] = true
		}
		if l.NextPageToken == "" {
			break
		}
		token = l.NextPageToken
	}
	if pages != 3 || len(seen) != 25 {
		t.Errorf("%d pages, %d files; want 3 and 25", pages, len(seen))
	}
	first, err := c.Files.List().PageSize(10).Fields("nextPageToken").Do()
	if err != nil {
		t.Fatal(err)
	}
	// A token only continues the search it came from.
	_, err = c.Files.List().PageSize(10).Q("name contains 'file'").PageToken(first.NextPageToken).Do()
	wantReason(t, err, 400, "invalid")
	_, err = c.Files.List().PageToken("not-a-token").Do()
	wantReason(t, err, 400, "invalid")

	if l, err := c.Files.List().PageSize(1000).Fields("files(id)").Do(); err != nil || len(l.Files) != 25 {
		t.Errorf("pageSize 1000 (the maximum): %v", err)
	}
	for _, size := range []int64{1001, 0, -1} {
		_, err := c.Files.List().PageSize(size).Do()
		ge := wantReason(t, err, 400, "invalid")
		if !strings.Contains(ge.Message, "[1, 1000]") {
			t.Errorf("pageSize %d: %q", size, ge.Message)
		}
	}
	if l, err := c.Files.List().PageSize(1).Fields("files(id)").Do(); err != nil || len(l.Files) != 1 {
		t.Errorf("pageSize 1: %v", err)
	}
}

func TestListDefaultAndPartialFields(t *testing.T) {
	e := newEnv(t)
	e.put(ann, drivesvc.FileSpec{Name: "a.pdf", Content: []byte("abc")})
	tok := e.token(ann)
	code, _, body := e.do("GET", e.srv.URL+"/drive/v3/files", tok, nil, nil)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	top := jsonKeys(t, body)
	if _, ok := top["kind"]; !ok || len(top) != 3 { // kind, incompleteSearch, files (no next page)
		t.Errorf("default list keys: %s", body)
	}
	if strings.Contains(string(body), `"size"`) || !strings.Contains(string(body), `"mimeType": "application/pdf"`) {
		t.Errorf("default file fields: %s", body)
	}
	code, _, body = e.do("GET", e.srv.URL+"/drive/v3/files?fields=files(id,size,capabilities/canDownload)", tok, nil, nil)
	if code != 200 || !strings.Contains(string(body), `"size": "3"`) || strings.Contains(string(body), `"name"`) ||
		!strings.Contains(string(body), `"canDownload": true`) || strings.Contains(string(body), `"canEdit"`) || strings.Contains(string(body), `"kind"`) {
		t.Errorf("partial list: %d %s", code, body)
	}
	code, _, body = e.do("GET", e.srv.URL+"/drive/v3/files?fields=files(nope)", tok, nil, nil)
	if code != 400 || !strings.Contains(string(body), "invalidParameter") {
		t.Errorf("bad nested field: %d %s", code, body)
	}
	code, _, body = e.do("GET", e.srv.URL+"/drive/v3/files?fields=*", tok, nil, nil)
	if code != 200 || !strings.Contains(string(body), `"sha256Checksum"`) {
		t.Errorf("fields=*: %d %s", code, body)
	}
}
