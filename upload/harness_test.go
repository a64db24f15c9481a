package upload_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/oauth2"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/internal/logtest"
	"github.com/drivemail/drivemail/internal/memnet"
	"github.com/drivemail/drivemail/oauth"
	"github.com/drivemail/drivemail/oauth/googleauth"
	"github.com/drivemail/drivemail/oauth/keyring"
	"github.com/drivemail/drivemail/server"
	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/store/storetest"
	"github.com/drivemail/drivemail/tools"
	"github.com/drivemail/drivemail/upload"
)

var testSecret = bytes.Repeat([]byte{0x42}, 32)

// The Google scopes a signed-in user grants (googleauth.Service.Scopes).
var fullScopes = []string{"openid", googleauth.ScopeUserinfoEmail, googleauth.ScopeGmailSend, googleauth.ScopeDriveReadonly, googleauth.ScopeDriveFile}

// env is drivemail's real HTTP handler chain (server.NewServer with the
// real bearer middleware, store, Google token storage and upload service)
// in front of an in-process emulated Google.
type env struct {
	t      *testing.T
	emu    *emulator.Emulator
	google *httptest.Server
	clock  *storetest.Clock
	store  store.Store
	ga     *googleauth.Service
	as     *oauth.Server
	svc    *upload.Service
	srv    *httptest.Server
	base   string
	logs   *logtest.Buffer
	cfg    upload.Config
	// hc reaches the server and the emulated Google: net/http's default
	// client, or the in-memory network's in a bubble.
	hc *http.Client
}

// user is a signed-in drivemail user, and their account as the bearer
// check would open it.
type user struct {
	id, email, token string
	acct             *account.Account
}

func newEnv(t *testing.T, tune ...func(*upload.Config)) *env {
	t.Helper()
	return startEnv(t, nil, tune...)
}

// newBubbleEnv is newEnv for a test inside a testing/synctest bubble
// (call it there): the server and the emulated Google on an in-memory
// network, reached through e.hc, so the bubble's clock runs the upload's
// timeouts.
func newBubbleEnv(t *testing.T, tune ...func(*upload.Config)) *env {
	t.Helper()
	return startEnvOn(t, memnet.New(), nil, tune...)
}

// inBubble is test run inside a testing/synctest bubble, for t.Run or as
// a test's whole body: its env comes from newBubbleEnv or saveBubbleEnv.
func inBubble(test func(t *testing.T)) func(t *testing.T) {
	return func(t *testing.T) { synctest.Test(t, test) }
}

// startEnv is newEnv with the users' Google clients made by wrap(the
// stored tokens), when wrap is given: a test's own transport under them.
func startEnv(t *testing.T, wrap func(account.Tokens) account.Tokens, tune ...func(*upload.Config)) *env {
	t.Helper()
	return startEnvOn(t, nil, wrap, tune...)
}

// startEnvOn is startEnv with the server and the emulator on network n,
// or on loopback when n is nil.
func startEnvOn(t *testing.T, n *memnet.Network, wrap func(account.Tokens) account.Tokens, tune ...func(*upload.Config)) *env {
	t.Helper()
	e := &env{t: t, clock: storetest.NewClock(), logs: &logtest.Buffer{}, hc: http.DefaultClient}
	emu, err := emulator.New(emulator.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	e.emu = emu
	var googleHC *http.Client // googleauth's default
	if n != nil {
		e.hc = n.Client(t)
		googleHC = &http.Client{Timeout: 30 * time.Second, Transport: e.hc.Transport}
		e.google = n.NewServer(emu.Handler())
	} else {
		e.google = httptest.NewServer(emu.Handler())
	}
	t.Cleanup(e.google.Close)
	e.store = storetest.SQLite(t).Open(t, store.Options{Now: e.clock.Now})
	t.Cleanup(func() { e.store.Close() })

	mux := http.NewServeMux()
	if n != nil {
		e.srv = n.NewUnstartedServer(mux)
	} else {
		e.srv = httptest.NewUnstartedServer(mux)
	}
	t.Cleanup(e.srv.Close)
	e.base = "http://" + e.srv.Listener.Addr().String()
	base, _ := url.Parse(e.base)
	endpoints := google.Endpoints{Base: e.google.URL}

	ring, err := keyring.New([][]byte{testSecret}, googleauth.KeyPurpose)
	if err != nil {
		t.Fatal(err)
	}
	e.ga, err = googleauth.New(googleauth.Config{Endpoints: endpoints, ClientID: "drivemail-test", ClientSecret: "test-secret",
		RedirectURL: e.base + "/oauth/callback", Store: e.store, Keys: ring, HTTPClient: googleHC})
	if err != nil {
		t.Fatal(err)
	}
	e.as, err = oauth.New(oauth.Config{BaseURL: e.base, Store: e.store, Google: e.ga, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(e.logs, nil))
	var tokens account.Tokens = e.ga
	if wrap != nil {
		tokens = wrap(tokens)
	}
	cfg := upload.Config{BaseURL: base, Secrets: [][]byte{testSecret}, Accounts: account.NewDoor(tokens, account.Options{Endpoints: endpoints, Logger: logger}),
		Limits: e.store, Transfers: e.store, Now: e.clock.Now, Logger: logger}
	for _, f := range tune {
		f(&cfg)
	}
	e.cfg = cfg
	e.svc, err = upload.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	handler := server.NewServer(server.Deps{Logger: logger, BaseURL: base, Auth: e.as, Accounts: cfg.Accounts, Uploads: e.svc, Store: e.store,
		Tools: tools.Deps{Uploads: e.svc}})
	mux.Handle("/", handler)
	e.srv.Start()
	return e
}

// replica starts a second server on the same store, Google, secret and
// public base URL, as another replica behind a load balancer would be,
// and returns the origin it listens on.
func (e *env) replica() string {
	e.t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewUnstartedServer(mux)
	e.t.Cleanup(srv.Close)
	cfg := e.cfg
	svc, err := upload.New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	mux.Handle("/", server.NewServer(server.Deps{BaseURL: cfg.BaseURL, Auth: e.as, Accounts: cfg.Accounts, Uploads: svc, Store: e.store,
		Tools: tools.Deps{Uploads: svc}}))
	srv.Start()
	return srv.URL
}

// signIn registers email at the emulated Google with scopes, stores the
// Google grant as the OAuth callback would, and mints a drivemail token.
func (e *env) signIn(email string, scopes ...string) user {
	e.t.Helper()
	if len(scopes) == 0 {
		scopes = fullScopes
	}
	ctx := context.Background()
	e.emu.AddUser(email)
	tok := &oauth2.Token{AccessToken: e.emu.AccessTokenFor(email, "drivemail-test", scopes...), RefreshToken: e.emu.RefreshToken(email, "drivemail-test", scopes...),
		TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}
	g, err := e.ga.GrantForToken(ctx, tok)
	if err != nil {
		e.t.Fatal(err)
	}
	g.Scopes = scopes
	u, err := e.ga.SaveGrant(ctx, g)
	if err != nil {
		e.t.Fatal(err)
	}
	token, err := e.as.MintAccessToken(ctx, u.ID, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return user{id: u.ID, email: email, token: token, acct: e.account(u.ID, email, fullScopes...)}
}

// account is the account the server opens for a caller who granted
// scopes.
func (e *env) account(id, email string, scopes ...string) *account.Account {
	return e.cfg.Accounts.Open(identity.User{ID: id, Email: email, GoogleScopes: scopes})
}

// ticket asks for an upload URL as the request_upload tool does.
func (e *env) ticket(u user, req upload.Request) upload.Ticket {
	e.t.Helper()
	t, err := e.svc.RequestUpload(context.Background(), u.acct, req)
	if err != nil {
		e.t.Fatalf("RequestUpload(%+v): %v", req, err)
	}
	return t
}

// answer is one response of the upload endpoint.
type answer struct {
	status int
	header http.Header
	result upload.Result
	errMsg string
	raw    string
}

func (e *env) do(req *http.Request) answer {
	e.t.Helper()
	resp, err := e.hc.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(body)}
	if resp.StatusCode == http.StatusCreated {
		if err := json.Unmarshal(body, &a.result); err != nil {
			e.t.Fatalf("201 with unreadable body %q", body)
		}
	} else {
		var m map[string]string
		_ = json.Unmarshal(body, &m)
		a.errMsg = m["error"]
	}
	return a
}

// part is one multipart form part: a field, or the file when filename or
// contentType is set.
type part struct {
	field, filename, contentType string
	data                         []byte
}

// quoted escapes a header's quoted-string as RFC 7578 forms do.
var quoted = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

func formBody(parts ...part) (io.Reader, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := `form-data; name="` + quoted.Replace(p.field) + `"`
		if p.filename != "" {
			cd += `; filename="` + quoted.Replace(p.filename) + `"`
		}
		h.Set("Content-Disposition", cd)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		w, _ := mw.CreatePart(h)
		w.Write(p.data)
	}
	mw.Close()
	return &buf, mw.FormDataContentType()
}

// postForm POSTs a multipart form to path (with the token when given).
func (e *env) postForm(path, token string, parts ...part) answer {
	e.t.Helper()
	body, ct := formBody(parts...)
	req, _ := http.NewRequest(http.MethodPost, e.base+path, body)
	req.Header.Set("Content-Type", ct)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return e.do(req)
}

// sendRaw sends data as the raw body with method to path.
func (e *env) sendRaw(method, path, token string, data []byte, header ...string) answer {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.base+path, bytes.NewReader(data))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return e.do(req)
}

// files lists the user's files in the emulated Drive, folders left out.
func (e *env) files(u user) []drivesvc.File {
	var out []drivesvc.File
	for _, f := range e.emu.Drive().Files(u.email) {
		if f.MimeType != drive.MimeFolder {
			out = append(out, f)
		}
	}
	return out
}

// stored returns a file's bytes as the emulated Drive holds them.
func (e *env) stored(id string) []byte {
	e.t.Helper()
	rc, err := e.emu.Drive().Content(id)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// mustStore checks a 201 answer against the bytes sent and the file Drive
// holds, and returns the file.
func (e *env) mustStore(a answer, data []byte, name, mimeType string) drivesvc.File {
	e.t.Helper()
	if a.status != http.StatusCreated {
		e.t.Fatalf("status %d (%s), want 201", a.status, a.raw)
	}
	r := a.result
	if r.Name != name || r.MimeType != mimeType || r.Size != int64(len(data)) || r.SHA256 != sha(data) {
		e.t.Errorf("result = %+v, want name %q type %q size %d sha256 %s", r, name, mimeType, len(data), sha(data))
	}
	if want := "mcp-file://" + strings.TrimPrefix(e.base, "http://") + "/" + r.FileID; r.Handle != want {
		e.t.Errorf("handle = %q, want %q", r.Handle, want)
	}
	f, ok := e.emu.Drive().FileByID(r.FileID)
	if !ok {
		e.t.Fatalf("file %s is not in Drive", r.FileID)
	}
	if f.Name != name || f.MimeType != mimeType || f.SHA256 != sha(data) || f.Size != int64(len(data)) {
		e.t.Errorf("Drive holds %+v", f)
	}
	if got := e.stored(r.FileID); !bytes.Equal(got, data) {
		e.t.Errorf("Drive holds %d bytes that differ from the %d sent", len(got), len(data))
	}
	return f
}

// mustRefuse checks a refusal's status and that its sentence says each of
// wants, and that no file was created for u.
func (e *env) mustRefuse(a answer, status int, u user, wants ...string) {
	e.t.Helper()
	if a.status != status {
		e.t.Fatalf("status %d (%s), want %d", a.status, a.raw, status)
	}
	if a.errMsg == "" {
		e.t.Errorf("refusal without a JSON error sentence: %q", a.raw)
	}
	for _, w := range wants {
		if !strings.Contains(a.errMsg, w) {
			e.t.Errorf("refusal %q does not say %q", a.errMsg, w)
		}
	}
	if n := len(e.files(u)); n != 0 {
		e.t.Errorf("%d files in Drive after a refusal", n)
	}
}

// waitLog waits until the service logged a line containing s.
func (e *env) waitLog(s string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(e.logs.String(), s) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.t.Fatalf("no log line with %q; logs:\n%s", s, e.logs.String())
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// pattern returns n deterministic, varied bytes.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + i/997)
	}
	return b
}

// ticketPath is the path part of a ticket's upload URL.
func ticketPath(t upload.Ticket) string {
	u, _ := url.Parse(t.UploadURL)
	return u.Path
}
