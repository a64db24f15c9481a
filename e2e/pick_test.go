package e2e

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/server"
)

// TestPickEndToEnd is serve --demo --drive-scope file, driven as a user
// and a model would, without a browser: drive_search finds nothing and
// offers a link; drive_pick's link opens the page, whose token cannot
// read mail; the emulator's Picker grants a Doc and a PDF; the page's
// choice comes back; drive_search then lists both and a file uploaded
// through /upload, and send_email sends the two, the Doc exported as
// PDF, the PDF byte for byte.
func TestPickEndToEnd(t *testing.T) {
	r := startDemoWith(t, func(c *server.Config) { c.DriveScope = server.DriveFile })
	cs := r.session(t, "2025-11-25", nil)

	var empty struct {
		Files   []driveFile `json:"files"`
		PickURL string      `json:"pick_url"`
	}
	call(t, cs, &sdk.CallToolParams{Name: "drive_search", Arguments: map[string]any{"query": ""}}, &empty)
	if len(empty.Files) != 0 || !strings.HasPrefix(empty.PickURL, r.base+"/pick/") {
		t.Fatalf("before any pick drive_search found %d files and offered %q", len(empty.Files), empty.PickURL)
	}
	var link struct {
		PickURL  string `json:"pick_url"`
		MaxFiles int    `json:"max_files"`
	}
	res := call(t, cs, &sdk.CallToolParams{Name: "drive_pick", Arguments: map[string]any{}}, &link)
	if !strings.Contains(text(res), link.PickURL) || link.MaxFiles != 10 {
		t.Fatalf("drive_pick: %s %+v", text(res), link)
	}

	cfg := openPickPage(t, link.PickURL)
	if status := httpStatus(t, http.MethodGet, r.emulator+"/gmail/v1/users/me/profile", cfg.Token); status != http.StatusForbidden {
		t.Errorf("the page's token reads Gmail (%d): it must carry drive.file alone", status)
	}
	doc, pdf := seeded(t, r, "Plan", "Q3 report.pdf")
	pickInEmulator(t, r.emulator, cfg, doc, pdf)
	chosen := postChoice(t, link.PickURL, cfg.PageKey, doc, pdf)
	if len(chosen.Files) != 2 || !strings.Contains(chosen.Say, "Go back to your chat") {
		t.Fatalf("choice: %+v", chosen)
	}

	uploaded := uploadDirect(t, r, "minutes.txt", []byte("minutes\n"))
	var found struct {
		Files []driveFile `json:"files"`
	}
	call(t, cs, &sdk.CallToolParams{Name: "drive_search", Arguments: map[string]any{"query": ""}}, &found)
	ids := map[string]bool{}
	for _, f := range found.Files {
		ids[f.ID] = true
		ids[f.Name] = true
	}
	// The upload made its folder too: drivemail created both.
	if len(found.Files) != 4 || !ids[doc] || !ids[pdf] || !ids[uploaded] || !ids["drivemail uploads"] {
		t.Fatalf("after the pick and an upload drive_search lists %+v, want the two picked, the one uploaded and its folder", found.Files)
	}
	var sent sendResult
	call(t, cs, &sdk.CallToolParams{Name: "send_email", Arguments: map[string]any{
		"to": "ana@example.com", "subject": "Picked", "body_text": "Both files.",
		"attachments": []any{map[string]any{"file_id": doc, "as": "pdf"}, pdf},
	}}, &sent)
	m := r.readMail(t, sent.ID)
	if !bytes.Equal(m.attachments["Q3 report.pdf"], r.files["Q3 report.pdf"]) {
		t.Errorf("the PDF arrived as %d bytes unlike the seed's %d", len(m.attachments["Q3 report.pdf"]), len(r.files["Q3 report.pdf"]))
	}
	if got := m.attachments["Plan.pdf"]; !bytes.HasPrefix(got, []byte("%PDF-")) || !bytes.Contains(got, []byte("ship drivemail")) {
		t.Errorf("the Doc did not arrive as a PDF of the seed's text: %.80q", got)
	}
}

// uploadDirect puts a file in the demo user's Drive through /upload, as
// curl -F does, and returns its id.
func uploadDirect(t *testing.T, r running, name string, data []byte) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("file", name)
	part.Write(data)
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, r.base+"/upload", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var up struct {
		FileID string `json:"file_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&up); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d %v", resp.StatusCode, err)
	}
	return up.FileID
}

// pickConfig is what the pick page tells its script.
type pickConfig struct {
	Token, APIKey, AppID, PageKey string
}

var pickConfigBlock = regexp.MustCompile(`<script type="application/json" id="config">([^<]*)</script>`)

// openPickPage does what the user's browser does with the link: GET the
// landing, press its button, and read the Picker page's settings.
func openPickPage(t *testing.T, link string) pickConfig {
	t.Helper()
	if status := httpStatus(t, http.MethodGet, link, ""); status != http.StatusOK {
		t.Fatalf("the link's landing: %d", status)
	}
	resp, err := http.PostForm(link, url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := pickConfigBlock.FindSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("the pick page: %d %.400s", resp.StatusCode, body)
	}
	var raw struct {
		Token   string `json:"token"`
		APIKey  string `json:"apiKey"`
		AppID   string `json:"appId"`
		PageKey string `json:"pageKey"`
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &raw); err != nil {
		t.Fatal(err)
	}
	return pickConfig(raw)
}

// httpStatus is the status of one request, with a bearer token if given.
func httpStatus(t *testing.T, method, u, token string) int {
	t.Helper()
	req, _ := http.NewRequest(method, u, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// seeded returns the Drive ids of the demo user's files of these names.
func seeded(t *testing.T, r running, names ...string) (string, string) {
	t.Helper()
	resp, err := http.Get(r.emulator + "/_emulator/files?owner=" + url.QueryEscape(emulator.DemoUser))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Files []struct{ ID, Name string } `json:"files"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, f := range list.Files {
		ids[f.Name] = f.ID
	}
	if ids[names[0]] == "" || ids[names[1]] == "" {
		t.Fatalf("the seed lacks %v: %v", names, ids)
	}
	return ids[names[0]], ids[names[1]]
}

// pickInEmulator posts the emulator's Picker dialog as the user's click
// on Select would, with the page's settings.
func pickInEmulator(t *testing.T, emu string, cfg pickConfig, ids ...string) {
	t.Helper()
	form := url.Values{"oauth_token": {cfg.Token}, "developer_key": {cfg.APIKey}, "app_id": {cfg.AppID}, "multiselect": {"true"}, "id": ids}
	req, _ := http.NewRequest(http.MethodPost, emu+"/picker/grant", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("the emulator's Picker: %d %s", resp.StatusCode, b)
	}
}

// postChoice sends the choice the page's script sends.
func postChoice(t *testing.T, link, pageKey string, ids ...string) (out struct {
	Files []struct{ ID, Name string } `json:"files"`
	Say   string                      `json:"say"`
}) {
	t.Helper()
	var files []map[string]string
	for _, id := range ids {
		files = append(files, map[string]string{"id": id})
	}
	b, _ := json.Marshal(map[string]any{"page_key": pageKey, "files": files})
	resp, err := http.Post(link, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("choice: %d %v", resp.StatusCode, err)
	}
	return out
}
