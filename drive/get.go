package drive

import (
	"context"
	"errors"
	"fmt"
)

// Get returns the file ref names, following a shortcut once to its target. A spreadsheet comes
// with its tabs when the Sheets API is enabled; when it is not, the file
// comes without them and TabsUnknown set, since nothing but a tab choice
// needs that API. A missing file and one the user cannot see both give
// ErrNotFound.
func (c *Client) Get(ctx context.Context, ref Ref) (File, error) {
	if !ValidID(ref.ID) {
		return File{}, &Error{Op: "files.get", Err: ErrBadID}
	}
	f, err := c.Lookup(ctx, ref)
	if err != nil || f.MimeType != MimeSpreadsheet {
		return f, err
	}
	tabs, err := c.OptionalSheetTabs(ctx, f)
	switch {
	case errors.Is(err, ErrAPIDisabled):
		f.TabsUnknown = true
	case err != nil:
		return File{}, err
	}
	f.Sheets = tabs
	return f, nil
}

// Lookup returns the file ref names, following a shortcut once: Drive
// metadata only, so it works whichever other Google APIs are enabled.
func (c *Client) Lookup(ctx context.Context, ref Ref) (File, error) {
	f, err := c.metadata(ctx, ref)
	if err != nil {
		return File{}, err
	}
	if f.MimeType == MimeShortcut {
		f, err = c.followShortcut(ctx, f)
		if err != nil {
			return File{}, err
		}
	}
	return f, nil
}

// shortcutTarget carries what files.get says of a shortcut's target.
type shortcutTarget struct {
	id, resourceKey string
}

func (c *Client) metadata(ctx context.Context, ref Ref) (File, error) {
	call := c.files.Get(ref.ID).SupportsAllDrives(true).Fields(fileFields).Context(ctx)
	setResourceKey(call.Header(), ref.ID, ref.ResourceKey)
	gf, err := call.Do()
	if err != nil {
		return File{}, c.wrap("files.get", err)
	}
	f := fromAPI(gf)
	if f.ResourceKey == "" {
		f.ResourceKey = ref.ResourceKey
	}
	if gf.ShortcutDetails != nil {
		f.shortcut = shortcutTarget{id: gf.ShortcutDetails.TargetId, resourceKey: gf.ShortcutDetails.TargetResourceKey}
	}
	return f, nil
}

// followShortcut resolves a shortcut to its target, once: Drive does not
// allow a shortcut to a shortcut, and we do not follow chains.
func (c *Client) followShortcut(ctx context.Context, sc File) (File, error) {
	if !ValidID(sc.shortcut.id) {
		return File{}, &Error{Op: "files.get", Err: fmt.Errorf("shortcut without a target: %w", ErrNotFound)}
	}
	t, err := c.metadata(ctx, Ref{ID: sc.shortcut.id, ResourceKey: sc.shortcut.resourceKey})
	if err != nil {
		return File{}, err
	}
	if t.MimeType == MimeShortcut {
		return File{}, &Error{Op: "files.get", Err: fmt.Errorf("shortcut to a shortcut: %w", ErrNotFound)}
	}
	t.ShortcutID = sc.ID
	return t, nil
}

// SheetTabs lists a spreadsheet's tabs in order, with each one's sheetId
// and grid size (Sheets API spreadsheets.get). A Sheets API that
// drivemail's project has not enabled is ErrAPIDisabled.
func (c *Client) SheetTabs(ctx context.Context, f File) ([]Sheet, error) {
	return c.sheetTabs(ctx, f, c.wrap)
}

// OptionalSheetTabs is SheetTabs where the tabs only inform (a tab's
// name in a result): a Sheets API that is not enabled is not logged for
// the operator, since nothing failed for want of it.
func (c *Client) OptionalSheetTabs(ctx context.Context, f File) ([]Sheet, error) {
	return c.sheetTabs(ctx, f, wrapErr)
}

func (c *Client) sheetTabs(ctx context.Context, f File, wrap func(string, error) error) ([]Sheet, error) {
	call := c.sheets.Get(f.ID).Fields("sheets.properties(sheetId,title,index,gridProperties(rowCount,columnCount))").Context(ctx)
	setSheetsResourceKey(call.Header(), f.ID, f.ResourceKey)
	ss, err := call.Do()
	if err != nil {
		return nil, wrap("spreadsheets.get", err)
	}
	tabs := make([]Sheet, 0, len(ss.Sheets))
	for _, s := range ss.Sheets {
		if s.Properties == nil {
			continue
		}
		t := Sheet{ID: s.Properties.SheetId, Title: s.Properties.Title}
		if g := s.Properties.GridProperties; g != nil {
			t.Rows, t.Cols = g.RowCount, g.ColumnCount
		}
		tabs = append(tabs, t)
	}
	return tabs, nil
}
