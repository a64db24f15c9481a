package drivesvc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/drivemail/drivemail/emulator/internal/render"
)

// gridRange is a rectangle of one tab, zero-based, end exclusive; -1 as an
// end means unbounded.
type gridRange struct {
	tab                  *tab
	startRow, endRow     int
	startCol, endCol     int
	wholeSheet, explicit bool
}

var errRange = errors.New("unparsable range")

// Bounds of row and column numbers in a range: Sheets stops at column ZZZ.
const (
	maxGridIndex = 10_000_000
	maxColumns   = 18278
)

// parseA1 reads an A1 range against tabs: "Sheet1!A1:C3", "'My tab'!B:B",
// "Sheet1" (the whole tab), "A1:B2" (on the first tab), "Sheet1!2:4".
func parseA1(s string, tabs []*tab) (gridRange, error) {
	sheet, cells, hasBang := splitSheet(s)
	var t *tab
	if hasBang {
		t = tabByTitle(tabs, sheet)
		if t == nil {
			return gridRange{}, errRange
		}
	} else if t = tabByTitle(tabs, sheet); t != nil {
		cells = ""
	} else {
		if len(tabs) == 0 {
			return gridRange{}, errRange
		}
		t, cells = tabs[0], s
	}
	g := gridRange{tab: t, endRow: -1, endCol: -1}
	if hasBang && cells == "" {
		return gridRange{}, errRange
	}
	if cells == "" {
		g.wholeSheet = true
		return g, nil
	}
	first, second, isRange := strings.Cut(cells, ":")
	c1, r1, err := parseCell(first)
	if err != nil {
		return gridRange{}, err
	}
	g.explicit = true
	if !isRange {
		if c1 < 0 || r1 < 0 {
			return gridRange{}, errRange
		}
		g.startRow, g.endRow, g.startCol, g.endCol = r1, r1+1, c1, c1+1
		return g, nil
	}
	c2, r2, err := parseCell(second)
	if err != nil {
		return gridRange{}, err
	}
	// Sheets accepts reversed corners; a missing column or row part means
	// unbounded that way (A:B is whole columns, A2:B runs to the last row).
	if c1 >= 0 && c2 >= 0 && c2 < c1 {
		c1, c2 = c2, c1
	}
	if r1 >= 0 && r2 >= 0 && r2 < r1 {
		r1, r2 = r2, r1
	}
	g.startCol, g.endCol = max(c1, 0), -1
	if c2 >= 0 {
		g.endCol = c2 + 1
	}
	g.startRow, g.endRow = max(r1, 0), -1
	if r2 >= 0 {
		g.endRow = r2 + 1
	}
	return g, nil
}

// splitSheet separates "Sheet!cells"; a quoted title uses ” for a quote.
func splitSheet(s string) (sheet, cells string, hasBang bool) {
	if strings.HasPrefix(s, "'") {
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				rest := s[i+1:]
				if strings.HasPrefix(rest, "!") {
					return b.String(), rest[1:], true
				}
				return b.String(), "", false
			}
			b.WriteByte(s[i])
		}
		return s, "", false
	}
	if i := strings.LastIndexByte(s, '!'); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

func tabByTitle(tabs []*tab, title string) *tab {
	for _, t := range tabs {
		if strings.EqualFold(t.title, title) {
			return t
		}
	}
	return nil
}

// parseCell reads "B3" (col 1, row 2), "B" (row -1) or "3" (col -1).
func parseCell(s string) (col, row int, err error) {
	s = strings.ToUpper(strings.TrimSpace(s))
	i := 0
	col, row = -1, -1
	for i < len(s) && s[i] >= 'A' && s[i] <= 'Z' {
		if col < 0 {
			col = 0
		}
		col = col*26 + int(s[i]-'A'+1)
		if col > maxColumns {
			return 0, 0, errRange
		}
		i++
	}
	if col >= 0 {
		col--
	}
	if i < len(s) {
		n, err := strconv.Atoi(s[i:])
		if err != nil || n < 1 || n > maxGridIndex {
			return 0, 0, errRange
		}
		row = n - 1
	}
	if col < 0 && row < 0 {
		return 0, 0, errRange
	}
	return col, row, nil
}

// quoteTitle quotes a tab title for an A1 range when Sheets would.
func quoteTitle(title string) string {
	simple := title != ""
	for _, r := range title {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			simple = false
		}
	}
	if simple {
		if _, _, err := parseCell(title); err != nil {
			return title
		}
	}
	return "'" + strings.ReplaceAll(title, "'", "''") + "'"
}

// a1 formats a bounded rectangle as "Title!A1:C3".
func a1(title string, startRow, endRow, startCol, endCol int) string {
	from := render.ColumnName(startCol) + strconv.Itoa(startRow+1)
	to := render.ColumnName(max(endCol-1, startCol)) + strconv.Itoa(max(endRow, startRow+1))
	if from == to {
		return quoteTitle(title) + "!" + from
	}
	return quoteTitle(title) + "!" + from + ":" + to
}

// Sheets' grid: a tab is at least 1000 rows by 26 columns (its size when
// made), values.update writes only inside it, and one spreadsheet's tabs
// hold at most ten million cells of grid in all.
const (
	defaultGridRows = 1000
	defaultGridCols = 26
	maxGridCells    = 10_000_000
)

// gridSize is a tab's grid as spreadsheets.get reports it: the used
// extent, and at least the default size.
func gridSize(rows [][]string) (nRows, nCols int) {
	r, c := extent(rows)
	return max(r, defaultGridRows), max(c, defaultGridCols)
}

// msgGridCells is Sheets' refusal of a change that makes the grid too big.
var msgGridCells = fmt.Sprintf("This action would increase the number of cells in the workbook above the limit of %d cells.", maxGridCells)

// extent is the used size of a tab: rows and the widest row.
func extent(rows [][]string) (nRows, nCols int) {
	for r, row := range rows {
		w := len(row)
		for w > 0 && row[w-1] == "" {
			w--
		}
		if w > 0 {
			nRows = r + 1
		}
		nCols = max(nCols, w)
	}
	return nRows, nCols
}
