package compose_test

import (
	"mime"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/handle"
)

// TestSendRoundTrip sends a message with every kind of entry and reads it
// back with format=raw through Go's and Python's parsers: the tree, the
// names, the subject and every attachment's sha256 against Drive's.
func TestSendRoundTrip(t *testing.T) {
	e := newEnv(t, compose.Config{}, account.Options{GmailChunkSize: 256 << 10})
	pdf, pdfBytes := e.putBytes("Überblick 報告.pdf", 300_000)
	png, pngBytes := e.putBytes("logo.png", 20_000)
	doc := e.Put(user, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "# Plan\nShip it.\n- carefully"})
	sheet := e.Put(user, drivesvc.FileSpec{Name: "Budget", Kind: drivesvc.KindSheet, Tabs: []drivesvc.Tab{
		{Title: "Summary", Rows: [][]string{{"total", "12"}}},
		{Title: "Q1 détail", Rows: [][]string{{"month", "amount"}, {"janvier", "4"}, {"février", "8"}}},
	}})
	roadmap := e.Put(user, drivesvc.FileSpec{Name: "Roadmap", Kind: drivesvc.KindDoc, DocText: "Later.",
		SharedWith: []string{"zoe@example.org", "cc@example.org"}})
	notes := "a,b\n1,2\n"
	subject := "Résumé du trimestre — 報告 ✓"
	req := compose.Request{
		To:       []string{"Zoë Example <zoe@example.org>"},
		Cc:       []string{"cc@example.org"},
		Subject:  subject,
		BodyText: "Hello,\nplease find the files attached.",
		BodyHTML: `<p>Hello,</p><p><img src="cid:logo.png" alt="logo"></p>`,
		Attachments: []compose.Attachment{
			{Source: compose.DriveFile{Handle: handle.MustParse(pdf.ID)}},
			{Source: compose.DriveFile{Handle: handle.MustParse(png.ID)}},
			{Source: compose.DriveFile{Handle: handle.MustParse(doc.ID), As: "pdf"}},
			{Source: compose.DriveFile{Handle: handle.MustParse(sheet.ID), As: "csv", Sheet: "Q1 détail"}},
			{Source: compose.DriveFile{Handle: handle.MustParse(roadmap.ID)}},
			{Name: "notes.csv", Source: compose.Content{Encoding: compose.Text, Data: notes}},
		},
	}
	var lastDone, lastTotal int64
	res, err := e.send(req, compose.Options{Progress: func(done, total int64) { lastDone, lastTotal = done, total }})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}

	// The result says exactly what went.
	if res.ID == "" || res.ThreadID == "" {
		t.Errorf("result ids: %+v", res)
	}
	wantAttached := []compose.Attached{
		{FileID: pdf.ID, Name: "Überblick 報告.pdf", MimeType: "application/pdf", Bytes: int64(len(pdfBytes))},
		{FileID: doc.ID, Name: "Plan.pdf", MimeType: "application/pdf", ExportedAs: "pdf"},
		{FileID: sheet.ID, Name: "Budget.csv", MimeType: "text/csv", ExportedAs: "csv", Sheet: "Q1 détail"},
		{Name: "notes.csv", MimeType: "text/csv; charset=utf-8", Bytes: int64(len(notes))},
	}
	if len(res.Attached) != len(wantAttached) {
		t.Fatalf("attached = %+v, want %d entries", res.Attached, len(wantAttached))
	}
	for i, w := range wantAttached {
		g := res.Attached[i]
		if w.Bytes == 0 {
			w.Bytes = g.Bytes // exports: checked against the parsed part below
		}
		if g != w {
			t.Errorf("attached[%d] = %+v, want %+v", i, g, w)
		}
	}
	if len(res.Inline) != 1 || res.Inline[0].FileID != png.ID || res.Inline[0].ContentID != "logo.png" {
		t.Errorf("inline = %+v", res.Inline)
	}
	if len(res.Linked) != 1 || res.Linked[0].FileID != roadmap.ID || !strings.HasPrefix(res.Linked[0].URL, "http") ||
		res.Linked[0].Access != compose.AccessOpen || res.Linked[0].SharedWith != nil {
		t.Errorf("linked = %+v", res.Linked)
	}
	if lastDone != res.SizeBytes || lastTotal != res.SizeBytes {
		t.Errorf("last progress = %d/%d, want %d/%d", lastDone, lastTotal, res.SizeBytes, res.SizeBytes)
	}

	raw := e.Message(user, res.ID)
	if d := int64(len(raw)) - res.SizeBytes; d < -1024 || d > 1024 {
		t.Errorf("stored message is %d bytes, result says %d", len(raw), res.SizeBytes)
	}
	tab := &drive.Sheet{ID: sheet.Tabs[1].SheetID, Title: sheet.Tabs[1].Title}
	want := []struct {
		typ, name, cid, sha string
	}{
		{"text/plain", "", "", ""},
		{"text/html", "", "", ""},
		{"image/png", "logo.png", "logo.png", shaHex(pngBytes)},
		{"application/pdf", "Überblick 報告.pdf", "", shaHex(pdfBytes)},
		{"application/pdf", "Plan.pdf", "", e.exportSHA(doc, "application/pdf", nil)},
		{"text/csv", "Budget.csv", "", e.exportSHA(sheet, "text/csv", tab)},
		{"text/csv", "notes.csv", "", shaHex([]byte(notes))},
	}
	const wantShape = "multipart/mixed(multipart/alternative(text/plain,multipart/related(text/html,image/png)),application/pdf,application/pdf,text/csv,text/csv)"

	// Go's parsers.
	hdr, root := goParse(t, raw)
	if got := root.shape(); got != wantShape {
		t.Errorf("Go: shape\n got %s\nwant %s", got, wantShape)
	}
	dec := new(mime.WordDecoder)
	if got, err := dec.DecodeHeader(hdr.Get("Subject")); err != nil || got != subject {
		t.Errorf("Go: subject = %q (%v), want %q", got, err, subject)
	}
	if hdr.Get("Message-Id") == "" || hdr.Get("Date") == "" {
		t.Errorf("Go: Message-ID %q, Date %q", hdr.Get("Message-Id"), hdr.Get("Date"))
	}
	leaves := root.leaves()
	if len(leaves) == len(want) {
		for i, w := range want {
			l := leaves[i]
			if l.Type != w.typ || l.Filename != w.name || l.ContentID != w.cid {
				t.Errorf("Go: part %d = %s %q cid %q; want %s %q cid %q", i, l.Type, l.Filename, l.ContentID, w.typ, w.name, w.cid)
			}
			if w.sha != "" && shaHex(l.Body) != w.sha {
				t.Errorf("Go: part %d (%s) sha256 differs from Drive's", i, w.name)
			}
		}
		text, html := string(leaves[0].Body), string(leaves[1].Body)
		if !strings.Contains(text, "please find the files attached") || !strings.Contains(text, res.Linked[0].URL) {
			t.Errorf("Go: text body lacks its words or the Roadmap link:\n%s", text)
		}
		if !strings.Contains(html, `src="cid:logo.png"`) || !strings.Contains(html, res.Linked[0].URL) {
			t.Errorf("Go: HTML body lacks the inline image or the Roadmap link:\n%s", html)
		}
		for i, a := range res.Attached {
			if got := int64(len(leaves[3+i].Body)); got != a.Bytes {
				t.Errorf("attached[%d].bytes = %d, part has %d", i, a.Bytes, got)
			}
		}
	} else {
		t.Errorf("Go: %d leaves, want %d", len(leaves), len(want))
	}

	// Python's email package.
	py, ok := pyParse(t, raw)
	if !ok {
		return
	}
	if py.Shape != wantShape {
		t.Errorf("Python: shape\n got %s\nwant %s", py.Shape, wantShape)
	}
	if py.Subject != subject {
		t.Errorf("Python: subject = %q, want %q", py.Subject, subject)
	}
	if len(py.Defects) > 0 {
		t.Errorf("Python: defects %v", py.Defects)
	}
	if len(py.Parts) != len(want) {
		t.Fatalf("Python: %d parts, want %d", len(py.Parts), len(want))
	}
	for i, w := range want {
		p := py.Parts[i]
		name, cid := "", ""
		if p.Filename != nil {
			name = *p.Filename
		}
		if p.ContentID != nil {
			cid = *p.ContentID
		}
		if p.Type != w.typ || name != w.name || cid != w.cid {
			t.Errorf("Python: part %d = %s %q cid %q; want %s %q cid %q", i, p.Type, name, cid, w.typ, w.name, w.cid)
		}
		if w.sha != "" && p.SHA256 != w.sha {
			t.Errorf("Python: part %d (%s) sha256 differs from Drive's", i, w.name)
		}
	}
}

// TestDraftRoundTrip saves a draft the same way and reads it back.
func TestDraftRoundTrip(t *testing.T) {
	e := newEnv(t, compose.Config{})
	f, b := e.putBytes("data.bin", 50_000)
	res, err := e.send(compose.Request{To: []string{"x@example.org"}, Subject: "Draft", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}}}, compose.Options{Draft: true})
	if err != nil {
		t.Fatalf("Send draft: %v", err)
	}
	if res.DraftID == "" || res.ID == "" {
		t.Fatalf("draft result = %+v", res)
	}
	if st := e.Emu.Stats(); st.DraftsCreated != 1 || st.MessagesSent != 0 {
		t.Errorf("stats: drafts %d, sent %d; want 1, 0", st.DraftsCreated, st.MessagesSent)
	}
	_, root := goParse(t, e.Draft(user, res.DraftID))
	leaves := root.leaves()
	if len(leaves) != 2 || shaHex(leaves[1].Body) != shaHex(b) || leaves[1].Filename != "data.bin" {
		t.Errorf("draft parts: %s", root.shape())
	}
}

// TestDraftWithoutComposeScope maps Gmail's 403 to a refusal.
func TestDraftWithoutComposeScope(t *testing.T) {
	e := newEnv(t, compose.Config{})
	e.hc = e.Client(user, emutest.ScopeDriveReadonly, emutest.ScopeGmailSend, emutest.ScopeGmailReadonly)
	_, err := e.send(compose.Request{To: []string{"x@example.org"}, Subject: "Draft", BodyText: "hi"}, compose.Options{Draft: true})
	if !isRefusal(err) || !strings.Contains(err.Error(), "drafts") {
		t.Fatalf("err = %v, want a refusal about draft permission", err)
	}
	if st := e.Emu.Stats(); st.DraftsCreated != 0 {
		t.Errorf("drafts created = %d", st.DraftsCreated)
	}
}
