package drivesvc_test

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"image/jpeg"
	"image/png"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/internal/render"
)

// docOfTextExport makes a Doc whose text/plain export is exactly n bytes:
// a 3-byte BOM, then 1022-character paragraphs each ending in CRLF.
func docOfTextExport(t *testing.T, e *env, n int) drivesvc.File {
	t.Helper()
	const line = 1024
	body := n - 3
	var b strings.Builder
	if first := body % line; first != 0 {
		if first < 2 {
			t.Fatalf("size %d not reachable with this layout", n)
		}
		b.WriteString(strings.Repeat("y", first-2) + "\n")
	}
	for range body / line {
		b.WriteString(strings.Repeat("x", line-2) + "\n")
	}
	return e.put(ann, drivesvc.FileSpec{Name: "Big doc", Kind: drivesvc.KindDoc, DocText: b.String()})
}

func TestExportCapAtTheEdgeAndExportLinkPastIt(t *testing.T) {
	e := newEnv(t)
	c := e.driveClient(e.token(ann))
	at := docOfTextExport(t, e, drivesvc.ExportLimit)
	over := docOfTextExport(t, e, drivesvc.ExportLimit+1)

	res, err := c.Files.Export(at.ID, "text/plain").Download()
	if err != nil {
		t.Fatalf("export of exactly %d bytes: %v", drivesvc.ExportLimit, err)
	}
	n, _ := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if n != drivesvc.ExportLimit || res.ContentLength != drivesvc.ExportLimit {
		t.Errorf("export at the cap: %d bytes, Content-Length %d", n, res.ContentLength)
	}

	_, err = c.Files.Export(over.ID, "text/plain").Download()
	ge := wantReason(t, err, 403, "exportSizeLimitExceeded")
	if ge.Message != "This file is too large to be exported." {
		t.Errorf("message %q", ge.Message)
	}

	// The exportLinks fallback serves it whole, with the bearer token.
	meta, err := c.Files.Get(over.ID).Fields("exportLinks").Do()
	if err != nil {
		t.Fatal(err)
	}
	link := meta.ExportLinks["text/plain"]
	u, err := url.Parse(link)
	if err != nil || u.Host != strings.TrimPrefix(e.srv.URL, "http://") || u.Path != "/feeds/download/documents/export/Export" ||
		u.Query().Get("id") != over.ID || u.Query().Get("exportFormat") != "txt" {
		t.Fatalf("export link %q", link)
	}
	e.emu.ResetStats()
	code, hdr, body := e.do("GET", link, e.token(ann), nil, nil)
	if code != 200 || len(body) != drivesvc.ExportLimit+1 || !bytes.HasPrefix(body, []byte("\ufeffyyy")) {
		t.Errorf("export link: %d, %d bytes", code, len(body))
	}
	if !strings.Contains(hdr.Get("Content-Disposition"), `filename="Big doc.txt"`) {
		t.Errorf("Content-Disposition %q", hdr.Get("Content-Disposition"))
	}
	if st := e.emu.Stats(); st.Downloads != 1 || st.BytesServed != drivesvc.ExportLimit+1 || st.Files[over.ID].Downloads != 1 {
		t.Errorf("stats after an export link: %+v", st)
	}
	// Strangers get the sign-in page (TestExportLinksAreWebEndpoints).
	for who, tok := range map[string]string{"no token": "", "another user": e.token(bob)} {
		if code, hdr, _ := e.do("GET", link, tok, nil, nil); code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
			t.Errorf("export link with %s: %d %s, want the sign-in page", who, code, hdr.Get("Content-Type"))
		}
	}
}

func threeTabSheet(t *testing.T, e *env) drivesvc.File {
	t.Helper()
	return e.put(ann, drivesvc.FileSpec{Name: "Budget 2025", Kind: drivesvc.KindSheet, Tabs: []drivesvc.Tab{
		{Title: "Summary", Rows: [][]string{{"Area", "Total"}, {"Travel", "1200"}}},
		{Title: "Q1 costs", Rows: [][]string{{"Month", "Cost"}, {"Jan", "300"}, {"Feb", "400, approx"}}},
		{Title: "Headcount", Rows: [][]string{{"Team", "People"}, {"Eng", "12"}}},
	}})
}

func TestPerTabCSVThroughSheetsAndGid(t *testing.T) {
	e := newEnv(t)
	f := threeTabSheet(t, e)
	tok := e.token(ann)

	// files.export gives the first tab only, as Google's does.
	res, err := e.driveClient(tok).Files.Export(f.ID, "text/csv").Download()
	if err != nil {
		t.Fatal(err)
	}
	first, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(first) != "Area,Total\r\nTravel,1200\r\n" {
		t.Errorf("files.export csv = %q", first)
	}

	// Map tab names to sheetIds with Sheets, then use the export link's gid.
	ss, err := e.sheetsClient(tok).Spreadsheets.Get(f.ID).Fields("sheets.properties(sheetId,title,index)").Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(ss.Sheets) != 3 || ss.Sheets[0].Properties.SheetId != 0 || ss.Sheets[1].Properties.Title != "Q1 costs" || ss.Sheets[2].Properties.Index != 2 {
		t.Fatalf("sheets = %+v", ss.Sheets)
	}
	meta, err := e.driveClient(tok).Files.Get(f.ID).Fields("exportLinks").Do()
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range ss.Sheets {
		for _, format := range []string{"text/csv", "text/tab-separated-values"} {
			u, _ := url.Parse(meta.ExportLinks[format])
			if u.Path != "/spreadsheets/export" {
				t.Fatalf("sheet export link %q", u)
			}
			q := u.Query()
			q.Set("gid", strconv.FormatInt(sh.Properties.SheetId, 10))
			u.RawQuery = q.Encode()
			code, _, body := e.do("GET", u.String(), tok, nil, nil)
			if code != 200 {
				t.Fatalf("%s gid %d: %d %s", format, sh.Properties.SheetId, code, body)
			}
			r := csv.NewReader(bytes.NewReader(body))
			if format != "text/csv" {
				r.Comma = '\t'
			}
			rows, err := r.ReadAll()
			if err != nil || len(rows) == 0 {
				t.Fatalf("%s of %s: %v %q", format, sh.Properties.Title, err, body)
			}
			want := map[string]string{"Summary": "Area", "Q1 costs": "Month", "Headcount": "Team"}[sh.Properties.Title]
			if rows[0][0] != want {
				t.Errorf("%s of tab %s starts with %q, want %q", format, sh.Properties.Title, rows[0][0], want)
			}
		}
	}
	u, _ := url.Parse(meta.ExportLinks["text/csv"])
	q := u.Query()
	q.Set("gid", "123456789")
	u.RawQuery = q.Encode()
	if code, hdr, body := e.do("GET", u.String(), tok, nil, nil); code != 400 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Errorf("unknown gid: %d %s", code, body)
	}
}

func TestEveryExportIsAValidFileWithTheText(t *testing.T) {
	e := newEnv(t)
	c := e.driveClient(e.token(ann))
	files := map[string]drivesvc.File{
		drivesvc.MimeDoc: e.put(ann, drivesvc.FileSpec{Name: "Launch plan", Kind: drivesvc.KindDoc,
			DocText: "# Launch plan\nWe ship the pelican feature.\n- Beta in May\n- GA in June"}),
		drivesvc.MimeSheet: threeTabSheet(t, e),
		drivesvc.MimeSlides: e.put(ann, drivesvc.FileSpec{Name: "Kickoff", Kind: drivesvc.KindSlides, Slides: []drivesvc.Slide{
			{Title: "Welcome pelicans", Body: []string{"Agenda"}}, {Title: "Second slide", Body: []string{"Goals"}}}}),
		drivesvc.MimeDrawing: e.put(ann, drivesvc.FileSpec{Name: "Org chart", Kind: drivesvc.KindDrawing, Lines: []string{"CEO pelican", "CTO"}}),
	}
	want := map[string]string{drivesvc.MimeDoc: "pelican", drivesvc.MimeSheet: "Travel", drivesvc.MimeSlides: "Welcome pelicans", drivesvc.MimeDrawing: "CEO pelican"}

	about, err := c.About.Get().Fields("exportFormats").Do()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for native, targets := range about.ExportFormats {
		f, ok := files[native]
		if !ok {
			t.Errorf("about lists exports for %s, which the emulator cannot make", native)
			continue
		}
		for _, target := range targets {
			res, err := c.Files.Export(f.ID, target).Download()
			if err != nil {
				t.Errorf("%s → %s: %v", native, target, err)
				continue
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if ct := res.Header.Get("Content-Type"); ct != target {
				t.Errorf("%s → %s: Content-Type %q", native, target, ct)
			}
			if err := checkExport(target, b, want[native]); err != "" {
				t.Errorf("%s → %s: %s", native, target, err)
			}
			checked++
		}
	}
	if checked < 28 {
		t.Errorf("checked %d exports, want every one of the table (28+)", checked)
	}
}

// checkExport validates b as a file of type mime carrying text; "" means good.
func checkExport(mime string, b []byte, text string) string {
	contains := func(s string) string {
		if !strings.Contains(s, text) {
			return "lacks " + text
		}
		return ""
	}
	switch mime {
	case "application/pdf":
		_, s, err := render.CheckPDF(b)
		if err != nil {
			return err.Error()
		}
		return contains(s)
	case render.MimeODT, render.MimeODS, render.MimeODP, render.MimeEPUB, "application/x-vnd.oasis.opendocument.spreadsheet":
		wantMime := mime
		if strings.HasPrefix(mime, "application/x-vnd") {
			wantMime = render.MimeODS
		}
		_, s, err := render.CheckZip(b, wantMime)
		if err != nil {
			return err.Error()
		}
		return contains(s)
	case "application/zip", "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
		"application/vnd.openxmlformats-officedocument.presentationml.presentation":
		names, s, err := render.CheckZip(b, "")
		if err != nil {
			return err.Error()
		}
		if strings.Contains(mime, "openxml") && !slices.Contains(names, "[Content_Types].xml") {
			return "no [Content_Types].xml"
		}
		return contains(s)
	case "image/png":
		if _, err := png.Decode(bytes.NewReader(b)); err != nil {
			return err.Error()
		}
		return contains(string(b))
	case "image/jpeg":
		if _, err := jpeg.Decode(bytes.NewReader(b)); err != nil {
			return err.Error()
		}
		return contains(string(b))
	case "text/csv":
		if _, err := csv.NewReader(bytes.NewReader(b)).ReadAll(); err != nil {
			return err.Error()
		}
		return contains(string(b))
	default: // txt, html, md, rtf, tsv, svg
		return contains(string(b))
	}
}

func TestExportRefusals(t *testing.T) {
	e := newEnv(t)
	c := e.driveClient(e.token(ann))
	doc := e.put(ann, drivesvc.FileSpec{Name: "Doc", Kind: drivesvc.KindDoc, DocText: "x"})
	bin := e.put(ann, drivesvc.FileSpec{Name: "a.pdf", Content: []byte("%PDF")})
	locked := e.put(ann, drivesvc.FileSpec{Name: "Locked", Kind: drivesvc.KindDoc, DocText: "x", NoDownload: true})

	_, err := c.Files.Export(doc.ID, "image/png").Download()
	ge := wantReason(t, err, 400, "badRequest")
	if ge.Message != "The requested conversion is not supported." {
		t.Errorf("message %q", ge.Message)
	}
	_, err = c.Files.Export(bin.ID, "application/pdf").Download()
	wantReason(t, err, 403, "fileNotExportable")
	_, err = c.Files.Export(locked.ID, "application/pdf").Download()
	wantReason(t, err, 403, "cannotDownloadFile")
	code, _, body := e.do("GET", e.srv.URL+"/drive/v3/files/"+doc.ID+"/export", e.token(ann), nil, nil)
	if code != 400 || !strings.Contains(string(body), `"reason": "required"`) {
		t.Errorf("export without mimeType: %d %s", code, body)
	}
	// An export link of the wrong shape for the file's type is a 404.
	code, _, _ = e.do("GET", e.srv.URL+"/spreadsheets/export?id="+doc.ID+"&exportFormat=csv", e.token(ann), nil, nil)
	if code != 404 {
		t.Errorf("sheet export link for a doc: %d", code)
	}
	code, _, _ = e.do("GET", e.srv.URL+"/feeds/download/documents/export/Export?id="+doc.ID+"&exportFormat=xyz", e.token(ann), nil, nil)
	if code != 400 {
		t.Errorf("unknown exportFormat: %d", code)
	}
}

func TestDocHTMLZipExportHasOnePage(t *testing.T) {
	e := newEnv(t)
	doc := e.put(ann, drivesvc.FileSpec{Name: "Notes", Kind: drivesvc.KindDoc, DocHTML: "<html><head><title>t</title><style>p{}</style></head><body><h1>Hi &amp; bye</h1><p>One<br>two</p><ul><li>item</li></ul></body></html>"})
	res, err := e.driveClient(e.token(ann)).Files.Export(doc.ID, "application/zip").Download()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil || len(zr.File) != 1 || zr.File[0].Name != "Notes.html" {
		t.Fatalf("zip: %v %v", err, zr)
	}
	rc, _ := zr.File[0].Open()
	page, _ := io.ReadAll(rc)
	rc.Close()
	for _, want := range []string{"<h1>Hi &amp; bye</h1>", "<p>One</p>", "<p>two</p>", "<li>item</li>"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(string(page), "p{}") {
		t.Error("style text leaked into the document")
	}
}
