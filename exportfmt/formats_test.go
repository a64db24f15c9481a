package exportfmt

import (
	"errors"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		native, as string
		name, mime string
		ext        string
		tab        bool
	}{
		{Document, "pdf", "pdf", "application/pdf", ".pdf", false},
		{Document, ".PDF", "pdf", "application/pdf", ".pdf", false},
		{Document, " PDF ", "pdf", "application/pdf", ".pdf", false},
		{Document, "application/pdf", "pdf", "application/pdf", ".pdf", false},
		{Document, "word", "docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", ".docx", false},
		{Document, "doc", "docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", ".docx", false},
		{Document, "markdown", "md", "text/markdown", ".md", false},
		{Document, "text", "txt", "text/plain", ".txt", false},
		{Document, "html", "html", "application/zip", ".zip", false},
		{Document, "epub", "epub", "application/epub+zip", ".epub", false},
		{Document, "odt", "odt", "application/vnd.oasis.opendocument.text", ".odt", false},
		{Document, "rtf", "rtf", "application/rtf", ".rtf", false},
		{Spreadsheet, "excel", "xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", ".xlsx", false},
		{Spreadsheet, "CSV", "csv", "text/csv", ".csv", true},
		{Spreadsheet, "tsv", "tsv", "text/tab-separated-values", ".tsv", true},
		{Spreadsheet, "ods", "ods", "application/x-vnd.oasis.opendocument.spreadsheet", ".ods", false},
		{Spreadsheet, "application/vnd.oasis.opendocument.spreadsheet", "ods", "application/x-vnd.oasis.opendocument.spreadsheet", ".ods", false},
		{Spreadsheet, "html", "html", "application/zip", ".zip", false},
		{Spreadsheet, "pdf", "pdf", "application/pdf", ".pdf", false},
		{Presentation, "powerpoint", "pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation", ".pptx", false},
		{Presentation, "odp", "odp", "application/vnd.oasis.opendocument.presentation", ".odp", false},
		{Presentation, "txt", "txt", "text/plain", ".txt", false},
		{Drawing, "jpeg", "jpg", "image/jpeg", ".jpg", false},
		{Drawing, "*.png", "png", "image/png", ".png", false},
		{Drawing, "image/svg+xml", "svg", "image/svg+xml", ".svg", false},
		{Document + "; charset=x", "pdf", "pdf", "application/pdf", ".pdf", false},
		{strings.ToUpper(Document), "pdf", "pdf", "application/pdf", ".pdf", false},
	}
	for _, tt := range tests {
		f, err := Lookup(tt.native, tt.as)
		if err != nil {
			t.Errorf("Lookup(%q, %q): %v", tt.native, tt.as, err)
			continue
		}
		if f.Name != tt.name || f.MimeType != tt.mime || f.Ext != tt.ext || f.NeedsTab != tt.tab {
			t.Errorf("Lookup(%q, %q) = %+v, want %s %s %s tab=%v", tt.native, tt.as, f, tt.name, tt.mime, tt.ext, tt.tab)
		}
	}
}

func TestLookupRefusals(t *testing.T) {
	tests := []struct {
		native, as string
		want       []string // substrings of the sentence
	}{
		{Document, "xlsx", []string{`"xlsx" is not an export format for a Google Doc`, "pdf, docx, odt, rtf, txt, html, epub, md"}},
		{Spreadsheet, "docx", []string{"Google Sheet", "xlsx, ods, pdf, csv, tsv, html"}},
		{Presentation, "csv", []string{"Google Slides", "pptx, odp, pdf, txt"}},
		{Drawing, "gif", []string{"Google Drawing", "pdf, png, jpg, svg"}},
		{Document, "", []string{"an export format is needed for a Google Doc"}},
		{Folder, "pdf", []string{"a Drive folder cannot be exported or attached; send it as a link"}},
		{Form, "pdf", []string{"a Google Form cannot be exported"}},
		{"application/vnd.google-apps.unknownthing", "pdf", []string{"a Google Workspace file cannot be exported"}},
		{"application/pdf", "docx", []string{"export formats apply only to Google Docs", "attach it without `as`"}},
		{Document, strings.Repeat("x", 100), []string{`"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…"`}},
	}
	for _, tt := range tests {
		_, err := Lookup(tt.native, tt.as)
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("Lookup(%q, %q) = %v, want a *FormatError", tt.native, tt.as, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Lookup(%q, %q) error %q does not contain %q", tt.native, tt.as, err, w)
			}
		}
	}
}

func TestEveryFormatRoundTrips(t *testing.T) {
	for native := range table {
		for _, f := range Formats(native) {
			for _, spelled := range []string{f.Name, strings.ToUpper(f.Name), "." + f.Name, f.MimeType} {
				got, err := Lookup(native, spelled)
				if err != nil || got != f {
					t.Errorf("Lookup(%s, %q) = %+v, %v; want %+v", native, spelled, got, err, f)
				}
			}
		}
	}
}

func TestNativeKinds(t *testing.T) {
	tests := []struct {
		mime               string
		native, exportable bool
		kind               string
	}{
		{Document, true, true, "Google Doc"},
		{Spreadsheet, true, true, "Google Sheet"},
		{Presentation, true, true, "Google Slides presentation"},
		{Drawing, true, true, "Google Drawing"},
		{Folder, true, false, "Drive folder"},
		{Shortcut, true, false, "Drive shortcut"},
		{Form, true, false, "Google Form"},
		{Site, true, false, "Google Site"},
		{Script, true, false, "Apps Script project"},
		{"application/vnd.google-apps.new", true, false, "Google Workspace file"},
		{"application/pdf", false, false, "file"},
		{"", false, false, "file"},
	}
	for _, tt := range tests {
		if got := IsNative(tt.mime); got != tt.native {
			t.Errorf("IsNative(%q) = %v", tt.mime, got)
		}
		if got := IsExportable(tt.mime); got != tt.exportable {
			t.Errorf("IsExportable(%q) = %v", tt.mime, got)
		}
		if got := KindName(tt.mime); got != tt.kind {
			t.Errorf("KindName(%q) = %q, want %q", tt.mime, got, tt.kind)
		}
		if !tt.exportable && (Formats(tt.mime) != nil || len(FormatNames(tt.mime)) != 0) {
			t.Errorf("Formats(%q) not empty", tt.mime)
		}
	}
}

func TestFormatsIsACopy(t *testing.T) {
	fs := Formats(Document)
	fs[0].Name = "changed"
	if Formats(Document)[0].Name != "pdf" {
		t.Fatal("Formats returned the table itself")
	}
}

func TestParseName(t *testing.T) {
	tests := map[string]string{
		"PDF": "pdf", ".Pdf": "pdf", "*.pdf": "pdf", "application/pdf; charset=x": "pdf",
		"Word": "docx", "msword": "docx", "XLS": "xlsx", "ppt": "pptx", "Markdown": "md",
		"Plain  Text": "txt", "JPEG": "jpg", "web page": "html", "text/html": "html",
		"application/zip": "html", "zip": "html",
		"gif": "gif", "application/x-unknown": "application/x-unknown", "": "",
	}
	for in, want := range tests {
		if got := ParseName(in); got != want {
			t.Errorf("ParseName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSameMediaType(t *testing.T) {
	tests := []struct {
		got, want string
		same      bool
	}{
		{"text/csv", "text/csv", true},
		{"text/csv; charset=UTF-8", "text/csv", true},
		{"Text/CSV", "text/csv", true},
		{"text/x-markdown", "text/markdown", true},
		{"application/vnd.oasis.opendocument.spreadsheet", "application/x-vnd.oasis.opendocument.spreadsheet", true},
		{"text/html; charset=utf-8", "text/csv", false},
		{"application/json; charset=UTF-8", "application/pdf", false},
		{"", "application/pdf", false},
		{"text/plain", "text/markdown", false},
	}
	for _, tt := range tests {
		if got := SameMediaType(tt.got, tt.want); got != tt.same {
			t.Errorf("SameMediaType(%q, %q) = %v, want %v", tt.got, tt.want, got, tt.same)
		}
	}
}
