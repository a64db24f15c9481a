package drive

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/sheets/v4"
)

// MIME types of one tab's export.
const (
	MimeCSV = "text/csv"
	MimeTSV = "text/tab-separated-values"
)

// Bounds of a tab's reads: each values.get asks for whole rows, about
// cellsPerRead cells, so its JSON stays near a megabyte; tabAttempts
// tries of one read survive a transient failure.
const (
	cellsPerRead = 50_000
	maxTabReads  = 1_000
	tabAttempts  = 3
	tabBackoff   = time.Second
)

// TabExport reads one tab of a spreadsheet as CSV or TSV (mimeType
// MimeCSV or MimeTSV) through the Sheets API: values.get of whole rows
// with valueRenderOption FORMATTED_VALUE (what the user sees, as
// Google's own CSV export writes), a window at a time, written out as
// it arrives. Memory is one window, whatever the tab's size. CSV is RFC
// 4180 with CRLF; TSV has no quoting, so a tab or line break inside a
// cell becomes a space. Rows end at their last non-empty cell (Sheets
// leaves trailing empty cells out), and empty rows after the last one
// with data are left out.
func (c *Client) TabExport(ctx context.Context, f File, tab Sheet, mimeType string) (io.ReadCloser, error) {
	if mimeType != MimeCSV && mimeType != MimeTSV {
		return nil, &Error{Op: "values.get", Err: fmt.Errorf("a tab exports as %s or %s, not %s", MimeCSV, MimeTSV, mimeType)}
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &tabReader{c: c, ctx: ctx, cancel: cancel, f: f, tab: tab, tsv: mimeType == MimeTSV,
		window: max(1, cellsPerRead/max(tab.Cols, 1))}
	r.csv = csv.NewWriter(&r.buf)
	r.csv.UseCRLF = true
	// The first window is read here, so a refusal (the Sheets API not
	// enabled, the tab gone) comes before the caller writes anything.
	if err := r.fill(); err != nil {
		cancel()
		return nil, err
	}
	return r, nil
}

// tabReader streams a tab's rows as CSV or TSV.
type tabReader struct {
	c      *Client
	ctx    context.Context
	cancel context.CancelFunc
	f      File
	tab    Sheet
	tsv    bool
	window int64 // rows per values.get

	next    int64 // the 0-based row the next read starts at
	reads   int
	pending int // empty rows seen and not yet written: written only if a row with data follows
	done    bool
	buf     bytes.Buffer
	csv     *csv.Writer
}

func (r *tabReader) Read(p []byte) (int, error) {
	for r.buf.Len() == 0 && !r.done {
		if err := r.fill(); err != nil {
			return 0, err
		}
	}
	if r.buf.Len() == 0 {
		return 0, io.EOF
	}
	return r.buf.Read(p)
}

func (r *tabReader) Close() error {
	r.cancel()
	return nil
}

// fill reads the next window of rows into buf; past the grid's last row
// it marks the reader done. A tab whose grid size is unknown ends at the
// first window without data.
func (r *tabReader) fill() error {
	known := r.tab.Rows > 0
	if (known && r.next >= r.tab.Rows) || r.reads == maxTabReads {
		r.done = true
		return nil
	}
	r.reads++
	last := r.next + r.window
	if known {
		last = min(last, r.tab.Rows)
	}
	rows, err := r.read(r.next, last)
	if err != nil {
		return err
	}
	if !known && len(rows) == 0 {
		r.done = true
		return nil
	}
	for _, row := range rows {
		if len(row) == 0 {
			r.pending++
			continue
		}
		for ; r.pending > 0; r.pending-- {
			r.writeRow(nil)
		}
		r.writeRow(row)
	}
	// Sheets leaves out a window's trailing empty rows.
	r.pending += int(last-r.next) - len(rows)
	r.next = last
	r.csv.Flush()
	return r.csv.Error()
}

// writeRow writes one row in the tab's format.
func (r *tabReader) writeRow(row []any) {
	cells := make([]string, len(row))
	for i, v := range row {
		cells[i] = cellText(v)
	}
	if !r.tsv {
		_ = r.csv.Write(cells)
		return
	}
	for i, s := range cells {
		cells[i] = strings.Map(func(c rune) rune {
			if c == '\t' || c == '\n' || c == '\r' {
				return ' '
			}
			return c
		}, s)
	}
	r.buf.WriteString(strings.Join(cells, "\t"))
	r.buf.WriteString("\r\n")
}

// cellText is a formatted value as text: Sheets sends formatted values as
// strings; anything else is written as JSON would show it.
func cellText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// read is one values.get of rows [from, to), retried when it fails in a
// transient way. Each try may take the idle timeout, no more.
func (r *tabReader) read(from, to int64) ([][]any, error) {
	const op = "values.get"
	rng := fmt.Sprintf("%s!%d:%d", quoteSheetTitle(r.tab.Title), from+1, to)
	wait := tabBackoff
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(r.ctx, r.c.idle)
		call := r.c.sheets.Values.Get(r.f.ID, rng).ValueRenderOption("FORMATTED_VALUE").
			MajorDimension("ROWS").Fields("values").Context(ctx)
		setSheetsResourceKey(call.Header(), r.f.ID, r.f.ResourceKey)
		vr, err := call.Do()
		timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded) && r.ctx.Err() == nil
		cancel()
		switch {
		case err == nil:
			return values(vr), nil
		case timedOut:
			return nil, &Error{Op: op, Err: fmt.Errorf("nothing for %s: %w", r.c.idle, ErrStalled)}
		case isNotJSON(err):
			// A 200 that is not JSON: a sign-in or error page.
			return nil, &Error{Op: op, Err: fmt.Errorf("%w: not the JSON values the Sheets API sends", ErrWrongType)}
		}
		err = r.c.wrap(op, err)
		if !IsTransient(err) || attempt == tabAttempts || r.ctx.Err() != nil {
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-r.ctx.Done():
			t.Stop()
			return nil, r.ctx.Err()
		case <-t.C:
		}
		wait *= 2
	}
}

func values(vr *sheets.ValueRange) [][]any {
	if vr == nil {
		return nil
	}
	return vr.Values
}

// isNotJSON reports whether err is a response body that did not decode.
func isNotJSON(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te)
}

// quoteSheetTitle quotes a tab title for an A1 range, doubling each
// single quote inside it, as Sheets' A1 notation wants.
func quoteSheetTitle(title string) string {
	return "'" + strings.ReplaceAll(title, "'", "''") + "'"
}
