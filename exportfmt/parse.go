package exportfmt

import "strings"

// synonyms maps the words people use for a format to its canonical name.
// Each one names exactly one format family, so nothing here surprises:
// "word" can only mean docx, since Google exports no .doc.
var synonyms = map[string]string{
	"word": "docx", "doc": "docx", "msword": "docx",
	"excel": "xlsx", "xls": "xlsx",
	"powerpoint": "pptx", "ppt": "pptx",
	"markdown": "md",
	"text":     "txt", "plain": "txt", "plaintext": "txt", "plain text": "txt",
	"jpeg": "jpg",
	"htm":  "html", "web page": "html", "webpage": "html", "zip": "html",
	"acrobat":                   "pdf",
	"opendocument text":         "odt",
	"opendocument spreadsheet":  "ods",
	"opendocument presentation": "odp",
	"comma separated values":    "csv", "comma-separated values": "csv",
	"tab separated values": "tsv", "tab-separated values": "tsv",
}

// mimeNames maps export MIME types (and the variants Drive also lists) to
// format names, so a caller may pass "application/pdf" as a format.
var mimeNames = func() map[string]string {
	m := map[string]string{
		"application/vnd.oasis.opendocument.spreadsheet": "ods",
		"text/html":                     "html",
		"application/x-zip-compressed":  "html",
		"application/msword":            "docx",
		"application/vnd.ms-excel":      "xlsx",
		"application/vnd.ms-powerpoint": "pptx",
		"text/x-markdown":               "md",
		"image/jpg":                     "jpg",
	}
	for _, fs := range table {
		for _, f := range fs {
			m[f.MimeType] = f.Name
		}
	}
	return m
}()

// ParseName turns what a caller typed for a format into a canonical format
// name, leniently: case and surrounding space are ignored, a leading dot or
// "*." is dropped (".PDF" → "pdf"), an export MIME type becomes its name
// ("application/pdf" → "pdf"), and common words map to the one format they
// can mean ("word" → "docx", "excel" → "xlsx", "markdown" → "md",
// "text" → "txt", "jpeg" → "jpg"). Anything else comes back cleaned but
// otherwise unchanged, for Lookup to refuse.
func ParseName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimPrefix(s, "*")
	s = strings.TrimPrefix(s, ".")
	if strings.Contains(s, "/") {
		t, _, _ := strings.Cut(s, ";")
		if n, ok := mimeNames[strings.TrimSpace(t)]; ok {
			return n
		}
		return s
	}
	s = strings.Join(strings.Fields(s), " ")
	if n, ok := synonyms[s]; ok {
		return n
	}
	return s
}
