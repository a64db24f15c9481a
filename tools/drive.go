package tools

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/exportfmt"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
)

const driveSearchDescription = `Search the user's Google Drive (My Drive, files shared with them, shared drives; never the trash) for files to attach with send_email.

For more results, pass next_page_token back as page_token.`

const driveGetFileDescription = `Get one Google Drive file by id or link, with the export formats of a native Google file and a spreadsheet's tab names (for "sheet"). Ids come from drive_search.`

func driveSearchTool() mcp.Tool {
	return newTool("drive_search", "Search Google Drive", driveSearchDescription,
		schema("drive_search.input"), schema("drive_search.output"),
		hints{readOnly: true, destructive: false, idempotent: true, openWorld: true})
}

func driveGetFileTool() mcp.Tool {
	return newTool("drive_get_file", "Get a Drive file", driveGetFileDescription,
		schema("drive_get_file.input"), schema("drive_get_file.output"),
		hints{readOnly: true, destructive: false, idempotent: true, openWorld: true})
}

var driveSearchFields = fields{names: []string{"query", "mime_type", "modified_after", "page_size", "page_token"}}

func (h *handlers) driveSearch(ctx context.Context, acct *account.Account, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	q, err := parseSearch(req.Params.RawArguments)
	if err != nil {
		return nil, err
	}
	page, err := h.deps.Drive.Search(ctx, acct, q)
	if err != nil {
		return nil, driveError(err, "")
	}
	out := SearchResult{Files: make([]File, 0, len(page.Files)), NextPageToken: page.NextPageToken}
	for _, f := range page.Files {
		out.Files = append(out.Files, fileOut(f))
	}
	text := searchText(out)
	if len(out.Files) == 0 && out.NextPageToken == "" {
		if out.PickURL = h.handedLink(acct); out.PickURL != "" {
			text = "No files match among those the user has handed drivemail, which here sees no other file. " +
				"To add files, give the user this link to choose them in Google Drive (it works once, for 15 minutes), then search again: " + out.PickURL
		}
	}
	return succeeded(text, out), nil
}

// parseSearch validates drive_search's arguments.
func parseSearch(raw []byte) (drive.Query, error) {
	m, err := decodeObject(raw, driveSearchFields, "The arguments of drive_search")
	if err != nil {
		return drive.Query{}, err
	}
	var q drive.Query
	if q.Text, err = m.str("query"); err != nil {
		return q, err
	}
	q.Text = strings.TrimSpace(q.Text)
	if n := len([]rune(q.Text)); n > maxQueryRunes {
		return q, refuse("\"query\" has %d characters; use at most %d: a few distinctive words work best.", n, maxQueryRunes)
	}
	kind, err := m.str("mime_type")
	if err != nil {
		return q, err
	}
	if err := searchKind(kind, &q); err != nil {
		return q, err
	}
	after, err := m.str("modified_after")
	if err != nil {
		return q, err
	}
	if q.ModifiedAfter, err = parseTime(after); err != nil {
		return q, err
	}
	size, given, err := m.int("page_size")
	if err != nil {
		return q, err
	}
	switch {
	case !given:
		q.PageSize = drive.DefaultPageSize
	case size < 1 || size > drive.MaxPageSize:
		return q, refuse("\"page_size\" is %d; use 1 to %d, and page_token for more.", size, drive.MaxPageSize)
	default:
		q.PageSize = int(size)
	}
	if q.PageToken, err = m.str("page_token"); err != nil {
		return q, err
	}
	return q, nil
}

// maxQueryRunes bounds the search text.
const maxQueryRunes = 1000

// searchKind reads the mime_type argument: a MIME type (exact match), or
// a friendly kind word (pdf, doc, sheet, image…) for drive.Query.Type.
func searchKind(s string, q *drive.Query) error {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	s = strings.TrimPrefix(s, ".")
	switch {
	case s == "" || s == "any" || s == "all":
		return nil
	case strings.Contains(s, "/"):
		q.MimeType = s
		return nil
	}
	if _, ok := exportfmt.TypeQuery(s); ok {
		q.Type = s
		return nil
	}
	return refuse("\"mime_type\" %q is not a kind drive_search knows; use %s (or doc, sheet, slides, zip…), or a MIME type such as \"image/png\".",
		truncate(s, 40), strings.Join(exportfmt.TypeWords(), ", "))
}

// parseTime reads modified_after: RFC 3339, or a date meaning midnight UTC.
func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, refuse("\"modified_after\" %q is not a date; use RFC 3339 such as \"2026-05-01T09:00:00Z\", or a date such as \"2026-05-01\".", truncate(s, 40))
}

var driveGetFileFields = fields{names: []string{"file_id"}, aliases: map[string]string{"id": "file_id", "url": "file_id"}}

func (h *handlers) driveGetFile(ctx context.Context, acct *account.Account, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	m, err := decodeObject(req.Params.RawArguments, driveGetFileFields, "The arguments of drive_get_file")
	if err != nil {
		return nil, err
	}
	raw, err := m.requiredStr("file_id", "give a Drive file id from drive_search.")
	if err != nil {
		return nil, err
	}
	hd, err := parseHandle(raw, "\"file_id\"", findFile)
	if err != nil {
		return nil, err
	}
	ref, ok := handle.DriveRef(hd)
	if !ok {
		return nil, fmt.Errorf("drive_get_file: a %T names no Drive file", hd)
	}
	f, err := h.deps.Drive.Get(ctx, acct, ref)
	if err != nil {
		return nil, driveError(err, ref.ID)
	}
	out := fileOut(f)
	for _, s := range f.Sheets {
		out.Sheets = append(out.Sheets, s.Title)
	}
	return succeeded(fileText(out), out), nil
}

// fileOut shapes a Drive file for the model.
func fileOut(f drive.File) File {
	out := File{
		ID:           f.ID,
		Name:         f.Name,
		MimeType:     f.MimeType,
		ModifiedTime: f.ModifiedTime.UTC(),
		Native:       f.Native(),
		WebViewLink:  f.WebViewLink,
	}
	if !out.Native {
		size := f.Size
		out.Size = &size
	}
	if names := exportfmt.FormatNames(f.MimeType); len(names) > 0 {
		out.ExportFormats = names
	}
	return out
}

// searchText is the compact text of a search: one line per file.
func searchText(r SearchResult) string {
	lines := make([]string, len(r.Files))
	for i, f := range r.Files {
		lines[i] = fileLine(f)
	}
	return pageText(lines, "file", "", "No files match. Try fewer or different words, or drop mime_type and modified_after.", r.NextPageToken)
}

// pageText is one page of a search's results, one line each: how many
// (of noun, with the columns of a line when it has many), the lines, and
// how to ask for the next page.
func pageText(lines []string, noun, columns, none, nextPageToken string) string {
	var b strings.Builder
	switch {
	case len(lines) == 0 && nextPageToken != "":
		fmt.Fprintf(&b, "No %ss on this page.\n", noun) // Google may answer an empty page before more
	case len(lines) == 0:
		b.WriteString(none)
	case len(lines) == 1:
		fmt.Fprintf(&b, "1 %s%s:\n", noun, columns)
	default:
		fmt.Fprintf(&b, "%d %ss%s:\n", len(lines), noun, columns)
	}
	for _, l := range lines {
		b.WriteString("- " + l + "\n")
	}
	if nextPageToken != "" {
		fmt.Fprintf(&b, "More %ss match: call again with page_token %q.\n", noun, nextPageToken)
	}
	return strings.TrimRight(b.String(), "\n")
}

// fileLine is one file in a line: name, id, type, size, modified. The
// name, id and type come from Drive, where anyone who shares a file
// chooses them: each is one field that no character of it can break.
func fileLine(f File) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s | id %s | %s", field(f.Name, "|"), field(f.ID, "|"), kindLabel(f))
	if f.Size != nil {
		fmt.Fprintf(&b, " | %s", humanBytes(*f.Size))
	}
	fmt.Fprintf(&b, " | modified %s", f.ModifiedTime.Format("2006-01-02 15:04 UTC"))
	return b.String()
}

// kindLabel names a file's type briefly, saying how a native file travels.
func kindLabel(f File) string {
	if !f.Native {
		return field(f.MimeType, "|")
	}
	kind := exportfmt.KindName(f.MimeType)
	if f.MimeType == exportfmt.Shortcut {
		return kind + " (attach it by this id and its target goes in)"
	}
	if len(f.ExportFormats) == 0 {
		return kind + " (sent as a link)"
	}
	return fmt.Sprintf("%s (a link, or attach with as: %s)", kind, strings.Join(f.ExportFormats, "/"))
}

// fileText describes one file for drive_get_file.
func fileText(f File) string {
	s := fileLine(f)
	if f.WebViewLink != "" {
		s += "\nLink: " + field(f.WebViewLink, "")
	}
	if len(f.Sheets) > 0 {
		tabs := make([]string, len(f.Sheets))
		for i, t := range f.Sheets {
			tabs[i] = field(t, ",")
		}
		s += "\nTabs (for \"sheet\" with as csv or tsv): " + strings.Join(tabs, ", ")
	}
	return s
}

// humanBytes writes a size the way people read it.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// driveError turns a Drive failure the user can act on into a refusal;
// anything else stays internal.
func driveError(err error, id string) error {
	switch {
	case errors.Is(err, drive.ErrNotFound):
		return refusal.Wrap(err, kindUnknownFile, "No Drive file with id %q is visible to this Google account: it does not exist or is not shared with it. Check the id, or find the file with drive_search.", id)
	case errors.Is(err, drive.ErrBadID):
		return refusal.Wrap(err, kindBadFileID, "%q is not a Drive file id. Find the file with drive_search and pass its id.", truncate(id, 80))
	case errors.Is(err, drive.ErrQueryText), errors.Is(err, drive.ErrQueryMimeType),
		errors.Is(err, drive.ErrQueryPageSize), errors.Is(err, drive.ErrQueryToken), errors.Is(err, drive.ErrQueryType):
		return refusal.Wrap(err, kindBadQuery, "%s", sentence(err.Error()))
	case errors.Is(err, drive.ErrAPIDisabled):
		return refusal.Wrap(err, kindDriveAPIDisabled, "This drivemail server's Google Cloud project has not enabled the Google Drive API, so Drive cannot be searched or read. Ask whoever runs drivemail to enable it.")
	case errors.Is(err, drive.ErrScope):
		return refusal.Wrap(err, kindDriveScope, "This Google account has not given drivemail access to Drive. Reconnect drivemail (sign in again) and allow Drive access.")
	case errors.Is(err, drive.ErrUnauthorized):
		return refusal.Wrap(err, kindDriveUnauthorized, "Google no longer accepts this account's authorization (it expired or was revoked). Reconnect drivemail (sign in again) to continue.")
	case errors.Is(err, drive.ErrRateLimited), errors.Is(err, drive.ErrUnavailable):
		return refusal.Wrap(err, kindDriveUnavailable, "Google Drive is busy or unavailable right now. Try again in a minute.")
	case errors.Is(err, drive.ErrDomainPolicy):
		return refusal.Wrap(err, kindDriveDomainPolicy, "This Google account's Workspace administrator does not allow drivemail to use Google Drive. Ask the administrator to allow drivemail's access to Drive.")
	}
	return err
}

// sentence makes a drive error's text a sentence that ends with a full
// stop. A leading field name (page_token, mime_type) is quoted, as the
// tools' own refusals write field names, instead of being capitalised
// into "Page_token"; any other first letter is capitalised.
func sentence(s string) string {
	if s == "" {
		return s
	}
	if word, rest, _ := strings.Cut(s, " "); strings.Contains(word, "_") {
		s = strconv.Quote(word) + " " + rest
	} else {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
