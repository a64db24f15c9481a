package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/pick"
	"github.com/drivemail/drivemail/views"
)

// In file mode (serve --drive-scope file) drivemail sees only the Drive
// files the user hands it: picked with Google's Picker, uploaded, saved
// or made by drivemail. drive_pick gives the link to the Picker, and
// every answer that finds no file, or names one drivemail cannot see,
// carries such a link, so the model always has the way to add files.

// Picks gives a user a link to choose Drive files with Google's Picker:
// *pick.Service.
type Picks interface {
	Link(acct *account.Account) (pick.Link, error)
}

// PickResult is drive_pick's structuredContent.
type PickResult struct {
	PickURL   string    `json:"pick_url"`
	ExpiresAt time.Time `json:"expires_at"`
	MaxFiles  int       `json:"max_files"`
}

const drivePickDescription = `Get a link for the user to choose files from their Google Drive with Google's file picker (Docs, Sheets and Slides too), for drivemail to attach: here drivemail sees only the files the user chose, uploaded or saved with it.

Give the user the link (it works once, for 15 minutes). When they say they are done, call drive_search (an empty query lists every file drivemail may use) and attach the files by id.`

const driveSearchFileDescription = `Search the Google Drive files the user has handed drivemail (chosen with drive_pick, uploaded, or saved with it; never the trash) for files to attach with send_email. drivemail sees no other file.

When nothing matches, the answer has a link for the user to choose more files. For more results, pass next_page_token back as page_token.`

func drivePickTool() mcp.Tool {
	return newTool("drive_pick", "Choose Drive files", drivePickDescription,
		schema("drive_pick.input"), schema("drive_pick.output"),
		hints{readOnly: true, destructive: false, idempotent: false, openWorld: true})
}

// viewedPickTool is drive_pick for a client that renders views: its
// result shows as the pick view, which opens the link in a new tab or,
// where the host allows, the pick page in the view.
func viewedPickTool() mcp.Tool {
	t := drivePickTool()
	t.Meta = mcp.NewMetaFromMap(views.ToolMeta(views.PickURI))
	return t
}

// driveSearchFileTool is drive_search in file mode: what it searches,
// and the pick link its answer may carry.
func driveSearchFileTool() mcp.Tool {
	var out map[string]any
	mustUnmarshal(schema("drive_search.output"), &out)
	out["properties"].(map[string]any)["pick_url"] = map[string]any{"type": "string",
		"description": "When nothing matched: a link for the user to choose files; it works once."}
	return newTool("drive_search", "Search Google Drive", driveSearchFileDescription,
		schema("drive_search.input"), mustMarshal(out),
		hints{readOnly: true, destructive: false, idempotent: true, openWorld: true})
}

var drivePickFields = fields{}

func (h *handlers) drivePick(ctx context.Context, acct *account.Account, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if _, err := decodeObject(req.Params.RawArguments, drivePickFields, "The arguments of drive_pick"); err != nil {
		return nil, err
	}
	link, err := h.pickLink(acct)
	if err != nil {
		return nil, err
	}
	out := PickResult{PickURL: link.URL, ExpiresAt: link.ExpiresAt.UTC(), MaxFiles: link.MaxFiles}
	text := fmt.Sprintf("Give the user this link to choose files from their Google Drive for drivemail, up to %d at a time (it works once, until %s): %s\n"+
		"When they say they are done, call drive_search (an empty query lists every file drivemail may use) and attach the files by id.",
		link.MaxFiles, out.ExpiresAt.Format("15:04 UTC"), link.URL)
	return succeeded(text, out), nil
}

// pickLink is a link for acct's user, or why they cannot have one.
func (h *handlers) pickLink(acct *account.Account) (pick.Link, error) {
	if !acct.MayPick() {
		return pick.Link{}, refusal.New(kindDriveScope, "This Google account has not let drivemail open the files the user chooses (drive.file). "+
			"Ask the user to reconnect drivemail (sign in again) and allow it on Google's consent screen.")
	}
	return h.deps.Picks.Link(acct)
}

// handedLink is a pick link for acct's user where drivemail sees only
// the files the user handed it (file mode, and no broader Drive grant);
// "" elsewhere, or when no link can be had.
func (h *handlers) handedLink(acct *account.Account) string {
	if h.deps.Picks == nil || acct == nil || !acct.SeesOnlyHandedFiles() {
		return ""
	}
	link, err := h.pickLink(acct)
	if err != nil {
		return ""
	}
	return link.URL
}

// withPickHint adds the pick link to a refusal for a file drivemail
// cannot see, in file mode: the file may be the user's, not yet handed.
func (h *handlers) withPickHint(acct *account.Account, err error) error {
	r, ok := refusal.As(err)
	if !ok || r.Kind != kindUnknownFile {
		return err
	}
	link := h.handedLink(acct)
	if link == "" {
		return err
	}
	return &refusal.Refusal{Kind: r.Kind, Delivery: r.Delivery, Err: r.Err,
		Text: r.Text + " Here drivemail sees only the files the user handed it: if the file is theirs, give them this link to choose it in Google Drive (it works once, for 15 minutes), then try again with the id drive_search finds: " + link}
}
