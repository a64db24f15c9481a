package drivesvc

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// Sheets v4 answers errors in the newer shape: code, message, status, no
// "errors" list.
type sheetsError struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
	} `json:"error"`
}

func writeSheetsError(w http.ResponseWriter, code int, message string) {
	var e sheetsError
	e.Error.Code, e.Error.Message = code, message
	e.Error.Status = map[int]string{400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 500: "INTERNAL"}[code]
	core.WriteJSON(w, code, e)
}

const msgNotFound = "Requested entity was not found."

func (s *Service) registerSheets(mux *http.ServeMux) {
	mux.HandleFunc("POST /v4/spreadsheets", s.handleSheetsCreate)
	mux.HandleFunc("GET /v4/spreadsheets/{spreadsheetId}", s.handleSheetsGet)
	mux.HandleFunc("POST /v4/spreadsheets/{spreadsheetId}", s.handleSheetsBatchUpdate)
	mux.HandleFunc("GET /v4/spreadsheets/{spreadsheetId}/values/{range}", s.handleValuesGet)
	mux.HandleFunc("PUT /v4/spreadsheets/{spreadsheetId}/values/{range}", s.handleValuesUpdate)
}

// sheetsCaller authorizes a Sheets call. Sheets reaches shared-drive files
// of members without supportsAllDrives.
func (s *Service) sheetsCaller(w http.ResponseWriter, r *http.Request, scopes []string) (caller, bool) {
	c, ok := s.authorize(w, r, scopes, sheetsBroaderScopes)
	c.allDrives = true
	return c, ok
}

// spreadsheet finds a spreadsheet c may see, or writes Sheets' error.
// The caller holds s.mu.
func (s *Service) spreadsheet(w http.ResponseWriter, c caller, id string) *file {
	f := s.files[id]
	if !s.visible(c, f) {
		writeSheetsError(w, http.StatusNotFound, msgNotFound)
		return nil
	}
	if f.kind != KindSheet {
		writeSheetsError(w, http.StatusBadRequest, "This operation is not supported for this document")
		return nil
	}
	return f
}

// spreadsheetResource is the Spreadsheet resource of f; grid adds each
// tab's cells. The caller holds s.mu.
func spreadsheetResource(f *file, origin string, grid bool) map[string]any {
	sheets := []map[string]any{}
	for i, t := range f.tabs {
		rows, cols := extent(t.rows)
		sh := map[string]any{"properties": map[string]any{
			"sheetId": t.id, "title": t.title, "index": i, "sheetType": "GRID",
			"gridProperties": map[string]any{"rowCount": max(rows, 1000), "columnCount": max(cols, 26)},
		}}
		if grid {
			rowData := []map[string]any{}
			for _, row := range t.rows {
				vals := []map[string]any{}
				for _, cell := range row {
					vals = append(vals, map[string]any{"userEnteredValue": map[string]any{"stringValue": cell}, "formattedValue": cell})
				}
				rowData = append(rowData, map[string]any{"values": vals})
			}
			sh["data"] = []map[string]any{{"startRow": 0, "startColumn": 0, "rowData": rowData}}
		}
		sheets = append(sheets, sh)
	}
	return map[string]any{
		"spreadsheetId": f.id,
		"properties": map[string]any{
			"title": f.name, "locale": "en_US", "autoRecalc": "ON_CHANGE", "timeZone": "Etc/GMT",
		},
		"sheets":         sheets,
		"spreadsheetUrl": origin + "/spreadsheets/d/" + f.id + "/edit",
	}
}

// sheetsMask parses Sheets' fields; a syntax error is Sheets' 400.
func sheetsMask(w http.ResponseWriter, raw string) (mask, bool) {
	if strings.TrimSpace(raw) == "" {
		return nil, true
	}
	m, err := parseMask(raw)
	if err != nil {
		writeSheetsError(w, http.StatusBadRequest, "Invalid field selection: "+echo(raw))
		return nil, false
	}
	if _, all := m["*"]; all {
		return nil, true
	}
	return m, true
}

// createRequest is the part of a Spreadsheet resource create reads.
type createRequest struct {
	Properties struct {
		Title string `json:"title"`
	} `json:"properties"`
	Sheets []struct {
		Properties struct {
			SheetID *int64 `json:"sheetId"`
			Title   string `json:"title"`
		} `json:"properties"`
		Data []struct {
			StartRow    int `json:"startRow"`
			StartColumn int `json:"startColumn"`
			RowData     []struct {
				Values []struct {
					UserEnteredValue map[string]any `json:"userEnteredValue"`
				} `json:"values"`
			} `json:"rowData"`
		} `json:"data"`
	} `json:"sheets"`
}

func (s *Service) handleSheetsCreate(w http.ResponseWriter, r *http.Request) {
	c, ok := s.sheetsCaller(w, r, scopesSheetsWrite)
	if !ok {
		return
	}
	var req createRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxJSONBody)).Decode(&req); err != nil && err != io.EOF {
		writeSheetsError(w, http.StatusBadRequest, "Invalid JSON payload received.")
		return
	}
	m, ok := sheetsMask(w, r.URL.Query().Get("fields"))
	if !ok {
		return
	}
	spec := FileSpec{Kind: KindSheet, Name: req.Properties.Title, ClientID: c.client}
	if spec.Name == "" {
		spec.Name = "Untitled spreadsheet"
	}
	for i, sh := range req.Sheets {
		t := Tab{Title: sh.Properties.Title}
		if sh.Properties.SheetID != nil {
			t.SheetID = *sh.Properties.SheetID
		} else if i > 0 {
			t.SheetID = newSheetID()
		}
		for _, d := range sh.Data {
			if d.StartRow < 0 || d.StartColumn < 0 || d.StartRow > maxGridIndex || d.StartColumn > maxGridIndex {
				writeSheetsError(w, http.StatusBadRequest, "Invalid data[].startRow or startColumn.")
				return
			}
			for ri, row := range d.RowData {
				var vals []any
				for _, v := range row.Values {
					vals = append(vals, userValue(v.UserEnteredValue))
				}
				var err error
				if t.Rows, err = writeCells(t.Rows, d.StartRow+ri, d.StartColumn, [][]any{vals}); err != nil {
					writeSheetsError(w, http.StatusBadRequest, err.Error())
					return
				}
			}
		}
		spec.Tabs = append(spec.Tabs, t)
	}
	f, aerr := s.buildChecked(spec)
	if aerr != nil {
		writeSheetsError(w, http.StatusBadRequest, aerr.message)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if aerr := s.place(c.email, f, nil, ""); aerr != nil {
		writeSheetsError(w, aerr.code, aerr.message)
		return
	}
	core.WriteJSON(w, http.StatusOK, m.apply(spreadsheetResource(f, core.Origin(r), false)))
}

// userValue reads an ExtendedValue as the text the emulator stores.
func userValue(v map[string]any) any {
	for _, k := range []string{"stringValue", "numberValue", "boolValue", "formulaValue"} {
		if x, ok := v[k]; ok {
			return x
		}
	}
	return ""
}

func (s *Service) handleSheetsGet(w http.ResponseWriter, r *http.Request) {
	c, ok := s.sheetsCaller(w, r, scopesSheetsRead)
	if !ok {
		return
	}
	m, ok := sheetsMask(w, r.URL.Query().Get("fields"))
	if !ok {
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	f := s.spreadsheet(w, c, r.PathValue("spreadsheetId"))
	if f == nil {
		return
	}
	core.WriteJSON(w, http.StatusOK, m.apply(spreadsheetResource(f, core.Origin(r), boolParam(r.URL.Query().Get("includeGridData")))))
}

// handleSheetsBatchUpdate serves spreadsheets.batchUpdate
// (POST …/{id}:batchUpdate) for addSheet requests.
func (s *Service) handleSheetsBatchUpdate(w http.ResponseWriter, r *http.Request) {
	id, action, _ := strings.Cut(r.PathValue("spreadsheetId"), ":")
	if action != "batchUpdate" {
		writeSheetsError(w, http.StatusNotFound, "The emulator serves spreadsheets.batchUpdate only at this path.")
		return
	}
	c, ok := s.sheetsCaller(w, r, scopesSheetsWrite)
	if !ok {
		return
	}
	var req struct {
		Requests []struct {
			AddSheet *struct {
				Properties struct {
					SheetID *int64 `json:"sheetId"`
					Title   string `json:"title"`
				} `json:"properties"`
			} `json:"addSheet"`
		} `json:"requests"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxJSONBody)).Decode(&req); err != nil {
		writeSheetsError(w, http.StatusBadRequest, "Invalid JSON payload received.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.spreadsheet(w, c, id)
	if f == nil {
		return
	}
	if _, aerr := s.editable(c, id); aerr != nil {
		writeSheetsError(w, http.StatusForbidden, "The caller does not have permission")
		return
	}
	tabs := slices.Clone(f.tabs)
	var replies []map[string]any
	for _, rq := range req.Requests {
		if rq.AddSheet == nil {
			writeSheetsError(w, http.StatusBadRequest, "The emulator's batchUpdate supports addSheet requests only.")
			return
		}
		p := rq.AddSheet.Properties
		t := &tab{id: newSheetID(), title: p.Title}
		if p.SheetID != nil {
			t.id = *p.SheetID
		}
		if t.title == "" {
			t.title = fmt.Sprintf("Sheet%d", len(tabs)+1)
		}
		for _, o := range tabs {
			if o.id == t.id || strings.EqualFold(o.title, t.title) {
				writeSheetsError(w, http.StatusBadRequest, "Invalid requests[0].addSheet: A sheet with the name \""+echo(t.title)+"\" or id already exists.")
				return
			}
		}
		tabs = append(tabs, t)
		replies = append(replies, map[string]any{"addSheet": map[string]any{"properties": map[string]any{
			"sheetId": t.id, "title": t.title, "index": len(tabs) - 1, "sheetType": "GRID"}}})
	}
	f.tabs = tabs
	f.modified = s.now()
	f.version++
	core.WriteJSON(w, http.StatusOK, map[string]any{"spreadsheetId": f.id, "replies": replies})
}

func (s *Service) handleValuesGet(w http.ResponseWriter, r *http.Request) {
	c, ok := s.sheetsCaller(w, r, scopesSheetsRead)
	if !ok {
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	f := s.spreadsheet(w, c, r.PathValue("spreadsheetId"))
	if f == nil {
		return
	}
	raw := r.PathValue("range")
	g, err := parseA1(raw, f.tabs)
	if err != nil {
		writeSheetsError(w, http.StatusBadRequest, "Unable to parse range: "+echo(raw))
		return
	}
	nRows, nCols := extent(g.tab.rows)
	endRow, endCol := g.endRow, g.endCol
	if endRow < 0 {
		endRow = max(nRows, g.startRow+1)
	}
	if endCol < 0 {
		endCol = max(nCols, g.startCol+1)
	}
	var values [][]string
	for ri := g.startRow; ri < min(endRow, nRows); ri++ {
		row := g.tab.rows[ri]
		var out []string
		for ci := g.startCol; ci < min(endCol, len(row)); ci++ {
			out = append(out, row[ci])
		}
		for len(out) > 0 && out[len(out)-1] == "" {
			out = out[:len(out)-1]
		}
		values = append(values, out)
	}
	for len(values) > 0 && len(values[len(values)-1]) == 0 {
		values = values[:len(values)-1]
	}
	major := strings.ToUpper(r.URL.Query().Get("majorDimension"))
	if major == "COLUMNS" {
		values = transpose(values)
	} else {
		major = "ROWS"
	}
	res := map[string]any{"range": a1(g.tab.title, g.startRow, endRow, g.startCol, endCol), "majorDimension": major}
	if len(values) > 0 {
		res["values"] = values
	}
	core.WriteJSON(w, http.StatusOK, res)
}

func transpose(rows [][]string) [][]string {
	var out [][]string
	for r, row := range rows {
		for c, v := range row {
			for len(out) <= c {
				out = append(out, nil)
			}
			for len(out[c]) < r {
				out[c] = append(out[c], "")
			}
			out[c] = append(out[c], v)
		}
	}
	return out
}

func (s *Service) handleValuesUpdate(w http.ResponseWriter, r *http.Request) {
	c, ok := s.sheetsCaller(w, r, scopesSheetsWrite)
	if !ok {
		return
	}
	switch opt := r.URL.Query().Get("valueInputOption"); opt {
	case "RAW", "USER_ENTERED":
	case "":
		writeSheetsError(w, http.StatusBadRequest, "Invalid valueInputOption: INPUT_VALUE_OPTION_UNSPECIFIED")
		return
	default:
		writeSheetsError(w, http.StatusBadRequest, "Invalid value at 'value_input_option' ("+echo(opt)+")")
		return
	}
	var body struct {
		MajorDimension string  `json:"majorDimension"`
		Values         [][]any `json:"values"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxJSONBody)).Decode(&body); err != nil {
		writeSheetsError(w, http.StatusBadRequest, "Invalid JSON payload received.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.PathValue("spreadsheetId")
	f := s.spreadsheet(w, c, id)
	if f == nil {
		return
	}
	if _, aerr := s.editable(c, id); aerr != nil {
		writeSheetsError(w, http.StatusForbidden, "The caller does not have permission")
		return
	}
	raw := r.PathValue("range")
	g, err := parseA1(raw, f.tabs)
	if err != nil {
		writeSheetsError(w, http.StatusBadRequest, "Unable to parse range: "+echo(raw))
		return
	}
	vals := body.Values
	if strings.EqualFold(body.MajorDimension, "COLUMNS") {
		vals = transposeAny(vals)
	}
	nCols := 0
	for _, row := range vals {
		nCols = max(nCols, len(row))
	}
	if g.explicit && (g.endRow >= 0 && g.startRow+len(vals) > g.endRow || g.endCol >= 0 && g.startCol+nCols > g.endCol) {
		writeSheetsError(w, http.StatusBadRequest, "Requested writing within range ["+echo(raw)+"], but tried writing beyond it.")
		return
	}
	rows, err := writeCells(g.tab.rows, g.startRow, g.startCol, vals)
	if err != nil {
		writeSheetsError(w, http.StatusBadRequest, err.Error())
		return
	}
	if cells := countCells(f.tabs, g.tab, rows); cells > maxCellsPerFile {
		writeSheetsError(w, http.StatusBadRequest, errTooManyCells.Error())
		return
	}
	nt := &tab{id: g.tab.id, title: g.tab.title, rows: rows}
	tabs := slices.Clone(f.tabs)
	for i, t := range tabs {
		if t == g.tab {
			tabs[i] = nt
		}
	}
	f.tabs = tabs
	f.index = indexOfTabs(tabs)
	f.modified = s.now()
	f.version++
	res := map[string]any{"spreadsheetId": f.id}
	if len(vals) > 0 && nCols > 0 {
		cells := 0
		for _, row := range vals {
			cells += len(row)
		}
		res["updatedRange"] = a1(nt.title, g.startRow, g.startRow+len(vals), g.startCol, g.startCol+nCols)
		res["updatedRows"], res["updatedColumns"], res["updatedCells"] = len(vals), nCols, cells
	}
	core.WriteJSON(w, http.StatusOK, res)
}

func transposeAny(rows [][]any) [][]any {
	var out [][]any
	for r, row := range rows {
		for c, v := range row {
			for len(out) <= c {
				out = append(out, nil)
			}
			for len(out[c]) < r {
				out[c] = append(out[c], "")
			}
			out[c] = append(out[c], v)
		}
	}
	return out
}

// writeCells returns a copy of rows with vals written from (row, col); the
// original rows are left as they were (tabs are immutable).
func writeCells(rows [][]string, row, col int, vals [][]any) ([][]string, error) {
	if row+len(vals) > maxGridIndex {
		return nil, errTooManyCells
	}
	out := slices.Clone(rows)
	for len(out) < row+len(vals) {
		out = append(out, nil)
	}
	for i, vr := range vals {
		if col+len(vr) > maxGridIndex {
			return nil, errTooManyCells
		}
		nr := slices.Clone(out[row+i])
		for len(nr) < col+len(vr) {
			nr = append(nr, "")
		}
		for j, v := range vr {
			nr[col+j] = cellText(v)
		}
		out[row+i] = nr
	}
	return out, nil
}

// cellText is how a JSON value is stored: numbers without a trailing ".0".
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "TRUE"
		}
		return "FALSE"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		return x.String()
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// countCells is the cells of tabs with old replaced by rows.
func countCells(tabs []*tab, old *tab, rows [][]string) int {
	n := 0
	for _, t := range tabs {
		rs := t.rows
		if t == old {
			rs = rows
		}
		for _, r := range rs {
			n += len(r)
		}
	}
	return n
}
