package drivesvc

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

func (s *Service) handleValuesGet(w http.ResponseWriter, r *http.Request) {
	c, ok := s.sheetsCaller(w, r, scopesSheetsRead)
	if !ok {
		return
	}
	if fail := checkRenderOptions(r.URL.Query()); fail != nil {
		fail.write(w)
		return
	}
	s.mu.RLock()
	res, fail := s.readValues(c, r.PathValue("spreadsheetId"), r.PathValue("range"), r.URL.Query().Get("majorDimension"))
	s.mu.RUnlock()
	if fail != nil {
		fail.write(w)
		return
	}
	core.WriteJSON(w, http.StatusOK, res)
}

// checkRenderOptions refuses values.get render options outside the
// discovery document's enums, as Sheets does. The emulator stores cells
// as text, so every valid option answers the same values.
func checkRenderOptions(q url.Values) *sheetsFailure {
	for _, o := range []struct {
		param, field string
		valid        []string
	}{
		{"valueRenderOption", "value_render_option", []string{"FORMATTED_VALUE", "UNFORMATTED_VALUE", "FORMULA"}},
		{"dateTimeRenderOption", "date_time_render_option", []string{"SERIAL_NUMBER", "FORMATTED_STRING"}},
	} {
		if v := q.Get(o.param); v != "" && !slices.Contains(o.valid, v) {
			return &sheetsFailure{http.StatusBadRequest, "Invalid value at '" + o.field + "' (" + echo(v) + ")"}
		}
	}
	return nil
}

// readValues is values.get's answer. The caller holds s.mu.
func (s *Service) readValues(c caller, id, raw, majorDimension string) (map[string]any, *sheetsFailure) {
	f, fail := s.spreadsheet(c, id)
	if fail != nil {
		return nil, fail
	}
	g, err := parseA1(raw, f.tabs)
	if err != nil {
		return nil, &sheetsFailure{http.StatusBadRequest, "Unable to parse range: " + echo(raw)}
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
		out := []string{} // an empty row is [], never null
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
	major := strings.ToUpper(majorDimension)
	if major == "COLUMNS" {
		values = transpose(values, "")
	} else {
		major = "ROWS"
	}
	res := map[string]any{"range": a1(g.tab.title, g.startRow, endRow, g.startCol, endCol), "majorDimension": major}
	if len(values) > 0 {
		res["values"] = values
	}
	return res, nil
}

// transpose turns rows into columns (or back), filling the cells short
// rows leave out with pad.
func transpose[T any](rows [][]T, pad T) [][]T {
	var out [][]T
	for r, row := range rows {
		for c, v := range row {
			for len(out) <= c {
				out = append(out, nil)
			}
			for len(out[c]) < r {
				out[c] = append(out[c], pad)
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
	vals := body.Values
	if strings.EqualFold(body.MajorDimension, "COLUMNS") {
		vals = transpose(vals, any(""))
	}
	s.mu.Lock()
	res, fail := s.writeValues(c, r.PathValue("spreadsheetId"), r.PathValue("range"), vals)
	s.mu.Unlock()
	if fail != nil {
		fail.write(w)
		return
	}
	core.WriteJSON(w, http.StatusOK, res)
}

// writeValues applies values.update and returns its answer. The caller
// holds s.mu for writing.
func (s *Service) writeValues(c caller, id, raw string, vals [][]any) (map[string]any, *sheetsFailure) {
	f, fail := s.writableSpreadsheet(c, id)
	if fail != nil {
		return nil, fail
	}
	g, err := parseA1(raw, f.tabs)
	if err != nil {
		return nil, &sheetsFailure{http.StatusBadRequest, "Unable to parse range: " + echo(raw)}
	}
	nCols := 0
	for _, row := range vals {
		nCols = max(nCols, len(row))
	}
	if g.explicit && (g.endRow >= 0 && g.startRow+len(vals) > g.endRow || g.endCol >= 0 && g.startCol+nCols > g.endCol) {
		return nil, &sheetsFailure{http.StatusBadRequest, "Requested writing within range [" + echo(raw) + "], but tried writing beyond it."}
	}
	if gridRows, gridCols := gridSize(g.tab.rows); g.startRow+max(len(vals), 1) > gridRows || g.startCol+max(nCols, 1) > gridCols {
		return nil, &sheetsFailure{http.StatusBadRequest, fmt.Sprintf("Range (%s) exceeds grid limits. Max rows: %d, max columns: %d",
			a1(g.tab.title, g.startRow, g.startRow+len(vals), g.startCol, g.startCol+nCols), gridRows, gridCols)}
	}
	rows, err := writeCells(g.tab.rows, g.startRow, g.startCol, vals)
	if err != nil || countCells(f.tabs, g.tab, rows) > maxCellsPerFile {
		return nil, &sheetsFailure{http.StatusBadRequest, errTooManyCells.Error()}
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
	return res, nil
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
