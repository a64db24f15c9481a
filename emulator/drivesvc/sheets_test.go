package drivesvc_test

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/api/sheets/v4"

	"github.com/drivemail/drivemail/emulator/drivesvc"
)

func TestSheetsCreateGetAndValues(t *testing.T) {
	e := newEnv(t)
	tok := e.token(ann)
	sc := e.sheetsClient(tok)
	ss, err := sc.Spreadsheets.Create(&sheets.Spreadsheet{
		Properties: &sheets.SpreadsheetProperties{Title: "Plan"},
		Sheets: []*sheets.Sheet{
			{Properties: &sheets.SheetProperties{Title: "Overview"}},
			{Properties: &sheets.SheetProperties{Title: "My tab", SheetId: 42}},
			{Properties: &sheets.SheetProperties{Title: "Third"}},
		},
	}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(ss.Sheets) != 3 || ss.Sheets[0].Properties.SheetId != 0 || ss.Sheets[1].Properties.SheetId != 42 ||
		ss.Sheets[2].Properties.SheetId <= 0 || ss.Sheets[2].Properties.Index != 2 || ss.Properties.Title != "Plan" {
		t.Fatalf("created %+v", ss.Sheets)
	}

	upd, err := sc.Spreadsheets.Values.Update(ss.SpreadsheetId, "'My tab'!A1:C2", &sheets.ValueRange{
		Values: [][]any{{"name", 12.5, true}, {"x"}},
	}).ValueInputOption("RAW").Do()
	if err != nil {
		t.Fatal(err)
	}
	if upd.UpdatedCells != 4 || upd.UpdatedRows != 2 || upd.UpdatedColumns != 3 || upd.UpdatedRange != "'My tab'!A1:C2" {
		t.Errorf("update response %+v", upd)
	}
	tests := []struct {
		rng       string
		wantRange string
		want      string
	}{
		{"My tab", "'My tab'!A1:C2", "[[name 12.5 TRUE] [x]]"},
		{"'My tab'!B1:C", "'My tab'!B1:C2", "[[12.5 TRUE]]"},
		{"'My tab'!A2", "'My tab'!A2", "[[x]]"},
		{"'My tab'!C2:A1", "'My tab'!A1:C2", "[[name 12.5 TRUE] [x]]"}, // reversed corners
		{"'My tab'!2:2", "'My tab'!A2:C2", "[[x]]"},
		{"Overview!A1:B5", "Overview!A1:B5", "[]"},
	}
	for _, tt := range tests {
		vr, err := sc.Spreadsheets.Values.Get(ss.SpreadsheetId, tt.rng).Do()
		if err != nil {
			t.Errorf("get %s: %v", tt.rng, err)
			continue
		}
		if got := fmt.Sprint(vr.Values); got != tt.want || vr.Range != tt.wantRange {
			t.Errorf("get %s = %s %s, want %s %s", tt.rng, vr.Range, got, tt.wantRange, tt.want)
		}
	}
	cols, err := sc.Spreadsheets.Values.Get(ss.SpreadsheetId, "'My tab'!A1:C2").MajorDimension("COLUMNS").Do()
	if err != nil || fmt.Sprint(cols.Values) != "[[name x] [12.5] [TRUE]]" {
		t.Errorf("COLUMNS = %v %v", cols, err)
	}
	// Written by columns: a short column leaves its cells below blank.
	if _, err := sc.Spreadsheets.Values.Update(ss.SpreadsheetId, "Third!A1:C3", &sheets.ValueRange{
		MajorDimension: "COLUMNS", Values: [][]any{{"a1", "a2"}, {"b1"}, {"c1", "c2", "c3"}},
	}).ValueInputOption("RAW").Do(); err != nil {
		t.Fatal(err)
	}
	if rows, err := sc.Spreadsheets.Values.Get(ss.SpreadsheetId, "Third").Do(); err != nil || fmt.Sprint(rows.Values) != "[[a1 b1 c1] [a2  c2] [  c3]]" {
		t.Errorf("written by COLUMNS, read by rows: %v %v", rows, err)
	}

	// Errors in Sheets' own shape.
	_, err = sc.Spreadsheets.Values.Update(ss.SpreadsheetId, "Overview!A1", &sheets.ValueRange{Values: [][]any{{"a"}}}).Do()
	if ge := apiErr(t, err); ge.Code != 400 || !strings.Contains(ge.Message, "valueInputOption") {
		t.Errorf("no valueInputOption: %v", err)
	}
	_, err = sc.Spreadsheets.Values.Update(ss.SpreadsheetId, "Overview!A1:A1", &sheets.ValueRange{Values: [][]any{{"a", "b"}}}).ValueInputOption("RAW").Do()
	if ge := apiErr(t, err); ge.Code != 400 {
		t.Errorf("writing past the range: %v", err)
	}
	for _, bad := range []string{"Nope!A1", "Overview!A0", "Overview!1A", "'Overview!A1"} {
		_, err = sc.Spreadsheets.Values.Get(ss.SpreadsheetId, bad).Do()
		if ge := apiErr(t, err); ge.Code != 400 || !strings.Contains(ge.Message, "Unable to parse range") {
			t.Errorf("range %s: %v", bad, err)
		}
	}
	_, err = e.sheetsClient(e.token(bob)).Spreadsheets.Get(ss.SpreadsheetId).Do()
	if ge := apiErr(t, err); ge.Code != 404 || ge.Message != "Requested entity was not found." {
		t.Errorf("another user's spreadsheet: %v", err)
	}
	doc := e.put(ann, drivesvc.FileSpec{Name: "Doc", Kind: drivesvc.KindDoc, DocText: "x"})
	_, err = sc.Spreadsheets.Get(doc.ID).Do()
	if ge := apiErr(t, err); ge.Code != 400 {
		t.Errorf("spreadsheets.get of a Doc: %v", err)
	}

	// The spreadsheet is one Drive file, and its tab exports.
	meta, err := e.driveClient(tok).Files.Get(ss.SpreadsheetId).Fields("mimeType,name").Do()
	if err != nil || meta.MimeType != drivesvc.MimeSheet || meta.Name != "Plan" {
		t.Errorf("drive view of the spreadsheet: %+v %v", meta, err)
	}
	code, _, body := e.do("GET", e.srv.URL+"/spreadsheets/export?id="+ss.SpreadsheetId+"&exportFormat=csv&gid=42", tok, nil, nil)
	if code != 200 || string(body) != "name,12.5,TRUE\r\nx\r\n" {
		t.Errorf("export of the updated tab: %d %q", code, body)
	}

	// batchUpdate addSheet.
	bu, err := sc.Spreadsheets.BatchUpdate(ss.SpreadsheetId, &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
		{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "Fourth"}}},
	}}).Do()
	if err != nil || len(bu.Replies) != 1 || bu.Replies[0].AddSheet.Properties.Index != 3 {
		t.Fatalf("addSheet: %+v %v", bu, err)
	}
	got, err := sc.Spreadsheets.Get(ss.SpreadsheetId).Fields("sheets.properties.title").Do()
	if err != nil || len(got.Sheets) != 4 || got.Sheets[3].Properties.Title != "Fourth" || got.Sheets[3].Properties.SheetId != 0 {
		t.Errorf("after addSheet: %+v %v", got, err)
	}
	if got.SpreadsheetId != "" {
		t.Errorf("fields not honoured: spreadsheetId %q returned", got.SpreadsheetId)
	}
}

func TestSheetsGridData(t *testing.T) {
	e := newEnv(t)
	f := threeTabSheet(t, e)
	ss, err := e.sheetsClient(e.token(ann)).Spreadsheets.Get(f.ID).IncludeGridData(true).Do()
	if err != nil {
		t.Fatal(err)
	}
	cell := ss.Sheets[1].Data[0].RowData[2].Values[1]
	if cell.FormattedValue != "400, approx" || *cell.UserEnteredValue.StringValue != "400, approx" {
		t.Errorf("grid cell = %+v", cell)
	}
}

// TestSheetsGrid: values.update writes only inside a tab's grid (1000 rows
// by 26 columns unless its data made it bigger) and a spreadsheet's grids
// hold at most ten million cells, so no request can make the emulator
// hold rows for a cell placed millions of rows down.
func TestSheetsGrid(t *testing.T) {
	e := newEnv(t)
	sc := e.sheetsClient(e.token(ann))
	rows := make([]*sheets.RowData, 1500)
	for i := range rows {
		rows[i] = &sheets.RowData{Values: []*sheets.CellData{{UserEnteredValue: &sheets.ExtendedValue{StringValue: &[]string{"r"}[0]}}}}
	}
	ss, err := sc.Spreadsheets.Create(&sheets.Spreadsheet{Sheets: []*sheets.Sheet{
		{Properties: &sheets.SheetProperties{Title: "Small"}},
		{Properties: &sheets.SheetProperties{Title: "Tall"}, Data: []*sheets.GridData{{RowData: rows}}},
	}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if g := ss.Sheets[1].Properties.GridProperties; g.RowCount != 1500 || g.ColumnCount != 26 {
		t.Errorf("grid of a tab made with 1500 rows: %+v", g)
	}
	write := func(rng string) error {
		_, err := sc.Spreadsheets.Values.Update(ss.SpreadsheetId, rng, &sheets.ValueRange{Values: [][]any{{"x"}}}).ValueInputOption("RAW").Do()
		return err
	}
	for _, rng := range []string{"Small!Z1000", "Tall!A1500", "Tall!Z1"} {
		if err := write(rng); err != nil {
			t.Errorf("write at the grid's edge %s: %v", rng, err)
		}
	}
	for rng, want := range map[string]string{
		"Small!A1001":    "Range (Small!A1001) exceeds grid limits. Max rows: 1000, max columns: 26",
		"Small!AA1":      "Range (Small!AA1) exceeds grid limits. Max rows: 1000, max columns: 26",
		"Tall!A1501":     "Range (Tall!A1501) exceeds grid limits. Max rows: 1500, max columns: 26",
		"Small!A9999990": "Range (Small!A9999990) exceeds grid limits. Max rows: 1000, max columns: 26",
	} {
		if ge := apiErr(t, write(rng)); ge.Code != 400 || ge.Message != want {
			t.Errorf("write past the grid %s: %d %q, want %q", rng, ge.Code, ge.Message, want)
		}
	}

	// Data placed far out at creation is refused before it is laid out.
	_, err = sc.Spreadsheets.Create(&sheets.Spreadsheet{Sheets: []*sheets.Sheet{
		{Data: []*sheets.GridData{{StartRow: 9_999_000, RowData: rows[:1]}}},
	}}).Do()
	if ge := apiErr(t, err); ge.Code != 400 || !strings.Contains(ge.Message, "above the limit of 10000000 cells") {
		t.Errorf("create with a cell 10M rows down: %v", err)
	}

	// Two tabs here are 26,000 + 39,000 cells; 382 more default tabs fit
	// (9,997,000 cells), the next does not.
	add := func(n int) error {
		var reqs []*sheets.Request
		for range n {
			reqs = append(reqs, &sheets.Request{AddSheet: &sheets.AddSheetRequest{}})
		}
		_, err := sc.Spreadsheets.BatchUpdate(ss.SpreadsheetId, &sheets.BatchUpdateSpreadsheetRequest{Requests: reqs}).Do()
		return err
	}
	if err := add(382); err != nil {
		t.Fatalf("382 tabs within ten million cells: %v", err)
	}
	if ge := apiErr(t, add(1)); ge.Code != 400 || !strings.Contains(ge.Message, "above the limit of 10000000 cells") {
		t.Errorf("one tab past ten million cells: %v", ge)
	}
}

func TestAboutGet(t *testing.T) {
	e := newEnv(t)
	e.put(ann, drivesvc.FileSpec{Name: "a.bin", Content: make([]byte, 1234)})
	c := e.driveClient(e.token(ann))
	_, err := c.About.Get().Do()
	wantReason(t, err, 400, "required")
	a, err := c.About.Get().Fields("user,storageQuota,importFormats,exportFormats").Do()
	if err != nil {
		t.Fatal(err)
	}
	if a.User.EmailAddress != ann || !a.User.Me || a.StorageQuota.Usage != 1234 {
		t.Errorf("about = %+v %+v", a.User, a.StorageQuota)
	}
	if got := a.ExportFormats[drivesvc.MimeSheet]; len(got) != 7 {
		t.Errorf("sheet exports %v", got)
	}
	if got := a.ImportFormats["text/csv"]; len(got) != 1 || got[0] != drivesvc.MimeSheet {
		t.Errorf("csv imports %v", got)
	}
	if a.MaxUploadSize != 0 {
		t.Errorf("maxUploadSize returned though not asked for")
	}
}

func TestEmulatorControlRoutes(t *testing.T) {
	e := newEnv(t)
	code, _, body := e.do("POST", e.srv.URL+"/_emulator/drives", "", nil, []byte(`{"name":"Ops","members":["ann@example.com"]}`))
	if code != 200 {
		t.Fatalf("drive: %d %s", code, body)
	}
	driveID := string(jsonKeys(t, body)["id"])
	driveID = strings.Trim(driveID, `"`)

	code, _, body = e.do("POST", e.srv.URL+"/_emulator/files", "", nil, []byte(`{"owner":"ann@example.com","name":"Sheet","kind":"sheet",
		"tabs":[{"title":"A","rows":[["1","2"]]},{"title":"B","sheet_id":7,"rows":[["x"]]}]}`))
	if code != 200 || !strings.Contains(string(body), `"sheet_id": 7`) {
		t.Fatalf("json put: %d %s", code, body)
	}
	code, _, body = e.do("POST", e.srv.URL+"/_emulator/files", "", nil, []byte(`{"owner":"ann@example.com","name":"k.txt","content_text":"hello",
		"link_shared":true,"resource_key":"auto","shared_drive":"`+driveID+`"}`))
	if code != 200 || !strings.Contains(string(body), `"resource_key": "0-`) || !strings.Contains(string(body), driveID) {
		t.Fatalf("keyed put: %d %s", code, body)
	}
	id := strings.Trim(string(jsonKeys(t, body)["id"]), `"`)
	code, _, content := e.do("GET", e.srv.URL+"/_emulator/files/"+id+"/content", "", nil, nil)
	if code != 200 || string(content) != "hello" {
		t.Errorf("content: %d %q", code, content)
	}

	// multipart/form-data streams the file part.
	var mp strings.Builder
	mp.WriteString("--B\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n{\"owner\":\"bob@example.com\"}\r\n")
	mp.WriteString("--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"logo.png\"\r\nContent-Type: image/png\r\n\r\n\x89PNG-bytes\r\n--B--\r\n")
	code, _, body = e.do("POST", e.srv.URL+"/_emulator/files", "", map[string]string{"Content-Type": "multipart/form-data; boundary=B"}, []byte(mp.String()))
	if code != 200 || !strings.Contains(string(body), `"mime_type": "image/png"`) || !strings.Contains(string(body), `"size": 10`) || !strings.Contains(string(body), `"name": "logo.png"`) {
		t.Errorf("multipart put: %d %s", code, body)
	}
	code, _, body = e.do("GET", e.srv.URL+"/_emulator/files?owner=bob@example.com", "", nil, nil)
	if code != 200 || !strings.Contains(string(body), "logo.png") {
		t.Errorf("list: %d %s", code, body)
	}

	for _, bad := range []string{`{"name":"x"}`, `{"owner":"ann@example.com","kind":"spaceship"}`, `{"owner":"ann@example.com","content_base64":"!!"}`, `not json`} {
		if code, _, body := e.do("POST", e.srv.URL+"/_emulator/files", "", nil, []byte(bad)); code != 400 {
			t.Errorf("%s: %d %s", bad, code, body)
		}
	}
}

// TestValuesRenderOptions: values.get takes the discovery document's
// render options and refuses others with Sheets' 400.
func TestValuesRenderOptions(t *testing.T) {
	e := newEnv(t)
	sheet := threeTabSheet(t, e)
	s := e.sheetsClient(e.token(ann))
	got, err := s.Spreadsheets.Values.Get(sheet.ID, "'Q1 costs'!A2:B3").ValueRenderOption("FORMATTED_VALUE").Do()
	if err != nil || len(got.Values) != 2 || got.Values[1][1] != "400, approx" {
		t.Fatalf("FORMATTED_VALUE: %+v %v", got, err)
	}
	for _, call := range []*sheets.SpreadsheetsValuesGetCall{
		s.Spreadsheets.Values.Get(sheet.ID, "Summary").ValueRenderOption("PRETTY"),
		s.Spreadsheets.Values.Get(sheet.ID, "Summary").DateTimeRenderOption("ISO"),
	} {
		_, err := call.Do()
		if ge := apiErr(t, err); ge.Code != 400 || !strings.Contains(ge.Message, "Invalid value at") {
			t.Errorf("bad option: %d %s", ge.Code, ge.Message)
		}
	}
}
