package drivesvc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/sheets/v4"

	"github.com/drivemail/drivemail/emulator/drivesvc"
)

// metaOfSize is a files.create JSON body of exactly n bytes.
func metaOfSize(n int) []byte {
	prefix, suffix := `{"name":"m","description":"`, `"}`
	return []byte(prefix + strings.Repeat("d", n-len(prefix)-len(suffix)) + suffix)
}

func TestCreateMetadataRefusals(t *testing.T) { synctest.Test(t, testCreateMetadataRefusals) }

func testCreateMetadataRefusals(t *testing.T) {
	e := newBubbleEnv(t)
	tok := e.token(ann)
	url := e.srv.URL + "/drive/v3/files"
	json := map[string]string{"Content-Type": "application/json"}
	tests := []struct {
		name   string
		body   []byte
		code   int
		reason string
	}{
		{"metadata of exactly 1 MiB", metaOfSize(1 << 20), 200, ""},
		{"metadata one byte over 1 MiB", metaOfSize(1<<20 + 1), 400, "badRequest"},
		{"not JSON", []byte(`{"name":`), 400, "parseError"},
		{"name of exactly 32 KiB", []byte(`{"name":"` + strings.Repeat("n", 32<<10) + `"}`), 200, ""},
		{"name over 32 KiB", []byte(`{"name":"` + strings.Repeat("n", 32<<10+1) + `"}`), 400, "invalid"},
		{"malformed id", []byte(`{"name":"x","id":"bad id!"}`), 400, "invalid"},
		{"malformed time", []byte(`{"name":"x","modifiedTime":"yesterday"}`), 400, "invalid"},
		{"shortcut without a target", []byte(`{"name":"x","mimeType":"application/vnd.google-apps.shortcut"}`), 400, "badRequest"},
		{"shortcut to a hidden file", []byte(`{"name":"x","mimeType":"application/vnd.google-apps.shortcut","shortcutDetails":{"targetId":"1Hidden0000000000"}}`), 404, "notFound"},
		{"unknown field selection", nil, 400, "invalidParameter"},
	}
	for _, tt := range tests {
		u := url
		body := tt.body
		if body == nil {
			u, body = url+"?fields=nope", []byte(`{"name":"x"}`)
		}
		code, _, resp := e.do("POST", u, tok, json, body)
		if code != tt.code || (tt.reason != "" && !strings.Contains(string(resp), `"reason": "`+tt.reason+`"`)) {
			t.Errorf("%s: %d %.300s", tt.name, code, resp)
		}
	}
	// An id taken is a conflict.
	f := e.put(ann, drivesvc.FileSpec{Name: "x", ID: "1TakenId000000000"})
	code, _, resp := e.do("POST", url, tok, json, []byte(`{"name":"y","id":"`+f.ID+`"}`))
	if code != 409 {
		t.Errorf("taken id: %d %s", code, resp)
	}
	_, err := e.driveClient(tok).Files.Update(f.ID, &drive.File{}).RemoveParents("root").Do()
	wantReason(t, err, 400, "badRequest")
	// files.update reads its metadata the same way.
	for _, tt := range []struct {
		name   string
		body   []byte
		reason string
	}{
		{"update with metadata one byte over 1 MiB", metaOfSize(1<<20 + 1), "badRequest"},
		{"update with metadata not JSON", []byte(`{"name":`), "parseError"},
	} {
		code, _, resp := e.do("PATCH", url+"/"+f.ID, tok, json, tt.body)
		if code != 400 || !strings.Contains(string(resp), `"reason": "`+tt.reason+`"`) {
			t.Errorf("%s: %d %.300s", tt.name, code, resp)
		}
	}
}

func TestListParameterLimits(t *testing.T) {
	e := newEnv(t)
	e.put(ann, drivesvc.FileSpec{Name: "a", Content: []byte("a")})
	c := e.driveClient(e.token(ann))
	atQ := "name contains '" + strings.Repeat("q", 64<<10-len("name contains ''")) + "'"
	if _, err := c.Files.List().Q(atQ).Do(); err != nil {
		t.Errorf("q of exactly 64 KiB: %v", err)
	}
	_, err := c.Files.List().Q(atQ + " ").Do()
	wantReason(t, err, 400, "invalid")

	atFields := "files(id" + strings.Repeat(" ", 8<<10-len("files(id)")) + ")"
	if _, err := c.Files.List().Fields(googleapi.Field(atFields)).Do(); err != nil {
		t.Errorf("fields of exactly 8 KiB: %v", err)
	}
	_, err = c.Files.List().Fields(googleapi.Field(atFields + " ")).Do()
	wantReason(t, err, 400, "invalidParameter")

	_, err = c.Files.List().Spaces("photos").Do()
	wantReason(t, err, 400, "invalid")
	l, err := c.Files.List().Spaces("appDataFolder").Fields("files(id)").Do()
	if err != nil || len(l.Files) != 0 {
		t.Errorf("appDataFolder: %+v %v", l, err)
	}
	_, err = c.Files.List().OrderBy("name sideways").Do()
	wantReason(t, err, 400, "invalid")
	if _, err := c.Files.List().OrderBy("name asc, createdTime desc").Do(); err != nil {
		t.Errorf("orderBy with asc and desc: %v", err)
	}
}

func TestPutFileRefusals(t *testing.T) {
	e := newEnv(t)
	tests := map[string]struct {
		owner string
		spec  drivesvc.FileSpec
	}{
		"owner not an email":           {"ann", drivesvc.FileSpec{Name: "x"}},
		"sharee not an email":          {ann, drivesvc.FileSpec{Name: "x", SharedWith: []string{"bob"}}},
		"bad id":                       {ann, drivesvc.FileSpec{Name: "x", ID: "no"}},
		"name too long":                {ann, drivesvc.FileSpec{Name: strings.Repeat("n", 32<<10+1)}},
		"negative fill":                {ann, drivesvc.FileSpec{Kind: drivesvc.KindDoc, DocFillBytes: -1}},
		"fill over 1 GiB":              {ann, drivesvc.FileSpec{Kind: drivesvc.KindDoc, DocFillBytes: 1<<30 + 1}},
		"tabs with one title":          {ann, drivesvc.FileSpec{Kind: drivesvc.KindSheet, Tabs: []drivesvc.Tab{{Title: "A"}, {Title: "a"}}}},
		"negative sheet id":            {ann, drivesvc.FileSpec{Kind: drivesvc.KindSheet, Tabs: []drivesvc.Tab{{Title: "A", SheetID: -4}}}},
		"shortcut without target":      {ann, drivesvc.FileSpec{Kind: drivesvc.KindShortcut}},
		"shared drive not a member":    {bob, drivesvc.FileSpec{Name: "x", SharedDrive: "0ANoSuchDriveUk9PVA"}},
		"two parents":                  {ann, drivesvc.FileSpec{Name: "x", Parents: []string{"root", "root"}}},
		"parent owned by someone else": {ann, drivesvc.FileSpec{Name: "x", Parents: []string{e.drive.RootID(bob)}}},
	}
	for name, tt := range tests {
		if _, err := e.drive.PutFile(tt.owner, tt.spec); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := e.drive.PutSharedDrive(" "); err == nil {
		t.Error("a shared drive without a name was made")
	}
	if _, err := e.drive.PutSharedDrive("T", "not-an-email"); err == nil {
		t.Error("a shared drive with a bad member was made")
	}
	// A filled Doc reaches its size, and one byte of fill is a legal edge.
	big := e.put(ann, drivesvc.FileSpec{Name: "Fill", Kind: drivesvc.KindDoc, DocFillBytes: 300 << 10})
	if big.BodyBytes < 300<<10 || big.BodyBytes > 300<<10+1024 {
		t.Errorf("filled body %d bytes", big.BodyBytes)
	}
}

func TestSeedFileSizeLimit(t *testing.T) {
	for _, tt := range []struct {
		size int64
		ok   bool
	}{{64 << 20, true}, {64<<20 + 1, false}} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "a@x.com"), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, "a@x.com", "big.bin"))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(tt.size); err != nil { // sparse: cheap to make
			t.Fatal(err)
		}
		f.Close()
		e := newEnv(t)
		err = e.emu.Seed(dir)
		if (err == nil) != tt.ok {
			t.Errorf("%d bytes: err = %v", tt.size, err)
		}
	}
}

func TestSheetsRefusals(t *testing.T) {
	e := newEnv(t)
	f := threeTabSheet(t, e)
	tok := e.token(ann)
	base := e.srv.URL + "/v4/spreadsheets/"
	tests := []struct {
		name, method, url, body string
		code                    int
	}{
		{"create with bad JSON", "POST", e.srv.URL + "/v4/spreadsheets", "{", 400},
		{"create with a negative startRow", "POST", e.srv.URL + "/v4/spreadsheets", `{"sheets":[{"data":[{"startRow":-1}]}]}`, 400},
		{"create with two tabs of one title", "POST", e.srv.URL + "/v4/spreadsheets", `{"sheets":[{"properties":{"title":"A"}},{"properties":{"title":"A"}}]}`, 400},
		{"update with bad JSON", "PUT", base + f.ID + "/values/Summary!A1?valueInputOption=RAW", "{", 400},
		{"update with an unknown valueInputOption", "PUT", base + f.ID + "/values/Summary!A1?valueInputOption=FORMATTED", `{"values":[["a"]]}`, 400},
		{"batchUpdate with another request", "POST", base + f.ID + ":batchUpdate", `{"requests":[{"deleteSheet":{"sheetId":0}}]}`, 400},
		{"batchUpdate adding a taken title", "POST", base + f.ID + ":batchUpdate", `{"requests":[{"addSheet":{"properties":{"title":"summary"}}}]}`, 400},
		{"another action", "POST", base + f.ID + ":copyTo", `{}`, 404},
		{"fields syntax", "GET", base + f.ID + "?fields=sheets(", "", 400},
	}
	for _, tt := range tests {
		code, _, body := e.do(tt.method, tt.url, tok, map[string]string{"Content-Type": "application/json"}, []byte(tt.body))
		if code != tt.code || !strings.Contains(string(body), `"status"`) && code != 404 {
			t.Errorf("%s: %d %s", tt.name, code, body)
		}
	}
	// A reader cannot write.
	shared := e.put(ann, drivesvc.FileSpec{Name: "S", Kind: drivesvc.KindSheet, SharedWith: []string{bob}})
	_, err := e.sheetsClient(e.token(bob)).Spreadsheets.Values.Update(shared.ID, "Sheet1!A1", &sheets.ValueRange{Values: [][]any{{"x"}}}).ValueInputOption("RAW").Do()
	if ge := apiErr(t, err); ge.Code != 403 {
		t.Errorf("reader writing: %v", err)
	}
	if v, err := e.sheetsClient(e.token(bob)).Spreadsheets.Values.Get(shared.ID, "Sheet1").Do(); err != nil || len(v.Values) != 0 {
		t.Errorf("reader reading: %+v %v", v, err)
	}
}

func TestControlRouteRefusals(t *testing.T) {
	e := newEnv(t)
	doc := e.put(ann, drivesvc.FileSpec{Name: "D", Kind: drivesvc.KindDoc})
	tests := []struct {
		name, method, url, ctype, body string
		code                           int
	}{
		{"list without owner", "GET", "/_emulator/files", "", "", 400},
		{"content of a Doc", "GET", "/_emulator/files/" + doc.ID + "/content", "", "", 404},
		{"unknown file", "GET", "/_emulator/files/1nope0000000000", "", "", 404},
		{"drive with bad JSON", "POST", "/_emulator/drives", "application/json", "[", 400},
		{"drive without a name", "POST", "/_emulator/drives", "application/json", `{"name":""}`, 400},
		{"metadata part not JSON", "POST", "/_emulator/files", "multipart/form-data; boundary=B",
			"--B\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n{oops\r\n--B--\r\n", 400},
		{"both contents", "POST", "/_emulator/files", "application/json", `{"owner":"ann@example.com","content_text":"a","content_base64":"YQ=="}`, 400},
		{"bad time", "POST", "/_emulator/files", "application/json", `{"owner":"ann@example.com","modified_time":"soon"}`, 400},
	}
	for _, tt := range tests {
		code, _, body := e.do(tt.method, e.srv.URL+tt.url, "", map[string]string{"Content-Type": tt.ctype}, []byte(tt.body))
		if code != tt.code {
			t.Errorf("%s: %d %s", tt.name, code, body)
		}
		var v map[string]any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Errorf("%s: not JSON: %s", tt.name, body)
		}
	}
}

func TestJSONBodyLimitAtTheEdge(t *testing.T) { synctest.Test(t, testJSONBodyLimitAtTheEdge) }

func testJSONBodyLimitAtTheEdge(t *testing.T) {
	e := newBubbleEnv(t)
	body := func(n int) []byte {
		prefix, suffix := `{"owner":"ann@example.com","name":"pad.txt","content_text":"`, `"}`
		return []byte(prefix + strings.Repeat("p", n-len(prefix)-len(suffix)) + suffix)
	}
	if code, _, resp := e.do("POST", e.srv.URL+"/_emulator/files", "", nil, body(16<<20)); code != 200 {
		t.Errorf("16 MiB body: %d %.200s", code, resp)
	}
	if code, _, _ := e.do("POST", e.srv.URL+"/_emulator/files", "", nil, body(16<<20+1)); code != 400 {
		t.Errorf("16 MiB + 1 body: %d", code)
	}
}
