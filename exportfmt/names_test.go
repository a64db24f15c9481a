package exportfmt

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{"  report.pdf  ", "report.pdf"},
		{"Q3/Q4 report.pdf", "Q3_Q4 report.pdf"},
		{`..\..\evil.pdf`, ".._.._evil.pdf"},
		{"../../etc/passwd", ".._.._etc_passwd"},
		{"line\r\nbreak.txt", "line break.txt"},
		{"tab\there.txt", "tab here.txt"},
		{"nul\x00byte.txt", "nul byte.txt"},
		{"many     spaces.txt", "many spaces.txt"},
		{"report\u202Efdp.exe", "reportfdp.exe"}, // right-to-left override removed
		{"zero\u200Bwidth.pdf", "zerowidth.pdf"},
		{"\uFEFFbom.txt", "bom.txt"},
		{"bad\xffutf8.txt", "bad_utf8.txt"},
		{"real\uFFFDreplacement.txt", "real\uFFFDreplacement.txt"},
		{"trailing dots...", "trailing dots"},
		{"trailing. . .", "trailing"},
		{"Отчёт 2024.pdf", "Отчёт 2024.pdf"},
		{"", FallbackName},
		{"   ", FallbackName},
		{".", FallbackName},
		{"..", FallbackName},
		{"...", FallbackName},
		{"\x01\x02", FallbackName},
		{".bashrc", ".bashrc"},
	}
	for _, tt := range tests {
		if got := CleanName(tt.in); got != tt.want {
			t.Errorf("CleanName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCleanNameLength(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"exactly the limit stays", strings.Repeat("a", 251) + ".pdf", strings.Repeat("a", 251) + ".pdf"},
		{"one past keeps the extension", strings.Repeat("a", 252) + ".pdf", strings.Repeat("a", 251) + ".pdf"},
		{"no extension", strings.Repeat("b", 300), strings.Repeat("b", 255)},
		// "й" is 2 bytes: 125 of them (250 bytes) + ".pdf" (4) = 254 ≤ 255.
		{"cut on a character boundary", strings.Repeat("й", 200) + ".pdf", strings.Repeat("й", 125) + ".pdf"},
		{"a long 'extension' is not kept", "a." + strings.Repeat("x", 300), "a." + strings.Repeat("x", 253)},
	}
	for _, tt := range tests {
		got := CleanName(tt.in)
		if got != tt.want {
			t.Errorf("%s: CleanName = %q (%d bytes), want %q", tt.name, got, len(got), tt.want)
		}
		if len(got) > MaxNameBytes || !utf8.ValidString(got) {
			t.Errorf("%s: %d bytes, valid UTF-8 %v", tt.name, len(got), utf8.ValidString(got))
		}
	}
}

func TestExportName(t *testing.T) {
	pdf, _ := Lookup(Document, "pdf")
	docx, _ := Lookup(Document, "docx")
	csv, _ := Lookup(Spreadsheet, "csv")
	html, _ := Lookup(Document, "html")
	tests := []struct {
		name string
		f    Format
		want string
	}{
		{"report", pdf, "report.pdf"},
		{"report.pdf", pdf, "report.pdf"},
		{"report.PDF", pdf, "report.PDF"},
		{"report.docx", pdf, "report.pdf"},
		{"report.doc", docx, "report.docx"},
		{"Budget 2024.xlsx", csv, "Budget 2024.csv"},
		{"v1.2 notes", pdf, "v1.2 notes.pdf"},
		{"Q3.summary", pdf, "Q3.summary.pdf"},
		{"page", html, "page.zip"},
		{"page.html", html, "page.zip"},
		{"", pdf, "attachment.pdf"},
		{"a/b", pdf, "a_b.pdf"},
		{".docx", pdf, ".docx.pdf"},
		{strings.Repeat("a", 300), pdf, strings.Repeat("a", 251) + ".pdf"},
	}
	for _, tt := range tests {
		if got := ExportName(tt.name, tt.f); got != tt.want {
			t.Errorf("ExportName(%q, %s) = %q, want %q", tt.name, tt.f.Name, got, tt.want)
		}
	}
}

func TestWithExt(t *testing.T) {
	tests := []struct{ name, ext, want string }{
		{"data", ".csv", "data.csv"},
		{"data.csv", ".csv", "data.csv"},
		{"DATA.CSV", ".csv", "DATA.CSV"},
		{"data.txt", ".csv", "data.txt.csv"},
		{"notes", "", "notes"},
		{"", ".txt", "attachment.txt"},
	}
	for _, tt := range tests {
		if got := WithExt(tt.name, tt.ext); got != tt.want {
			t.Errorf("WithExt(%q, %q) = %q, want %q", tt.name, tt.ext, got, tt.want)
		}
	}
}

func TestMimeTypeByName(t *testing.T) {
	tests := map[string]string{
		"a.pdf": "application/pdf", "A.PDF": "application/pdf", "x.csv": "text/csv",
		"notes.md": "text/markdown", "pic.JPEG": "image/jpeg", "a.tar.gz": "application/gzip",
		"noext": OctetStream, "weird.xyz123": OctetStream, "": OctetStream,
		"r.docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	}
	for in, want := range tests {
		if got := MimeTypeByName(in); got != want {
			t.Errorf("MimeTypeByName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExtByMimeType(t *testing.T) {
	tests := map[string]string{
		"application/pdf": ".pdf", "text/plain": ".txt", "text/plain; charset=utf-8": ".txt",
		"image/jpeg": ".jpg", "IMAGE/PNG": ".png", "text/markdown": ".md", "application/gzip": ".gz",
		"application/x-unknown": "", "": "",
	}
	for in, want := range tests {
		if got := ExtByMimeType(in); got != want {
			t.Errorf("ExtByMimeType(%q) = %q, want %q", in, got, want)
		}
	}
	// Every extension's type maps back to an extension of the same type.
	for ext, typ := range byExt {
		back := ExtByMimeType(typ)
		if MimeTypeByName("x"+back) != typ {
			t.Errorf("%s → %s → %s does not round-trip", ext, typ, back)
		}
	}
}
