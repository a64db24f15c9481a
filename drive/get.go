package drive

import (
	"context"
	"fmt"
)

// Get returns the file named by id (a bare id or a Drive link, see
// ParseRef), following a shortcut once to its target. A spreadsheet comes
// with its tabs. A missing file and one the user cannot see both give
// ErrNotFound.
func (c *Client) Get(ctx context.Context, id string) (File, error) {
	ref, ok := ParseRef(id)
	if !ok {
		return File{}, &Error{Op: "files.get", Err: ErrBadID}
	}
	return c.Lookup(ctx, ref)
}

// Lookup is Get for a parsed reference.
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
	if f.MimeType == MimeSpreadsheet {
		tabs, err := c.SheetTabs(ctx, f)
		if err != nil {
			return File{}, err
		}
		f.Sheets = tabs
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
		return File{}, wrapErr("files.get", err)
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

// SheetTabs lists a spreadsheet's tabs in order, with the sheetId each
// tab's export URL needs as gid.
func (c *Client) SheetTabs(ctx context.Context, f File) ([]Sheet, error) {
	call := c.sheets.Get(f.ID).Fields("sheets.properties(sheetId,title,index)").Context(ctx)
	setResourceKey(call.Header(), f.ID, f.ResourceKey)
	ss, err := call.Do()
	if err != nil {
		return nil, wrapErr("spreadsheets.get", err)
	}
	tabs := make([]Sheet, 0, len(ss.Sheets))
	for _, s := range ss.Sheets {
		if s.Properties == nil {
			continue
		}
		tabs = append(tabs, Sheet{ID: s.Properties.SheetId, Title: s.Properties.Title})
	}
	return tabs, nil
}
