package drivesvc

import (
	"io"
	"mime"
	"net/url"
	"strings"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/emulator/internal/render"
)

// exportFormat is one target a native type exports to.
type exportFormat struct {
	mime  string // files.export's mimeType
	param string // exportFormat in export links
	ext   string // file extension of the result
	link  bool   // listed in the file's exportLinks
	write func(w io.Writer, sn *snapshot) error
}

// MIME types of export targets.
const (
	mimePDF  = "application/pdf"
	mimeDOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	mimeXLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	mimePPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
	mimeZip  = "application/zip"
)

// exportFormats is Google's export table ("Export MIME types for Google
// Workspace documents"), in the order about.exportFormats lists them.
var exportFormats = map[Kind][]exportFormat{
	KindDoc: {
		{"application/rtf", "rtf", "rtf", true, docWriter(render.DocRTF)},
		{render.MimeODT, "odt", "odt", true, docWriter(render.DocODT)},
		{"text/html", "html", "html", true, docWriter(render.DocHTML)},
		{mimePDF, "pdf", "pdf", true, docWriter(render.DocPDF)},
		{"text/markdown", "md", "md", true, docWriter(render.DocMD)},
		{"text/x-markdown", "md", "md", false, docWriter(render.DocMD)},
		{render.MimeEPUB, "epub", "epub", true, docWriter(render.DocEPUB)},
		{mimeZip, "zip", "zip", true, docWriter(render.DocHTMLZip)},
		{mimeDOCX, "docx", "docx", true, docWriter(render.DocDOCX)},
		{"text/plain", "txt", "txt", true, docWriter(render.DocTXT)},
	},
	KindSheet: {
		{"application/x-vnd.oasis.opendocument.spreadsheet", "ods", "ods", true, bookWriter(render.WorkbookODS, false)},
		{"text/tab-separated-values", "tsv", "tsv", true, tabWriter(render.TabTSV)},
		{mimePDF, "pdf", "pdf", true, bookWriter(render.WorkbookPDF, true)},
		{mimeXLSX, "xlsx", "xlsx", true, bookWriter(render.WorkbookXLSX, false)},
		{"text/csv", "csv", "csv", true, tabWriter(render.TabCSV)},
		{mimeZip, "zip", "zip", true, bookWriter(render.WorkbookHTMLZip, true)},
		{render.MimeODS, "ods", "ods", true, bookWriter(render.WorkbookODS, false)},
	},
	KindSlides: {
		{render.MimeODP, "odp", "odp", true, deckWriter(render.DeckODP)},
		{mimePDF, "pdf", "pdf", true, deckWriter(render.DeckPDF)},
		{mimePPTX, "pptx", "pptx", true, deckWriter(render.DeckPPTX)},
		{"text/plain", "txt", "txt", true, deckWriter(render.DeckTXT)},
		{"image/jpeg", "jpeg", "jpg", false, deckWriter(render.DeckJPEG)},
		{"image/png", "png", "png", false, deckWriter(render.DeckPNG)},
		{"image/svg+xml", "svg", "svg", false, deckWriter(render.DeckSVG)},
	},
	KindDrawing: {
		{"image/svg+xml", "svg", "svg", true, drawingWriter(render.DrawingSVG)},
		{"image/png", "png", "png", true, drawingWriter(render.DrawingPNG)},
		{mimePDF, "pdf", "pdf", true, drawingWriter(render.DrawingPDF)},
		{"image/jpeg", "jpeg", "jpg", true, drawingWriter(render.DrawingJPEG)},
	},
}

// exportLinkRoutes are the paths of Google's export links, per kind.
var exportLinkRoutes = []struct {
	path string
	kind Kind
}{
	{"/feeds/download/documents/export/Export", KindDoc},
	{"/spreadsheets/export", KindSheet},
	{"/feeds/download/presentations/Export", KindSlides},
	{"/feeds/download/drawings/Export", KindDrawing},
}

// exportLinks is a native file's exportLinks: MIME type → URL on origin.
func exportLinks(origin string, f *file) map[string]string {
	base := ""
	for _, r := range exportLinkRoutes {
		if r.kind == f.kind {
			base = origin + r.path + "?id=" + f.id + "&exportFormat="
		}
	}
	key := ""
	if f.resourceKey != "" {
		// Google puts a link-shared file's key in its exportLinks, as in
		// its web links.
		key = "&resourcekey=" + url.QueryEscape(f.resourceKey)
	}
	links := map[string]string{}
	for _, ef := range exportFormats[f.kind] {
		if ef.link {
			links[ef.mime] = base + ef.param + key
		}
	}
	return links
}

// formatByMime finds the export of kind named by a files.export mimeType.
func formatByMime(k Kind, mimeType string) (exportFormat, bool) {
	mt, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		return exportFormat{}, false
	}
	for _, ef := range exportFormats[k] {
		if ef.mime == mt {
			return ef, true
		}
	}
	return exportFormat{}, false
}

// formatByParam finds the export of kind named by an export link's exportFormat.
func formatByParam(k Kind, param string) (exportFormat, bool) {
	for _, ef := range exportFormats[k] {
		if strings.EqualFold(ef.param, param) || ef.ext == strings.ToLower(param) {
			return ef, true
		}
	}
	return exportFormat{}, false
}

// snapshot is what an export renders, copied out of a file under the lock
// so rendering runs without it. Content in blobs and tabs is immutable.
type snapshot struct {
	id       string
	title    string
	kind     Kind
	modified time.Time
	blobs    *core.Blobs
	body     string // a Doc's body blob
	tabs     []*tab
	slides   []slide
	drawing  []string
	gid      *int64 // the tab chosen by an export link's gid
}

// snapshotOf copies f for rendering. The caller holds s.mu.
func (s *Service) snapshotOf(f *file) *snapshot {
	return &snapshot{
		id: f.id, title: f.name, kind: f.kind, modified: f.modified, blobs: s.deps.Blobs,
		body: f.blob.ID, tabs: append([]*tab(nil), f.tabs...), slides: f.slides, drawing: f.drawing,
	}
}

func (sn *snapshot) doc() render.Doc {
	return render.Doc{Title: sn.title, Modified: sn.modified, Body: docSource(sn.blobs, sn.body)}
}

// renderTab converts a tab for the render package.
func renderTab(t *tab) render.Tab { return render.Tab{Title: t.title, Rows: t.rows} }

// selectedTabs is the tab a gid chose, or every tab.
func (sn *snapshot) selectedTabs() []*tab {
	if sn.gid != nil {
		for _, t := range sn.tabs {
			if t.id == *sn.gid {
				return []*tab{t}
			}
		}
	}
	return sn.tabs
}

func (sn *snapshot) workbook(honourGid bool) render.Workbook {
	tabs := sn.tabs
	if honourGid {
		tabs = sn.selectedTabs()
	}
	wb := render.Workbook{Title: sn.title, Modified: sn.modified}
	for _, t := range tabs {
		wb.Tabs = append(wb.Tabs, renderTab(t))
	}
	return wb
}

// firstTab is the tab CSV and TSV export: the gid's, else the first.
func (sn *snapshot) firstTab() render.Tab {
	tabs := sn.selectedTabs()
	if len(tabs) == 0 {
		return render.Tab{}
	}
	return renderTab(tabs[0])
}

func (sn *snapshot) deck() render.Deck {
	d := render.Deck{Title: sn.title, Modified: sn.modified}
	for _, sl := range sn.slides {
		d.Slides = append(d.Slides, render.Slide{Title: sl.title, Body: sl.body})
	}
	return d
}

func docWriter(fn func(io.Writer, render.Doc) error) func(io.Writer, *snapshot) error {
	return func(w io.Writer, sn *snapshot) error { return fn(w, sn.doc()) }
}

// bookWriter renders the workbook; honourGid limits it to an export
// link's gid tab, as Google does for per-sheet formats.
func bookWriter(fn func(io.Writer, render.Workbook) error, honourGid bool) func(io.Writer, *snapshot) error {
	return func(w io.Writer, sn *snapshot) error { return fn(w, sn.workbook(honourGid)) }
}

func tabWriter(fn func(io.Writer, render.Tab) error) func(io.Writer, *snapshot) error {
	return func(w io.Writer, sn *snapshot) error { return fn(w, sn.firstTab()) }
}

func deckWriter(fn func(io.Writer, render.Deck) error) func(io.Writer, *snapshot) error {
	return func(w io.Writer, sn *snapshot) error { return fn(w, sn.deck()) }
}

func drawingWriter(fn func(io.Writer, render.Drawing) error) func(io.Writer, *snapshot) error {
	return func(w io.Writer, sn *snapshot) error {
		return fn(w, render.Drawing{Title: sn.title, Modified: sn.modified, Lines: sn.drawing})
	}
}
