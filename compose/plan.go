package compose

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/drivemail/drivemail/blocked"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/exportfmt"
)

// action is how an entry goes into the message.
type action int

const (
	actAttach action = iota + 1 // a Drive file's bytes
	actExport                   // a native file rendered by Drive
	actLink                     // a link in the body
	actData                     // bytes the model wrote
	actClient                   // a file the chat client holds, by URL
	actMail                     // a Gmail attachment's bytes
)

// plan is what the message does with one entry.
type plan struct {
	action    action
	inline    bool   // a multipart/related part referenced by cid:
	contentID string // for inline parts, without < >
	name      string // the file name in the message
	mimeType  string // the part's Content-Type
	format    exportfmt.Format
	tab       *drive.Sheet // the tab a csv or tsv holds, when known
	namedTab  bool         // sheet named it: read through the Sheets API
	size      int64        // known size in bytes; -1 for exports
	archive   blocked.Format
	url       string // for links
}

// isFile reports whether the entry becomes a MIME part.
func (p plan) isFile() bool { return p.action != actLink }

// planItem decides one entry's action, name and type, refusing what
// cannot be sent. No network.
func planItem(it *item) error {
	switch it.att.Source.(type) {
	case Content:
		return planData(it)
	case ClientFile:
		return planClient(it)
	case GmailAttachment:
		return planMail(it)
	case DriveFile:
	default:
		return fmt.Errorf("compose: %s has no source to plan", it.label())
	}
	f := it.file
	if f.Trashed {
		return refuse(kindTrashed, "%s is in the Drive trash. Restore it in Drive first, or pick another file.", it.label())
	}
	if it.opts.Link {
		return planLink(it)
	}
	if f.Native() {
		return planNative(it)
	}
	if it.opts.Share != "" {
		return refuse(kindBadOption, "%s is attached, not sent as a link, so \"share\" does not apply. Leave it out, or add \"link\": true to send a link that the recipients get access to.", it.label())
	}
	return planBinary(it)
}

func planLink(it *item) error {
	if it.file.WebViewLink == "" {
		return refuse(kindNoLink, "%s has no link Drive can share. Attach the file instead (leave out link).", it.label())
	}
	it.plan = plan{action: actLink, name: displayName(it), url: withResourceKey(it.file.WebViewLink, it.file.ResourceKey), size: 0}
	return nil
}

// withResourceKey makes sure a link to a file with a resource key carries
// it: without it, someone who reaches the file only through link sharing
// cannot open it. Drive's webViewLink already includes it (Drive's
// resource key guide); a link that lacks it gets it as Drive writes it.
func withResourceKey(link, key string) string {
	if key == "" {
		return link
	}
	u, err := url.Parse(link)
	if err != nil || u.Query().Has("resourcekey") {
		return link
	}
	q := u.Query()
	q.Set("resourcekey", key)
	u.RawQuery = q.Encode()
	return u.String()
}

func displayName(it *item) string {
	if n := strings.TrimSpace(it.att.Name); n != "" {
		return exportfmt.CleanName(n)
	}
	return exportfmt.CleanName(it.file.Name)
}

func planNative(it *item) error {
	f, a := it.file, it.opts
	if strings.TrimSpace(a.As) == "" {
		if a.Sheet != "" {
			return refuse(kindBadSheet, "%s: sheet picks the tab of a csv or tsv export; add as: \"csv\" (or \"tsv\"), or leave out sheet to send a link.", it.label())
		}
		return planLink(it)
	}
	format, err := exportfmt.Lookup(f.MimeType, a.As)
	if err != nil {
		return refuseErr(err, kindBadFormat, "%s: %s.", it.label(), strings.TrimSuffix(err.Error(), "."))
	}
	if !f.CanDownload {
		return refuse(kindNotDownloadable, "%s: its owner has turned off downloading and exporting. Send it as a link instead (leave out as).", it.label())
	}
	p := plan{action: actExport, format: format, mimeType: format.MimeType, size: -1}
	p.name = exportfmt.ExportName(orDefault(it.att.Name, f.Name), format)
	if format.NeedsTab {
		tab, err := pickTab(it)
		if err != nil {
			return err
		}
		p.tab, p.namedTab = tab, strings.TrimSpace(a.Sheet) != ""
	} else if a.Sheet != "" {
		return refuse(kindBadSheet, "%s: sheet applies only to csv and tsv, which hold one tab; %s includes every tab. Leave out sheet, or use as: \"csv\".", it.label(), format.Name)
	}
	p.archive = blocked.FormatOf(p.name, p.mimeType)
	it.plan = p
	return checkName(it, p.name)
}

// pickTab finds the tab named by sheet. Without sheet, a spreadsheet's
// first tab goes, as Drive's own csv export does, and the result says
// which one went (unless the tabs are unknown: see withTabs). The match
// is exact, else case- and space-insensitive if that names one tab.
func pickTab(it *item) (*drive.Sheet, error) {
	tabs := it.file.Sheets
	if len(tabs) == 0 && it.file.TabsUnknown && strings.TrimSpace(it.opts.Sheet) == "" {
		return nil, nil
	}
	if len(tabs) == 0 {
		return nil, refuse(kindBadTab, "%s has no tabs to export. Send it as a link (leave out as), or use as: \"xlsx\".", it.label())
	}
	want := it.opts.Sheet
	if want == "" {
		return &tabs[0], nil
	}
	for i := range tabs {
		if tabs[i].Title == want {
			return &tabs[i], nil
		}
	}
	var found *drive.Sheet
	for i := range tabs {
		if strings.EqualFold(strings.TrimSpace(tabs[i].Title), strings.TrimSpace(want)) {
			if found != nil {
				found = nil
				break
			}
			found = &tabs[i]
		}
	}
	if found != nil {
		return found, nil
	}
	names := make([]string, len(tabs))
	for i, t := range tabs {
		names[i] = fmt.Sprintf("%q", t.Title)
	}
	return nil, refuse(kindBadTab, "%s has no tab named %q. Its tabs are: %s. Use one of those as sheet.", it.label(), truncate(want, 60), strings.Join(names, ", "))
}

func planBinary(it *item) error {
	f, a := it.file, it.opts
	if a.As != "" && !sameFormat(f, a.As) {
		err := &exportfmt.FormatError{NativeType: f.MimeType, Given: a.As}
		return refuseErr(err, kindBadFormat, "%s: %s.", it.label(), strings.TrimSuffix(err.Error(), "."))
	}
	if a.Sheet != "" {
		return refuse(kindBadSheet, "%s: sheet applies only to a Google Sheet exported as csv or tsv. Leave out sheet.", it.label())
	}
	if !f.CanDownload {
		return refuse(kindNotDownloadable, "%s: its owner has turned off downloading. Send it as a link instead (link: true).", it.label())
	}
	ext := path.Ext(exportfmt.CleanName(f.Name))
	if ext == "" || ext == exportfmt.CleanName(f.Name) {
		ext = exportfmt.ExtByMimeType(f.MimeType)
	}
	name := exportfmt.CleanName(f.Name)
	if strings.TrimSpace(it.att.Name) != "" {
		name = exportfmt.WithExt(it.att.Name, ext)
	}
	mimeType := f.MimeType
	if !validMimeType(mimeType) {
		mimeType = exportfmt.OctetStream
	}
	it.plan = plan{action: actAttach, name: name, mimeType: mimeType, size: f.Size, archive: blocked.FormatOf(name, mimeType)}
	if err := checkName(it, f.Name); err != nil {
		return err
	}
	return checkName(it, name)
}

// sameFormat reports whether as names the format a binary file already
// has ("pdf" for a PDF), which needs no conversion.
func sameFormat(f drive.File, as string) bool {
	want := exportfmt.ParseName(as)
	if want == "" {
		return false
	}
	ext := strings.TrimPrefix(strings.ToLower(path.Ext(f.Name)), ".")
	return want == ext || "."+want == exportfmt.ExtByMimeType(f.MimeType)
}

func planData(it *item) error {
	name := exportfmt.CleanName(it.att.Name)
	if path.Ext(name) == "" {
		name = exportfmt.WithExt(name, exportfmt.ExtByMimeType(it.dataType))
	}
	it.plan = plan{action: actData, name: name, mimeType: it.dataType, size: int64(len(it.data)), archive: blocked.FormatOf(name, it.dataType)}
	return checkName(it, name)
}

// checkName refuses a name Gmail blocks.
func checkName(it *item, name string) error {
	if err := blocked.CheckName(name); err != nil {
		var f *blocked.Finding
		if errors.As(err, &f) {
			return blockedRefusal(it, f, "")
		}
		return err
	}
	return nil
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
