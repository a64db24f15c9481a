package compose

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/blocked"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/exportfmt"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
)

func binFile(id, name, mimeType string, size int64) drive.File {
	return drive.File{ID: id, Name: name, MimeType: mimeType, Size: size, CanDownload: true,
		WebViewLink: "https://drive.google.com/file/d/" + id + "/view"}
}

func nativeFile(id, name, mimeType string, tabs ...string) drive.File {
	f := drive.File{ID: id, Name: name, MimeType: mimeType, CanDownload: true,
		WebViewLink: "https://docs.google.com/d/" + id + "/edit"}
	for i, t := range tabs {
		f.Sheets = append(f.Sheets, drive.Sheet{ID: int64(100 + i), Title: t})
	}
	return f
}

// driveItem is a Drive entry already resolved to f; a's Source, when
// set, is a DriveFile with the options.
func driveItem(i int, a Attachment, f drive.File) *item {
	opts, _ := a.Source.(DriveFile)
	if opts.Handle == nil {
		opts.Handle = handle.Drive{Ref: drive.Ref{ID: f.ID}}
	}
	a.Source = opts
	ref, _ := handle.DriveRef(opts.Handle)
	return &item{index: i, att: a, ref: ref, opts: opts, file: f}
}

func TestPlanItem(t *testing.T) {
	pdf := binFile("pdf00000001", "Q3 report.pdf", "application/pdf", 1234)
	doc := nativeFile("doc00000001", "Plan", exportfmt.Document)
	sheet := nativeFile("sht00000001", "Budget", exportfmt.Spreadsheet, "Summary", "Q1 detail", "Q2")
	folder := nativeFile("fld00000001", "Team", exportfmt.Folder)
	tests := []struct {
		name     string
		att      Attachment
		file     drive.File
		action   action
		wantName string
		wantMime string
		wantTab  string
	}{
		{"binary keeps its name", Attachment{}, pdf, actAttach, "Q3 report.pdf", "application/pdf", ""},
		{"renamed binary gets its extension", Attachment{Name: "Quarter"}, pdf, actAttach, "Quarter.pdf", "application/pdf", ""},
		{"renamed to .exe keeps the real extension last", Attachment{Name: "x.exe"}, pdf, actAttach, "x.exe.pdf", "application/pdf", ""},
		{"as the file's own format", Attachment{Source: DriveFile{As: "PDF"}}, pdf, actAttach, "Q3 report.pdf", "application/pdf", ""},
		{"binary as link", Attachment{Source: DriveFile{Link: true}}, pdf, actLink, "Q3 report.pdf", "", ""},
		{"doc without as is a link", Attachment{}, doc, actLink, "Plan", "", ""},
		{"doc as pdf", Attachment{Source: DriveFile{As: "pdf"}}, doc, actExport, "Plan.pdf", "application/pdf", ""},
		{"doc as .DOCX renamed", Attachment{Name: "Final plan", Source: DriveFile{As: ".DOCX"}}, doc, actExport, "Final plan.docx",
			"application/vnd.openxmlformats-officedocument.wordprocessingml.document", ""},
		{"sheet csv takes the first tab", Attachment{Source: DriveFile{As: "csv"}}, sheet, actExport, "Budget.csv", "text/csv", "Summary"},
		{"sheet csv by tab name", Attachment{Source: DriveFile{As: "csv", Sheet: "Q1 detail"}}, sheet, actExport, "Budget.csv", "text/csv", "Q1 detail"},
		{"sheet tab name ignoring case", Attachment{Source: DriveFile{As: "tsv", Sheet: " q2 "}}, sheet, actExport, "Budget.tsv", "text/tab-separated-values", "Q2"},
		{"sheet xlsx", Attachment{Source: DriveFile{As: "xlsx"}}, sheet, actExport, "Budget.xlsx",
			"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", ""},
		{"folder is a link", Attachment{}, folder, actLink, "Team", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := driveItem(1, tt.att, tt.file)
			if err := planItem(it); err != nil {
				t.Fatalf("planItem: %v", err)
			}
			p := it.plan
			if p.action != tt.action || p.name != tt.wantName || p.mimeType != tt.wantMime {
				t.Errorf("plan = action %d, name %q, mime %q; want %d, %q, %q", p.action, p.name, p.mimeType, tt.action, tt.wantName, tt.wantMime)
			}
			gotTab := ""
			if p.tab != nil {
				gotTab = p.tab.Title
			}
			if gotTab != tt.wantTab {
				t.Errorf("tab = %q, want %q", gotTab, tt.wantTab)
			}
			if p.action == actLink && p.url != tt.file.WebViewLink {
				t.Errorf("link url = %q, want %q", p.url, tt.file.WebViewLink)
			}
			if p.action == actExport && p.size != -1 {
				t.Errorf("export size = %d, want -1 (unknown)", p.size)
			}
		})
	}
}

func TestPlanItemRefusals(t *testing.T) {
	pdf := binFile("pdf00000001", "Q3 report.pdf", "application/pdf", 1234)
	exe := binFile("exe00000001", "setup.exe", "application/octet-stream", 10)
	doc := nativeFile("doc00000001", "Plan", exportfmt.Document)
	sheet := nativeFile("sht00000001", "Budget", exportfmt.Spreadsheet, "Summary", "Q1")
	form := nativeFile("frm00000001", "Survey", exportfmt.Form)
	locked := pdf
	locked.CanDownload = false
	trashed := pdf
	trashed.Trashed = true
	tests := []struct {
		name string
		att  Attachment
		file drive.File
		want []string
	}{
		{"unknown export format", Attachment{Source: DriveFile{As: "xlsx"}}, doc, []string{`"xlsx" is not an export format`, "pdf, docx, odt"}},
		{"bad tab name lists tabs", Attachment{Source: DriveFile{As: "csv", Sheet: "Q9"}}, sheet, []string{`no tab named "Q9"`, `"Summary", "Q1"`}},
		{"sheet without as", Attachment{Source: DriveFile{Sheet: "Q1"}}, sheet, []string{"add as"}},
		{"sheet with xlsx", Attachment{Source: DriveFile{As: "xlsx", Sheet: "Q1"}}, sheet, []string{"only to csv and tsv"}},
		{"as on a binary", Attachment{Source: DriveFile{As: "docx"}}, pdf, []string{"attach it without `as`"}},
		{"sheet on a binary", Attachment{Source: DriveFile{Sheet: "x"}}, pdf, []string{"sheet applies only"}},
		{"form cannot export", Attachment{Source: DriveFile{As: "pdf"}}, form, []string{"cannot be exported"}},
		{"blocked exe", Attachment{}, exe, []string{`"setup.exe" is a .exe file`}},
		{"exe renamed to pdf still blocked", Attachment{Name: "harmless.pdf"}, exe, []string{".exe"}},
		{"download disabled", Attachment{}, locked, []string{"turned off downloading", "link: true"}},
		{"trashed", Attachment{}, trashed, []string{"in the Drive trash"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := planItem(driveItem(2, tt.att, tt.file))
			var r *refusal.Refusal
			if !errors.As(err, &r) {
				t.Fatalf("planItem error = %v, want a refusal", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Error(), w) {
					t.Errorf("refusal %q does not mention %q", r.Error(), w)
				}
			}
			if !strings.HasPrefix(r.Error(), "Attachment 2") && !strings.HasPrefix(r.Error(), "attachment 2") {
				t.Errorf("refusal %q does not say which attachment", r.Error())
			}
		})
	}
}

func TestPlanData(t *testing.T) {
	items, err := validateAttachments([]Attachment{{Name: "notes", Source: Content{Encoding: Text, Data: "x", MimeType: "text/csv"}}, {Name: "run.bat", Source: Content{Encoding: Text, Data: "echo"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := planItem(items[0]); err != nil {
		t.Fatal(err)
	}
	if got := items[0].plan.name; got != "notes.csv" {
		t.Errorf("name = %q, want notes.csv", got)
	}
	if err := planItem(items[1]); err == nil || !strings.Contains(err.Error(), ".bat") {
		t.Errorf("run.bat: err = %v, want a .bat refusal", err)
	}
}

func TestPlanMessageLimits(t *testing.T) {
	files := func(n int, size int64) []*item {
		var items []*item
		for i := 0; i < n; i++ {
			items = append(items, driveItem(i+1, Attachment{}, binFile(fmt.Sprintf("file%07d", i), fmt.Sprintf("f%d.pdf", i), "application/pdf", size)))
		}
		return items
	}
	doc := nativeFile("doc00000001", "Plan", exportfmt.Document)
	tests := []struct {
		name  string
		items []*item
		want  string // "" for no refusal
	}{
		{"10 files", files(10, 1000), ""},
		{"11 files", files(11, 1000), "carry 11 files"},
		{"10 files and a link", append(files(10, 1000), driveItem(11, Attachment{}, doc)), ""},
		{"exactly 25 MiB", files(1, MaxAttachmentBytes), ""},
		{"25 MiB and one byte", files(1, MaxAttachmentBytes+1), "25.0 MiB"},
		{"25 MiB over ten files", files(10, MaxAttachmentBytes/10), ""},
		{"one byte over, across files", append(files(5, 5<<20), files(1, 1)...), "at most 25 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := planMessage(Request{BodyText: "hi"}, tt.items)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("planMessage: %v", err)
				}
				return
			}
			if !isRefusal(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("planMessage error = %v, want a refusal mentioning %q", err, tt.want)
			}
		})
	}
}

func TestPlanMessageEncodedEstimate(t *testing.T) {
	// 25 MiB of files fits Gmail's 35 MiB once encoded, but not with a
	// 2 MiB HTML body besides.
	it := driveItem(1, Attachment{}, binFile("big00000001", "big.pdf", "application/pdf", MaxAttachmentBytes))
	mp, err := planMessage(Request{BodyText: "hi"}, []*item{it})
	if err != nil {
		t.Fatalf("25 MiB: %v", err)
	}
	if mp.estimate < encodedLen(MaxAttachmentBytes) || mp.estimate > MaxMessageBytes {
		t.Errorf("estimate = %d, want between %d and %d", mp.estimate, encodedLen(MaxAttachmentBytes), MaxMessageBytes)
	}
	it = driveItem(1, Attachment{}, binFile("big00000001", "big.pdf", "application/pdf", MaxAttachmentBytes))
	_, err = planMessage(Request{BodyHTML: strings.Repeat("x", MaxBodyBytes)}, []*item{it})
	if !isRefusal(err) || !strings.Contains(err.Error(), "35 MiB") {
		t.Errorf("25 MiB + 2 MiB body: err = %v, want the 35 MiB refusal", err)
	}
}

func TestPlanInline(t *testing.T) {
	logo := binFile("png00000001", "logo.png", "image/png", 100)
	photo := binFile("jpg00000001", "team photo.jpg", "image/jpeg", 100)
	doc := nativeFile("doc00000001", "Plan", exportfmt.Document)
	items := []*item{driveItem(1, Attachment{}, logo), driveItem(2, Attachment{}, photo), driveItem(3, Attachment{}, doc)}
	html := `<p><img src="cid:logo.png"> and <img src='cid:team%20photo.jpg'> and <img src="cid:LOGO.PNG"></p>`
	mp, err := planMessage(Request{BodyHTML: html}, items)
	if err != nil {
		t.Fatalf("planMessage: %v", err)
	}
	if !items[0].plan.inline || items[0].plan.contentID != "logo.png" {
		t.Errorf("logo: inline %v, content id %q; want inline with id logo.png", items[0].plan.inline, items[0].plan.contentID)
	}
	if !items[1].plan.inline || !strings.Contains(mp.html, "cid:"+items[1].plan.contentID) {
		t.Errorf("photo: inline %v, content id %q, html %s", items[1].plan.inline, items[1].plan.contentID, mp.html)
	}
	if strings.Contains(mp.html, "team%20photo") || strings.Contains(mp.html, "LOGO.PNG") {
		t.Errorf("html still has the written names: %s", mp.html)
	}
	if mp.files != 2 {
		t.Errorf("files = %d, want 2 (the doc is a link)", mp.files)
	}

	for _, tc := range []struct{ html, want string }{
		{`<img src="cid:missing.png">`, `no attachment is named "missing.png"`},
		{`<img src="cid:Plan">`, "goes as a link"},
	} {
		items := []*item{driveItem(1, Attachment{}, logo), driveItem(2, Attachment{}, doc)}
		_, err := planMessage(Request{BodyHTML: tc.html}, items)
		if !isRefusal(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want a refusal mentioning %q", tc.html, err, tc.want)
		}
	}
}

// TestBlockedAdviceFitsTheSource: every refusal of a blocked type says
// what can be done with that entry. A Drive file can go as a link;
// content written into the call has no file to link to.
func TestBlockedAdviceFitsTheSource(t *testing.T) {
	exe := binFile("exe00000001", "setup.exe", "application/octet-stream", 10)
	written := func(name string) *item {
		return &item{index: 3, att: Attachment{Name: name, Source: Content{Encoding: Text, Data: "MZ"}}, plan: plan{name: name}}
	}
	tests := []struct {
		name     string
		it       *item
		finding  blocked.Finding
		want     []string
		wantNot  string
		wantKind kind
	}{
		{"a Drive .exe", driveItem(3, Attachment{}, exe), blocked.Finding{File: "setup.exe", Ext: "exe", Reason: blocked.ReasonExtension},
			[]string{`Attachment 3: "setup.exe" is a .exe file`, "Send a link to the file instead, or put it in a format Gmail allows."}, "", kindBlockedType},
		{"a .exe in a Drive zip", driveItem(3, Attachment{}, exe), blocked.Finding{File: "a.zip", Entry: "setup.exe", Ext: "exe", Reason: blocked.ReasonExtension},
			[]string{"Send a link to the file instead or remove it from the archive."}, "", kindBlockedType},
		{"a .exe written into the call", written("setup.exe"), blocked.Finding{File: "setup.exe", Ext: "exe", Reason: blocked.ReasonExtension},
			[]string{`Attachment 3: "setup.exe" is a .exe file`, "leave it out", `"setup.txt"`}, "link", kindBlockedType},
		{"a .exe in a zip written into the call", written("a.zip"), blocked.Finding{File: "a.zip", Entry: "setup.exe", Ext: "exe", Reason: blocked.ReasonExtension},
			[]string{"Leave that file out of the archive"}, "link", kindBlockedType},
		{"an encrypted zip written into the call", written("a.zip"), blocked.Finding{File: "a.zip", Reason: blocked.ReasonEncrypted},
			[]string{"without a password"}, "link", kindEncryptedArchive},
		{"an unreadable zip written into the call", written("a.zip"), blocked.Finding{File: "a.zip", Reason: blocked.ReasonUnreadable, Detail: "truncated"},
			[]string{"base64-encoded"}, "link", kindUnreadableArchive},
		{"a huge zip written into the call", written("a.zip"), blocked.Finding{File: "a.zip", Reason: blocked.ReasonTooLarge, Detail: "many entries"},
			[]string{"Split the archive."}, "link", kindArchiveTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := blockedRefusal(tt.it, &tt.finding, "")
			r, ok := refusal.As(err)
			if !ok || r.Kind != tt.wantKind {
				t.Fatalf("err = %v, want a %s refusal", err, tt.wantKind)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Text, w) {
					t.Errorf("%q lacks %q", r.Text, w)
				}
			}
			if tt.wantNot != "" && strings.Contains(r.Text, tt.wantNot) {
				t.Errorf("%q says %q, which this entry cannot do", r.Text, tt.wantNot)
			}
		})
	}
}
