package compose_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/logtest"
)

// newLoggedEnv is newEnv with the service's log lines kept.
func newLoggedEnv(t *testing.T) (*env, *logtest.Buffer) {
	t.Helper()
	var logs logtest.Buffer
	return newEnv(t, compose.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}), &logs
}

// budget is a Sheet with two tabs, the one of the report that found the bug.
func budget(e *env) drivesvc.File {
	return e.Put(user, drivesvc.FileSpec{Name: "Budget", Kind: drivesvc.KindSheet, Tabs: []drivesvc.Tab{
		{Title: "Summary", Rows: [][]string{{"total", "12"}}},
		{Title: "Expenses", Rows: [][]string{{"item", "cost"}, {"travel", "300"}}},
	}})
}

// TestAWebPageIsNeverAttached: when Google answers an export with a
// sign-in page (200 text/html) instead of the CSV asked for, on whatever
// route, the send is refused with a sentence saying Google answered with
// something else and that nothing was sent; no message goes out.
func TestAWebPageIsNeverAttached(t *testing.T) {
	e, logs := newLoggedEnv(t)
	sheet := budget(e)
	tests := []struct {
		name  string
		att   compose.Attachment
		fault emulator.Fault
	}{
		{"the first tab, files.export", compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(sheet.ID), As: "csv"}},
			emulator.Fault{PathPrefix: "/drive/v3/files/" + sheet.ID + "/export", SignInPage: true}},
		{"a named tab, the Sheets API's values", compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(sheet.ID), As: "csv", Sheet: "Expenses"}},
			emulator.Fault{PathPrefix: "/v4/spreadsheets/" + sheet.ID + "/values/", SignInPage: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.Inject(tt.fault)
			before := e.Emu.Stats()
			_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "Budget", BodyText: "hi",
				Attachments: []compose.Attachment{tt.att}}, compose.Options{})
			if !isRefusal(err) || !strings.Contains(err.Error(), "Google answered with something other than the csv") ||
				!strings.Contains(err.Error(), "Nothing was sent") {
				t.Fatalf("err = %v; want a refusal saying Google answered with something else and nothing was sent", err)
			}
			outboxUnchanged(t, before, e.Emu.Stats())
			if !strings.Contains(logs.String(), "refusal=drive_wrong_type") {
				t.Errorf("log lacks refusal=drive_wrong_type: %s", logs.String())
			}
		})
	}
}

// TestSheetsAPIIsNeededOnlyForATab: with the Sheets API not enabled, a
// Sheet still goes as a link, as xlsx, and as its first tab in csv;
// only a named tab is refused, with a sentence that says what works and
// an error line naming the API for the operator.
func TestSheetsAPIIsNeededOnlyForATab(t *testing.T) {
	e, logs := newLoggedEnv(t)
	sheet := e.Put(user, drivesvc.FileSpec{Name: "Budget", Kind: drivesvc.KindSheet, SharedWith: []string{"zoe@example.org"},
		Tabs: []drivesvc.Tab{{Title: "Summary", Rows: [][]string{{"total", "12"}}}}})
	if err := e.Emu.SetAPIEnabled("sheets", false); err != nil {
		t.Fatal(err)
	}
	res, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "Budget", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(sheet.ID)}}, {Source: compose.DriveFile{Handle: handle.MustParse(sheet.ID), As: "xlsx"}}, {Source: compose.DriveFile{Handle: handle.MustParse(sheet.ID), As: "csv"}}}}, compose.Options{})
	if err != nil {
		t.Fatalf("send without the Sheets API: %v", err)
	}
	if len(res.Linked) != 1 || len(res.Attached) != 2 || res.Attached[1].Name != "Budget.csv" || res.Attached[1].Sheet != "" {
		t.Errorf("result %+v: want a link, the xlsx and the first tab's csv (its name unknown)", res)
	}
	raw := string(e.Message(user, res.ID))
	if !strings.Contains(raw, "Budget.csv") {
		t.Errorf("message lacks the csv")
	}
	if strings.Contains(logs.String(), "API not enabled") {
		t.Errorf("an error line was logged for a send that did not need the Sheets API: %s", logs.String())
	}

	before := e.Emu.Stats()
	_, err = e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "Budget", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(sheet.ID), As: "csv", Sheet: "Expenses"}}}}, compose.Options{})
	if !isRefusal(err) || !strings.Contains(err.Error(), "needs the Google Sheets API") ||
		!strings.Contains(err.Error(), "Nothing was sent") || !strings.Contains(err.Error(), "Leave out sheet") {
		t.Fatalf("named tab: %v; want a refusal naming the Sheets API and what works", err)
	}
	outboxUnchanged(t, before, e.Emu.Stats())
	l := logs.String()
	if !strings.Contains(l, "refusal=sheets_api_disabled") || !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "api=sheets.googleapis.com") {
		t.Errorf("log %s: want the refusal kind and an error line naming sheets.googleapis.com", l)
	}
}

// TestDriveAPIDisabledSaysWhoCanFixIt: with the Drive API not enabled, a
// message with a Drive file is refused with a sentence that the server's
// operator must enable it (not "reconnect"), and the operator gets an
// error line; content written into the call still goes.
func TestDriveAPIDisabledSaysWhoCanFixIt(t *testing.T) {
	e, logs := newLoggedEnv(t)
	pdf, _ := e.putBytes("report.pdf", 1000)
	if err := e.Emu.SetAPIEnabled("drive", false); err != nil {
		t.Fatal(err)
	}
	before := e.Emu.Stats()
	_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "r", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(pdf.ID)}}}}, compose.Options{})
	if !isRefusal(err) || !strings.Contains(err.Error(), "has not enabled the Google Drive API") ||
		!strings.Contains(err.Error(), "whoever runs drivemail") || strings.Contains(err.Error(), "Reconnect") {
		t.Fatalf("err = %v; want a refusal naming the Drive API and its operator", err)
	}
	outboxUnchanged(t, before, e.Emu.Stats())
	if l := logs.String(); !strings.Contains(l, "api=drive.googleapis.com") || !strings.Contains(l, "refusal=drive_api_disabled") {
		t.Errorf("log %s: want an error line naming drive.googleapis.com", l)
	}
	notes := "a,b"
	if _, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "n", BodyText: "hi",
		Attachments: []compose.Attachment{{Name: "notes.csv", Source: compose.Content{Encoding: compose.Text, Data: notes}}}}, compose.Options{}); err != nil {
		t.Errorf("model-written content without the Drive API: %v", err)
	}
}

// TestExportPastTheCapSends: a Doc whose export is over files.export's
// 10 MB cap is attached whole through files.download's operation.
func TestExportPastTheCapSends(t *testing.T) {
	e := newEnv(t, compose.Config{})
	doc := e.Put(user, drivesvc.FileSpec{Name: "Long", Kind: drivesvc.KindDoc, DocFillBytes: 11 << 20})
	res, err := e.svc.Send(context.Background(), e.acct(), compose.Request{To: []string{"zoe@example.org"}, Subject: "long", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(doc.ID), As: "txt"}}}}, compose.Options{})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if len(res.Attached) != 1 || res.Attached[0].Bytes < 11<<20 {
		t.Fatalf("attached %+v: want the whole export, over 11 MiB", res.Attached)
	}
	st := e.Emu.Stats()
	if st.Paths["POST /drive/v3/files/{fileId}/download"] != 1 || st.Paths["GET /download"] != 1 {
		t.Errorf("paths %v: want one files.download and its download", st.Paths)
	}
}
