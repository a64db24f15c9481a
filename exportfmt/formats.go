// Package exportfmt knows what Google's native files can become: the
// export-format table (native type × format name → export MIME type and
// file extension), lenient parsing of the format a model asks for, the
// friendly type words of a Drive search, and the file-name rules for
// everything that goes out as an attachment.
//
// It is pure data and string handling: no I/O, no network, safe for
// concurrent use.
package exportfmt

import (
	"fmt"
	"strings"
)

// Native Google MIME types. Only the first four can be exported; the rest
// are known so that callers can say precisely why one cannot be attached.
const (
	Document     = "application/vnd.google-apps.document"
	Spreadsheet  = "application/vnd.google-apps.spreadsheet"
	Presentation = "application/vnd.google-apps.presentation"
	Drawing      = "application/vnd.google-apps.drawing"

	Folder   = "application/vnd.google-apps.folder"
	Shortcut = "application/vnd.google-apps.shortcut"
	Form     = "application/vnd.google-apps.form"
	Site     = "application/vnd.google-apps.site"
	Script   = "application/vnd.google-apps.script"
	Map      = "application/vnd.google-apps.map"
	Jam      = "application/vnd.google-apps.jam"
	Vid      = "application/vnd.google-apps.vid"
	DriveSDK = "application/vnd.google-apps.drive-sdk"
	Fusion   = "application/vnd.google-apps.fusiontable"

	// NativePrefix starts every native Google type.
	NativePrefix = "application/vnd.google-apps."
)

// Format is one way of exporting a native file.
type Format struct {
	// Name is the canonical short name a caller passes as `as`: "pdf", "docx".
	Name string
	// MimeType is the export MIME type to ask Drive for (files.export's
	// mimeType, and the key of the file's exportLinks).
	MimeType string
	// Ext is the file extension of the result, with its dot: ".pdf".
	Ext string
	// NeedsTab is true where Google exports a single tab of a spreadsheet
	// (csv, tsv): the caller should name one.
	NeedsTab bool
}

// MIME types shared by several rows of the table.
const (
	mimePDF  = "application/pdf"
	mimeZip  = "application/zip"
	mimeText = "text/plain"
)

// table lists each exportable native type's formats in the order they are
// offered to users (most useful first).
var table = map[string][]Format{
	Document: {
		{Name: "pdf", MimeType: mimePDF, Ext: ".pdf"},
		{Name: "docx", MimeType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", Ext: ".docx"},
		{Name: "odt", MimeType: "application/vnd.oasis.opendocument.text", Ext: ".odt"},
		{Name: "rtf", MimeType: "application/rtf", Ext: ".rtf"},
		{Name: "txt", MimeType: mimeText, Ext: ".txt"},
		// Google's HTML export of a Doc is a zip of the page and its images,
		// so the file is named .zip: a .html name would mislead the recipient.
		{Name: "html", MimeType: mimeZip, Ext: ".zip"},
		{Name: "epub", MimeType: "application/epub+zip", Ext: ".epub"},
		{Name: "md", MimeType: "text/markdown", Ext: ".md"},
	},
	Spreadsheet: {
		{Name: "xlsx", MimeType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", Ext: ".xlsx"},
		{Name: "ods", MimeType: "application/x-vnd.oasis.opendocument.spreadsheet", Ext: ".ods"},
		{Name: "pdf", MimeType: mimePDF, Ext: ".pdf"},
		{Name: "csv", MimeType: "text/csv", Ext: ".csv", NeedsTab: true},
		{Name: "tsv", MimeType: "text/tab-separated-values", Ext: ".tsv", NeedsTab: true},
		// One page per tab, zipped.
		{Name: "html", MimeType: mimeZip, Ext: ".zip"},
	},
	Presentation: {
		{Name: "pptx", MimeType: "application/vnd.openxmlformats-officedocument.presentationml.presentation", Ext: ".pptx"},
		{Name: "odp", MimeType: "application/vnd.oasis.opendocument.presentation", Ext: ".odp"},
		{Name: "pdf", MimeType: mimePDF, Ext: ".pdf"},
		{Name: "txt", MimeType: mimeText, Ext: ".txt"},
	},
	Drawing: {
		{Name: "pdf", MimeType: mimePDF, Ext: ".pdf"},
		{Name: "png", MimeType: "image/png", Ext: ".png"},
		{Name: "jpg", MimeType: "image/jpeg", Ext: ".jpg"},
		{Name: "svg", MimeType: "image/svg+xml", Ext: ".svg"},
	},
}

// kindNames are the words used for native types in sentences.
var kindNames = map[string]string{
	Document:     "Google Doc",
	Spreadsheet:  "Google Sheet",
	Presentation: "Google Slides presentation",
	Drawing:      "Google Drawing",
	Folder:       "Drive folder",
	Shortcut:     "Drive shortcut",
	Form:         "Google Form",
	Site:         "Google Site",
	Script:       "Apps Script project",
	Map:          "Google My Map",
	Jam:          "Jamboard",
	Vid:          "Google Vids video",
	DriveSDK:     "third-party Drive app file",
	Fusion:       "Fusion Table",
}

// IsNative reports whether mimeType is a native Google type
// (application/vnd.google-apps.*), which has no bytes of its own.
func IsNative(mimeType string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(mimeType)), NativePrefix)
}

// IsExportable reports whether a native file of this type can be exported
// and attached (Docs, Sheets, Slides, Drawings).
func IsExportable(nativeType string) bool {
	_, ok := table[normType(nativeType)]
	return ok
}

// KindName is the short English name of a native type for sentences:
// "Google Doc", "Google Sheet", "Drive folder". An unknown native type is
// "Google Workspace file"; a non-native type is "file".
func KindName(mimeType string) string {
	t := normType(mimeType)
	if n, ok := kindNames[t]; ok {
		return n
	}
	if IsNative(t) {
		return "Google Workspace file"
	}
	return "file"
}

// Formats returns the export formats of a native type, most useful first,
// or nil if it cannot be exported. The slice is a copy.
func Formats(nativeType string) []Format {
	fs := table[normType(nativeType)]
	if fs == nil {
		return nil
	}
	return append([]Format(nil), fs...)
}

// FormatNames returns the names of Formats(nativeType): ["pdf" "docx" …].
func FormatNames(nativeType string) []string {
	fs := table[normType(nativeType)]
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return names
}

// Lookup resolves the export format a caller asked for (leniently, see
// ParseName) for a native type. Its error is a *FormatError whose text is
// a sentence for the user that lists the valid formats.
func Lookup(nativeType, format string) (Format, error) {
	t := normType(nativeType)
	fs, ok := table[t]
	if !ok {
		return Format{}, &FormatError{NativeType: t, Given: format}
	}
	name := ParseName(format)
	for _, f := range fs {
		if f.Name == name {
			return f, nil
		}
	}
	return Format{}, &FormatError{NativeType: t, Given: format, Valid: FormatNames(t)}
}

// FormatError says that a format does not apply to a file.
type FormatError struct {
	NativeType string   // the file's type
	Given      string   // what the caller asked for
	Valid      []string // the formats that would work; empty if none
}

func (e *FormatError) Error() string {
	kind := KindName(e.NativeType)
	if len(e.Valid) == 0 {
		if !IsNative(e.NativeType) {
			return fmt.Sprintf("export formats apply only to Google Docs, Sheets, Slides and Drawings; this is a regular %s: attach it without `as`", kind)
		}
		return fmt.Sprintf("a %s cannot be exported or attached; send it as a link instead (leave out `as`)", kind)
	}
	given := strings.TrimSpace(e.Given)
	if given == "" {
		return fmt.Sprintf("an export format is needed for a %s; use one of: %s", kind, strings.Join(e.Valid, ", "))
	}
	return fmt.Sprintf("%q is not an export format for a %s; use one of: %s", truncate(given, 40), kind, strings.Join(e.Valid, ", "))
}

// normType lower-cases a MIME type and drops any parameters.
func normType(mimeType string) string {
	t, _, _ := strings.Cut(mimeType, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

// truncate bounds s to n runes for quoting in a sentence.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
