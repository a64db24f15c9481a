package drivesvc

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/emulator/internal/fieldmask"
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

// sheetsFailure is a Sheets error to write once the lock is released.
type sheetsFailure struct {
	code    int
	message string
}

func (e *sheetsFailure) write(w http.ResponseWriter) { writeSheetsError(w, e.code, e.message) }

// spreadsheet finds a spreadsheet c may see. The caller holds s.mu.
func (s *Service) spreadsheet(c caller, id string) (*file, *sheetsFailure) {
	f := s.files[id]
	if !s.visible(c, f) {
		return nil, &sheetsFailure{http.StatusNotFound, msgNotFound}
	}
	if f.kind != KindSheet {
		return nil, &sheetsFailure{http.StatusBadRequest, "This operation is not supported for this document"}
	}
	return f, nil
}

// writableSpreadsheet is spreadsheet for a change: readers get 403. The
// caller holds s.mu.
func (s *Service) writableSpreadsheet(c caller, id string) (*file, *sheetsFailure) {
	f, fail := s.spreadsheet(c, id)
	if fail != nil {
		return nil, fail
	}
	if _, aerr := s.editable(c, id); aerr != nil {
		return nil, &sheetsFailure{http.StatusForbidden, "The caller does not have permission"}
	}
	return f, nil
}

// spreadsheetResource is the Spreadsheet resource of f; grid adds each
// tab's cells. The caller holds s.mu.
func spreadsheetResource(f *file, origin string, grid bool) map[string]any {
	sheets := []map[string]any{}
	for i, t := range f.tabs {
		rows, cols := gridSize(t.rows)
		sh := map[string]any{"properties": map[string]any{
			"sheetId": t.id, "title": t.title, "index": i, "sheetType": "GRID",
			"gridProperties": map[string]any{"rowCount": rows, "columnCount": cols},
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
	m, err := fieldmask.Parse(raw)
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
	gridCells := 0
	for i, sh := range req.Sheets {
		// Size the tab's grid before writing its data, so data placed far
		// out is refused before the rows to hold it are made.
		rows, cols := defaultGridRows, defaultGridCols
		for _, d := range sh.Data {
			if d.StartRow < 0 || d.StartColumn < 0 || d.StartRow > maxGridIndex || d.StartColumn > maxGridIndex {
				writeSheetsError(w, http.StatusBadRequest, "Invalid data[].startRow or startColumn.")
				return
			}
			rows = max(rows, d.StartRow+len(d.RowData))
			for _, row := range d.RowData {
				cols = max(cols, d.StartColumn+len(row.Values))
			}
		}
		if gridCells += rows * cols; gridCells > maxGridCells {
			writeSheetsError(w, http.StatusBadRequest, msgGridCells)
			return
		}
		t := Tab{Title: sh.Properties.Title}
		if sh.Properties.SheetID != nil {
			t.SheetID = *sh.Properties.SheetID
		} else if i > 0 {
			t.SheetID = newSheetID()
		}
		for _, d := range sh.Data {
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
	aerr = s.place(c.email, f, nil, "")
	var res map[string]any
	if aerr == nil {
		res = m.Apply(spreadsheetResource(f, core.Origin(r), false))
	}
	s.mu.Unlock()
	if aerr != nil {
		writeSheetsError(w, aerr.code, aerr.message)
		return
	}
	core.WriteJSON(w, http.StatusOK, res)
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
	f, fail := s.spreadsheet(c, r.PathValue("spreadsheetId"))
	var res map[string]any
	if fail == nil {
		res = m.Apply(spreadsheetResource(f, core.Origin(r), boolParam(r.URL.Query().Get("includeGridData"))))
	}
	s.mu.RUnlock()
	if fail != nil {
		fail.write(w)
		return
	}
	core.WriteJSON(w, http.StatusOK, res)
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
		Requests []addSheetRequest `json:"requests"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxJSONBody)).Decode(&req); err != nil {
		writeSheetsError(w, http.StatusBadRequest, "Invalid JSON payload received.")
		return
	}
	for _, rq := range req.Requests {
		if rq.AddSheet == nil {
			writeSheetsError(w, http.StatusBadRequest, "The emulator's batchUpdate supports addSheet requests only.")
			return
		}
	}
	s.mu.Lock()
	res, fail := s.addSheets(c, id, req.Requests)
	s.mu.Unlock()
	if fail != nil {
		fail.write(w)
		return
	}
	core.WriteJSON(w, http.StatusOK, res)
}

type addSheetRequest struct {
	AddSheet *struct {
		Properties struct {
			SheetID *int64 `json:"sheetId"`
			Title   string `json:"title"`
		} `json:"properties"`
	} `json:"addSheet"`
}

// addSheets applies addSheet requests, all or none. The caller holds s.mu.
func (s *Service) addSheets(c caller, id string, reqs []addSheetRequest) (map[string]any, *sheetsFailure) {
	f, fail := s.writableSpreadsheet(c, id)
	if fail != nil {
		return nil, fail
	}
	tabs := slices.Clone(f.tabs)
	gridCells := 0
	for _, t := range tabs {
		r, c := gridSize(t.rows)
		gridCells += r * c
	}
	var replies []map[string]any
	for _, rq := range reqs {
		if gridCells += defaultGridRows * defaultGridCols; gridCells > maxGridCells {
			return nil, &sheetsFailure{http.StatusBadRequest, msgGridCells}
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
				return nil, &sheetsFailure{http.StatusBadRequest, "Invalid addSheet: a sheet with the name \"" + echo(t.title) + "\" or its id already exists."}
			}
		}
		tabs = append(tabs, t)
		replies = append(replies, map[string]any{"addSheet": map[string]any{"properties": map[string]any{
			"sheetId": t.id, "title": t.title, "index": len(tabs) - 1, "sheetType": "GRID"}}})
	}
	f.tabs = tabs
	f.modified = s.now()
	f.version++
	return map[string]any{"spreadsheetId": f.id, "replies": replies}, nil
}
