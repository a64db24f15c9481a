package pickersvc_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
)

const ann = "ann@example.com"

// env is an emulator with a Doc and a PDF of ann's, and a drive.file
// token of one OAuth client ("drivemail").
type env struct {
	t        *testing.T
	emu      *emulator.Emulator
	srv      *httptest.Server
	doc, pdf drivesvc.File
	token    string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	emu, err := emulator.New(emulator.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	e := &env{t: t, emu: emu, srv: srv}
	if e.doc, err = emu.Drive().PutFile(ann, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "We ship the pelican."}); err != nil {
		t.Fatal(err)
	}
	if e.pdf, err = emu.Drive().PutFile(ann, drivesvc.FileSpec{Name: "report.pdf", Content: []byte("%PDF-1.4 report")}); err != nil {
		t.Fatal(err)
	}
	e.token = emu.AccessTokenFor(ann, "drivemail", drivesvc.ScopeDriveFile)
	return e
}

// form is a Picker form as the script posts it, built with this
// project's App ID and key and MULTISELECT_ENABLED; change edits it.
func (e *env) form(change func(url.Values), ids ...string) url.Values {
	f := url.Values{"oauth_token": {e.token}, "developer_key": {e.emu.APIKey()}, "app_id": {e.emu.ProjectNumber()},
		"origin": {"http://app.example"}, "nonce": {"n1"}, "multiselect": {"true"}, "id": ids}
	if change != nil {
		change(f)
	}
	return f
}

// post sends a form to path, as JSON or as a page.
func (e *env) post(path string, form url.Values, asJSON bool) (int, string) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if asJSON {
		req.Header.Set("Accept", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (e *env) drive(tok string) *drive.Service {
	e.t.Helper()
	hc := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+tok)
		return http.DefaultTransport.RoundTrip(r)
	})}
	svc, err := drive.NewService(context.Background(), option.WithEndpoint(e.srv.URL+"/drive/v3/"), option.WithHTTPClient(hc))
	if err != nil {
		e.t.Fatal(err)
	}
	return svc
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// reach reports what the drive.file token can do with the two files:
// get the Doc, export it, get the PDF, download it.
func (e *env) reach() []int {
	e.t.Helper()
	svc := e.drive(e.token)
	code := func(err error) int {
		if err == nil {
			return 200
		}
		if ge, ok := err.(*googleapi.Error); ok {
			return ge.Code
		}
		e.t.Fatalf("not a Google error: %v", err)
		return 0
	}
	_, errGet := svc.Files.Get(e.doc.ID).Do()
	var errExport error
	if res, err := svc.Files.Export(e.doc.ID, "text/plain").Download(); err == nil {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(b), "pelican") {
			e.t.Errorf("export: %q", b)
		}
	} else {
		errExport = err
	}
	_, errPDF := svc.Files.Get(e.pdf.ID).Do()
	var errDownload error
	if res, err := svc.Files.Get(e.pdf.ID).Download(); err == nil {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(b) != "%PDF-1.4 report" {
			e.t.Errorf("download: %q", b)
		}
	} else {
		errDownload = err
	}
	return []int{code(errGet), code(errExport), code(errPDF), code(errDownload)}
}

// TestPickGrantsDriveFile: before the pick a drive.file token gets 404
// on get, export and download; after it, all work, and the answer is
// Google's ResponseObject with one DocumentObject per file.
func TestPickGrantsDriveFile(t *testing.T) {
	e := newEnv(t)
	if got := e.reach(); jsonOf(got) != "[404,404,404,404]" {
		t.Fatalf("before the pick: %v, want 404 for each", got)
	}
	code, body := e.post("/picker/grant", e.form(nil, e.doc.ID, e.pdf.ID), true)
	if code != 200 {
		t.Fatalf("grant: %d %s", code, body)
	}
	var res struct {
		Action string `json:"action"`
		Docs   []struct {
			ID, Name, MimeType, URL, Type, ServiceID string
			SizeBytes                                *int64
			LastEditedUtc                            int64
		} `json:"docs"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatal(err)
	}
	if res.Action != "picked" || len(res.Docs) != 2 {
		t.Fatalf("answer %s", body)
	}
	d, p := res.Docs[0], res.Docs[1]
	if d.ID != e.doc.ID || d.Name != "Plan" || d.MimeType != drivesvc.MimeDoc || d.SizeBytes != nil || !strings.Contains(d.URL, "/document/d/"+e.doc.ID) || d.Type != "document" {
		t.Errorf("the Doc's document %+v", d)
	}
	if p.ID != e.pdf.ID || p.SizeBytes == nil || *p.SizeBytes != 15 || p.MimeType != "application/pdf" || p.LastEditedUtc == 0 {
		t.Errorf("the PDF's document %+v", p)
	}
	if got := e.reach(); jsonOf(got) != "[200,200,200,200]" {
		t.Errorf("after the pick: %v, want 200 for each", got)
	}
	if st := e.emu.Stats(); st.PicksGranted != 2 {
		t.Errorf("picks_granted = %d, want 2", st.PicksGranted)
	}
	// The grant is the client's: another app's drive.file token still gets 404.
	other := e.drive(e.emu.AccessTokenFor(ann, "another-app", drivesvc.ScopeDriveFile))
	if _, err := other.Files.Get(e.pdf.ID).Do(); err == nil {
		t.Error("another app's token reads the file picked for drivemail")
	}
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestPickWithoutJavaScript: the dialog is a plain form listing the
// user's files (checkboxes with multiselect, radios without); posting it
// picks, and the result page carries the answer and the script that hands
// it to the opener's origin only.
func TestPickWithoutJavaScript(t *testing.T) {
	e := newEnv(t)
	code, page := e.post("/picker", e.form(nil), false)
	if code != 200 || !strings.Contains(page, `action="/picker/grant"`) || !strings.Contains(page, `type="checkbox" name="id" value="`+e.doc.ID+`"`) ||
		!strings.Contains(page, `value="`+e.pdf.ID+`"`) || strings.Contains(page, "<script") {
		t.Fatalf("dialog: %d\n%s", code, page)
	}
	// The dialog's hidden fields are what the grant needs: post them back with one file.
	form := url.Values{"id": {e.pdf.ID}, "action": {"picked"}}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllStringSubmatch(page, -1) {
		form.Set(m[1], htmlUnescape(m[2]))
	}
	code, res := e.post("/picker/grant", form, false)
	if code != 200 || !strings.Contains(res, `&#34;action&#34;: &#34;picked&#34;`) || !strings.Contains(res, `parent.postMessage(`) || !strings.Contains(res, `"http://app.example"`) {
		t.Fatalf("result page: %d\n%s", code, res)
	}
	if got := e.reach(); jsonOf(got[2:]) != "[200,200]" || got[0] != 404 {
		t.Errorf("after picking the PDF alone: %v, want the Doc still 404", got)
	}
	// Without multiselect the dialog offers radios and a grant takes one file.
	single := e.form(func(f url.Values) { f.Del("multiselect") })
	if _, page := e.post("/picker", single, false); !strings.Contains(page, `type="radio" name="id"`) {
		t.Errorf("a single-pick dialog has no radios:\n%s", page)
	}
	single["id"] = []string{e.doc.ID, e.pdf.ID}
	if code, body := e.post("/picker/grant", single, true); code != 400 || !strings.Contains(body, "MULTISELECT_ENABLED") {
		t.Errorf("two files without multiselect: %d %s", code, body)
	}
	// Cancel needs no token and answers {action: cancel}.
	if code, body := e.post("/picker/grant", url.Values{"action": {"cancel"}, "nonce": {"n1"}}, true); code != 200 || !strings.Contains(body, `"action": "cancel"`) {
		t.Errorf("cancel: %d %s", code, body)
	}
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&#43;", "+", "&amp;", "&", "&#34;", `"`, "&#39;", "'", "&lt;", "<", "&gt;", ">").Replace(s)
}

// TestPickRefusals: the Picker takes only a live token with a Drive
// scope, the project's API key and its App ID; setMaxItems and the
// view's types bound the pick. Nothing is granted on refusal.
func TestPickRefusals(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		change func(url.Values)
		code   int
		says   string
	}{
		{"no token", func(f url.Values) { f.Del("oauth_token") }, 401, "OAuth token"},
		{"a token Google did not issue", func(f url.Values) { f.Set("oauth_token", "ya29.forged") }, 401, "OAuth token"},
		{"a token without a Drive scope", func(f url.Values) {
			f.Set("oauth_token", e.emu.AccessTokenFor(ann, "drivemail", "https://www.googleapis.com/auth/gmail.send"))
		}, 403, "Drive scope"},
		{"no developer key", func(f url.Values) { f.Del("developer_key") }, 403, "developer key is invalid"},
		{"another developer key", func(f url.Values) { f.Set("developer_key", "AIzaSyAnotherProjectsKey") }, 403, "developer key is invalid"},
		{"no App ID", func(f url.Values) { f.Del("app_id") }, 403, "App ID"},
		{"another project's App ID", func(f url.Values) { f.Set("app_id", "999999999999") }, 403, "App ID"},
		{"an origin with a path", func(f url.Values) { f.Set("origin", "https://app.example/pick") }, 400, "origin"},
		{"more than setMaxItems", func(f url.Values) { f.Set("max_items", "1") }, 400, "setMaxItems"},
		{"a type the view does not show", func(f url.Values) { f.Set("mime_types", "application/pdf") }, 404, "File not found"},
	} {
		code, body := e.post("/picker/grant", e.form(tc.change, e.doc.ID, e.pdf.ID), true)
		if code != tc.code || !strings.Contains(body, tc.says) {
			t.Errorf("%s: %d %s, want %d saying %q", tc.name, code, body, tc.code, tc.says)
		}
	}
	if code, body := e.post("/picker/grant", e.form(func(f url.Values) { f.Set("max_items", "2") }, e.doc.ID, e.pdf.ID), true); code != 200 {
		t.Errorf("exactly setMaxItems files: %d %s", code, body)
	}
	e2 := newEnv(t)
	// A file the user cannot see is not pickable, whoever's id it is.
	bobs, err := e2.emu.Drive().PutFile("bob@example.com", drivesvc.FileSpec{Name: "bob.pdf", Content: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := e2.post("/picker/grant", e2.form(nil, bobs.ID), true); code != 404 {
		t.Errorf("another user's file: %d, want 404", code)
	}
	if code, page := e2.post("/picker", e2.form(func(f url.Values) { f.Set("developer_key", "wrong") }), false); code != 403 || !strings.Contains(page, `"action": "error"`) && !strings.Contains(page, `&#34;action&#34;: &#34;error&#34;`) {
		t.Errorf("dialog with a wrong key: %d\n%s", code, page)
	}
	if got := e2.reach(); jsonOf(got) != "[404,404,404,404]" {
		t.Errorf("after refusals: %v, want nothing granted", got)
	}
}

// TestScriptDefinesGooglesNames: /js/api.js defines gapi.load and the
// google.picker namespace with Google's values, and takes messages from
// the emulator's origin only.
func TestScriptDefinesGooglesNames(t *testing.T) {
	e := newEnv(t)
	resp, err := http.Get(e.srv.URL + "/js/api.js")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	js := string(b)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/javascript") {
		t.Fatalf("%d %s", resp.StatusCode, ct)
	}
	for _, want := range []string{
		"gapi.load = function", "PickerBuilder", "DocsView", "ViewGroup", `DOCS: "all"`, `MULTISELECT_ENABLED: "multiselectEnabled"`,
		`NAV_HIDDEN: "navHidden"`, `SUPPORT_DRIVES: "sdr"`, `PICKED: "picked"`, `CANCEL: "cancel"`, `ACTION: "action"`,
		`DOCUMENTS: "docs"`, `MIME_TYPE: "mimeType"`, `URL: "url"`, "setOAuthToken", "setDeveloperKey", "setAppId",
		"setMaxItems", "setSelectableMimeTypes", "setCallback", "setOrigin", "setVisible", "isVisible", "dispose",
		`var ORIGIN = "` + e.srv.URL + `"`, "e.origin !== ORIGIN",
	} {
		if !strings.Contains(js, want) {
			t.Errorf("api.js lacks %q", want)
		}
	}
}
