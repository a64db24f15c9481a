package exportfmt

import (
	"sort"
	"strings"
)

// typeFilter is what one friendly type word matches in Drive.
type typeFilter struct {
	exact    []string // mimeType = '…'
	prefixes []string // mimeType contains '…'
}

// typeWords are the words a model may use for drive_search's mime_type,
// each matching the native Google type and the common file types people
// mean by it ("a spreadsheet" is a Google Sheet or an Excel file). A CSV
// is text, not a spreadsheet: it has its own word, csv.
var typeWords = map[string]typeFilter{
	"pdf": {exact: []string{"application/pdf"}},
	"document": {exact: []string{
		Document, byExt[".docx"], byExt[".doc"], byExt[".odt"], "application/rtf",
	}},
	"spreadsheet": {exact: []string{
		Spreadsheet, byExt[".xlsx"], byExt[".xls"], byExt[".ods"],
		"application/x-vnd.oasis.opendocument.spreadsheet",
	}},
	"presentation": {exact: []string{
		Presentation, byExt[".pptx"], byExt[".ppt"], byExt[".odp"],
	}},
	"drawing":  {exact: []string{Drawing}},
	"form":     {exact: []string{Form}},
	"folder":   {exact: []string{Folder}},
	"shortcut": {exact: []string{Shortcut}},
	"image":    {prefixes: []string{"image/"}},
	"video":    {prefixes: []string{"video/"}, exact: []string{Vid}},
	"audio":    {prefixes: []string{"audio/"}},
	"text":     {exact: []string{"text/plain", "text/markdown", "text/csv"}},
	"csv":      {exact: []string{"text/csv"}},
	"archive": {exact: []string{
		"application/zip", "application/x-zip-compressed", "application/gzip",
		"application/x-gzip", "application/x-tar", "application/x-7z-compressed",
		"application/vnd.rar", "application/x-rar-compressed", "application/x-bzip2",
	}},
}

// typeSynonyms maps other words to the keys of typeWords.
var typeSynonyms = map[string]string{
	"doc": "document", "docs": "document", "word": "document", "google doc": "document",
	"sheet": "spreadsheet", "sheets": "spreadsheet", "excel": "spreadsheet", "google sheet": "spreadsheet",
	"slides": "presentation", "slide": "presentation", "deck": "presentation",
	"powerpoint": "presentation", "google slides": "presentation",
	"drawings": "drawing", "forms": "form", "folders": "folder", "directory": "folder",
	"images": "image", "photo": "image", "photos": "image", "picture": "image", "pictures": "image",
	"videos": "video", "movie": "video", "music": "audio", "sound": "audio",
	"pdfs": "pdf", "txt": "text", "zip": "archive", "zips": "archive", "archives": "archive",
}

// TypeQuery turns a friendly type word ("pdf", "doc", "spreadsheet",
// "slides", "image", "folder", "video", "audio", "zip", …; case and
// plurals are forgiven) into a Drive files.list `q` fragment such as
// `(mimeType = 'application/pdf')`. ok is false for any other word: the
// caller should then treat the argument as a literal MIME type, escaping
// it itself. The fragment is built only from this package's constants.
func TypeQuery(word string) (q string, ok bool) {
	w := strings.Join(strings.Fields(strings.ToLower(word)), " ")
	if s, found := typeSynonyms[w]; found {
		w = s
	}
	f, found := typeWords[w]
	if !found {
		return "", false
	}
	terms := make([]string, 0, len(f.exact)+len(f.prefixes))
	for _, t := range f.exact {
		terms = append(terms, "mimeType = '"+t+"'")
	}
	for _, p := range f.prefixes {
		terms = append(terms, "mimeType contains '"+p+"'")
	}
	return "(" + strings.Join(terms, " or ") + ")", true
}

// TypeWords lists the canonical type words TypeQuery knows, sorted, for a
// tool description or an error message.
func TypeWords() []string {
	words := make([]string, 0, len(typeWords))
	for w := range typeWords {
		words = append(words, w)
	}
	sort.Strings(words)
	return words
}
