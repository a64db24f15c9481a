package pick_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/pick"
	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/store/storetest"
)

const (
	ann      = "ann@example.com"
	bob      = "bob@example.com"
	clientID = "drivemail-test.apps.googleusercontent.com"
	maxFiles = 3
)

var secret = bytes.Repeat([]byte{0x42}, 32)

// tokens gives each user a token of drivemail's OAuth client on the
// emulator: drive.file alone for the page, and drive.file for the
// server's own reads, as in --drive-scope file.
type tokens struct {
	env  *emutest.Env
	fail error // PickerToken's answer instead of a token
}

func (k tokens) PickerToken(_ context.Context, userID string) (string, time.Time, error) {
	if k.fail != nil {
		return "", time.Time{}, k.fail
	}
	return k.env.Emu.AccessTokenFor(userID, clientID, drivesvc.ScopeDriveFile), time.Now().Add(time.Hour), nil
}

func (k tokens) Client(_ context.Context, userID string) (*http.Client, error) {
	tok := &oauth2.Token{AccessToken: k.env.Emu.AccessTokenFor(userID, clientID, drivesvc.ScopeDriveFile), TokenType: "Bearer"}
	return oauth2.NewClient(context.Background(), oauth2.StaticTokenSource(tok)), nil
}

// harness is the pick page of a drivemail at srv over an emulator where
// ann has a Doc and a PDF and bob a sheet, with a clock tests move.
type harness struct {
	t        *testing.T
	env      *emutest.Env
	clock    *storetest.Clock
	svc      *pick.Service
	srv      *httptest.Server
	tokens   *tokens
	doc, pdf drivesvc.File
	bobs     drivesvc.File
}

func newHarness(t *testing.T) *harness { return newHarnessWith(t, secret) }

// newHarnessWith is newHarness for a drivemail whose --secret is key.
func newHarnessWith(t *testing.T, key []byte) *harness {
	t.Helper()
	h := &harness{t: t, env: emutest.Start(t), clock: storetest.NewClock()}
	h.doc = h.env.Put(ann, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "We ship the pelican."})
	h.pdf = h.env.Put(ann, drivesvc.FileSpec{Name: "report.pdf", Content: []byte("%PDF-1.4 report")})
	h.bobs = h.env.Put(bob, drivesvc.FileSpec{Name: "Bob's budget", Kind: drivesvc.KindSheet})
	st := storetest.SQLite(t).Open(t, store.Options{Now: h.clock.Now})
	t.Cleanup(func() { st.Close() })
	h.tokens = &tokens{env: h.env}
	mux := http.NewServeMux()
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	base, _ := url.Parse(h.srv.URL)
	svc, err := pick.New(pick.Config{
		BaseURL: base, Secrets: [][]byte{key}, Once: st, Tokens: h.tokens,
		Accounts: account.NewDoor(h.tokens, account.Options{Endpoints: h.env.Endpoints}), Endpoints: h.env.Endpoints,
		APIKey: h.env.Emu.APIKey(), AppID: h.env.Emu.ProjectNumber(), MaxFiles: maxFiles, Now: h.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.svc = svc
	mux.Handle("/pick/{ticket}", svc)
	return h
}

// link is a fresh pick link of user's.
func (h *harness) link(user string) string {
	h.t.Helper()
	l, err := h.svc.Link(account.NewDoor(nil, account.Options{}).Open(identity.User{ID: user, Email: user}))
	if err != nil {
		h.t.Fatal(err)
	}
	return l.URL
}

// answer is one response, its body read.
type answer struct {
	status int
	header http.Header
	body   string
}

func (h *harness) do(method, u, contentType, body string) answer {
	h.t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// open presses the landing's button: the page with the Picker, or the
// problem that stops it.
func (h *harness) open(link string) answer {
	return h.do(http.MethodPost, link, "application/x-www-form-urlencoded", "")
}

var configBlock = regexp.MustCompile(`<script type="application/json" id="config">([^<]*)</script>`)

// pageConfig is what the Picker page tells its script.
type pageConfig struct {
	Token    string `json:"token"`
	APIKey   string `json:"apiKey"`
	AppID    string `json:"appId"`
	MaxFiles int    `json:"maxFiles"`
	PageKey  string `json:"pageKey"`
}

// config reads the settings of a Picker page.
func (h *harness) config(a answer) pageConfig {
	h.t.Helper()
	m := configBlock.FindStringSubmatch(a.body)
	if a.status != http.StatusOK || m == nil {
		h.t.Fatalf("want the Picker page, got %d: %.400s", a.status, a.body)
	}
	var c pageConfig
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &c); err != nil {
		h.t.Fatalf("config %q: %v", m[1], err)
	}
	return c
}

// pickInEmulator does what the user does in the emulator's Picker: the
// grant the dialog's form posts, with the page's settings.
func (h *harness) pickInEmulator(c pageConfig, ids ...string) {
	h.t.Helper()
	form := url.Values{"oauth_token": {c.Token}, "developer_key": {c.APIKey}, "app_id": {c.AppID},
		"origin": {h.srv.URL}, "multiselect": {"true"}, "id": ids}
	req, _ := http.NewRequest(http.MethodPost, h.env.URL+"/picker/grant", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		h.t.Fatalf("the emulator's Picker refused the pick: %d %s", resp.StatusCode, b)
	}
}

// choice is the page's answer to a choice.
type choice struct {
	Files []struct {
		ID, Name string
		MimeType string `json:"mime_type"`
	} `json:"files"`
	Missing int    `json:"missing"`
	Say     string `json:"say"`
	Error   string `json:"error"`
	Retry   bool   `json:"retry"`
}

// post sends the choice a page's script sends: its page key and ids.
func (h *harness) post(link, pageKey string, ids ...string) (int, choice) {
	h.t.Helper()
	files := []map[string]string{}
	for _, id := range ids {
		files = append(files, map[string]string{"id": id, "resource_key": ""})
	}
	b, _ := json.Marshal(map[string]any{"page_key": pageKey, "files": files})
	a := h.do(http.MethodPost, link, "application/json", string(b))
	var c choice
	if err := json.Unmarshal([]byte(a.body), &c); err != nil {
		h.t.Fatalf("choice answer %d %q: %v", a.status, a.body, err)
	}
	return a.status, c
}

// refusalFor is a refusal the page shows as it is.
var refusalFor = refusal.New("picker_scope", "Reconnect drivemail and allow the files you pick.")
