package blocked

import (
	"errors"
	"strings"
	"testing"
)

func TestBlockedExt(t *testing.T) {
	tests := []struct{ name, want string }{
		{"setup.exe", "exe"},
		{"SETUP.EXE", "exe"},
		{"Setup.Exe", "exe"},
		{"report.pdf.exe", "exe"},
		{"setup.exe.pdf", ""},
		{"setup.exe.", "exe"},
		{"setup.exe . .", "exe"},
		{"setup.exe\t", "exe"},
		{"dir/sub/run.BAT", "bat"},
		{`dir\sub\run.cmd`, "cmd"},
		{"setup.exe.gz", "exe"},
		{"setup.exe.GZ", "exe"},
		{"script.ps1.bz2", "ps1"},
		{"a.exe.gz.gz", "exe"},
		{"tool.jar", "jar"},
		{"app.apk", "apk"},
		{"disk.iso", "iso"},
		{"patch.ex_", "ex_"},
		{"module.mjs", "mjs"},
		{"report.pdf", ""},
		{"notes.txt.gz", ""},
		{"archive.zip", ""},
		{"archive.tar.gz", ""},
		{"exe", ""},
		{".exe", "exe"},
		{"folder.exe/", ""},
		{"", ""},
		{".", ""},
		{"noext", ""},
		{"email.jse", "jse"},
	}
	for _, tt := range tests {
		if got := Ext(tt.name); got != tt.want {
			t.Errorf("Ext(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestEveryListedExtensionIsBlocked(t *testing.T) {
	exts := Extensions()
	if len(exts) != 54 {
		t.Errorf("%d extensions, want the 54 Google lists", len(exts))
	}
	for _, e := range exts {
		if Ext("file."+e) != e || Ext("FILE."+strings.ToUpper(e)) != e {
			t.Errorf("extension %q is not blocked", e)
		}
	}
}

func TestCheckName(t *testing.T) {
	if err := CheckName("report.pdf"); err != nil {
		t.Fatalf("CheckName(report.pdf) = %v", err)
	}
	err := CheckName("installer.msi")
	var r *Finding
	if !errors.As(err, &r) || r.Reason != ReasonExtension || r.Ext != "msi" || r.Entry != "" {
		t.Fatalf("CheckName(installer.msi) = %#v", err)
	}
	want := `"installer.msi" is a .msi file, which Gmail blocks for security.`
	if err.Error() != want {
		t.Errorf("sentence = %q\nwant       %q", err.Error(), want)
	}
}

func TestFormatOf(t *testing.T) {
	tests := []struct {
		name, mime string
		want       Format
	}{
		{"a.zip", "", Zip},
		{"A.ZIP", "application/octet-stream", Zip},
		{"a.tar.gz", "", TarGzip},
		{"a.TGZ", "", TarGzip},
		{"a.gz", "", Gzip},
		{"a.tar", "", Tar},
		{"a.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", NotArchive},
		{"a.pdf", "application/pdf", NotArchive},
		{"download", "application/zip", Zip},
		{"download.bin", "application/x-zip-compressed", Zip},
		{"download", "application/gzip", Gzip},
		{"download", "application/x-tar", Tar},
		{"download", "application/x-compressed-tar", TarGzip},
		{"download", "APPLICATION/ZIP; foo=bar", Zip},
		{"a.zip.", "", Zip},
		{"", "", NotArchive},
	}
	for _, tt := range tests {
		if got := FormatOf(tt.name, tt.mime); got != tt.want {
			t.Errorf("FormatOf(%q, %q) = %v, want %v", tt.name, tt.mime, got, tt.want)
		}
	}
}

// TestFindingSentences: each finding says what was found, and nothing of
// what to do: that depends on where the file comes from (compose adds it).
func TestFindingSentences(t *testing.T) {
	tests := []struct {
		r    Finding
		want string
	}{
		{Finding{File: "report.zip", Entry: "setup.exe", Ext: "exe", Reason: ReasonExtension},
			`"report.zip" contains "setup.exe"; Gmail blocks .exe files, even inside archives.`},
		{Finding{File: "secret.zip", Reason: ReasonEncrypted},
			`"secret.zip" is password-protected; Gmail blocks encrypted archives because it cannot scan them.`},
		{Finding{File: "secret.zip", Entry: "a.txt", Reason: ReasonEncrypted},
			`"secret.zip" contains a password-protected entry ("a.txt"); Gmail blocks encrypted archives because it cannot scan them.`},
		{Finding{File: "big.zip", Reason: ReasonTooLarge, Detail: "70000 entries; the limit is 65535"},
			`"big.zip" is too large an archive to check for blocked file types (70000 entries; the limit is 65535).`},
		{Finding{File: "bad.zip", Reason: ReasonUnreadable, Detail: "truncated"},
			`"bad.zip" cannot be read as an archive (truncated), so it cannot be checked for blocked file types.`},
		{Finding{File: "a\nb.zip", Entry: "x.exe", Ext: "exe", Reason: ReasonExtension},
			`"a\nb.zip" contains "x.exe"; Gmail blocks .exe files, even inside archives.`},
	}
	for _, tt := range tests {
		if got := tt.r.Error(); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}
