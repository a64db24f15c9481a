package drivesvc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/internal/memnet"
)

// env is one emulator behind an httptest server.
type env struct {
	t     testing.TB
	emu   *emulator.Emulator
	srv   *httptest.Server
	hc    *http.Client // reaches srv
	drive *drivesvc.Service
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvWith(t, emulator.Config{})
}

func newEnvWith(t testing.TB, cfg emulator.Config) *env {
	t.Helper()
	e := emulatorEnv(t, cfg)
	e.srv = httptest.NewServer(e.emu.Handler())
	e.hc = e.srv.Client()
	t.Cleanup(e.srv.Close)
	return e
}

// newBubbleEnv is newEnv for a test inside a testing/synctest bubble
// (call it there): served on an in-memory network, so the clients' retry
// pauses and net/http's half-second pause before closing a connection
// whose body was refused pass at once.
func newBubbleEnv(t testing.TB) *env {
	t.Helper()
	e := emulatorEnv(t, emulator.Config{})
	e.srv, e.hc = memnet.New().Serve(t, e.emu.Handler())
	return e
}

func emulatorEnv(t testing.TB, cfg emulator.Config) *env {
	t.Helper()
	emu, err := emulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	return &env{t: t, emu: emu, drive: emu.Drive()}
}

// token mints a token for email; no scopes means full Drive and Sheets.
func (e *env) token(email string, scopes ...string) string {
	if len(scopes) == 0 {
		scopes = []string{drivesvc.ScopeDrive, drivesvc.ScopeSheets}
	}
	return e.emu.AccessToken(email, scopes...)
}

// bearer adds a token to every request, as an oauth2 transport would.
type bearer struct {
	base  http.RoundTripper
	token string
	// header, when set, is added to every request (resource keys).
	header http.Header
}

func (b *bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	for k, v := range b.header {
		r.Header[k] = v
	}
	return b.base.RoundTrip(r)
}

func (e *env) driveClient(tok string) *drive.Service {
	e.t.Helper()
	svc, err := drive.NewService(context.Background(), option.WithEndpoint(e.srv.URL+"/drive/v3/"),
		option.WithHTTPClient(&http.Client{Transport: &bearer{base: e.hc.Transport, token: tok}}))
	if err != nil {
		e.t.Fatal(err)
	}
	return svc
}

func (e *env) sheetsClient(tok string) *sheets.Service {
	e.t.Helper()
	svc, err := sheets.NewService(context.Background(), option.WithEndpoint(e.srv.URL+"/"),
		option.WithHTTPClient(&http.Client{Transport: &bearer{base: e.hc.Transport, token: tok}}))
	if err != nil {
		e.t.Fatal(err)
	}
	return svc
}

// do sends a raw request with tok (if any) and returns status, header, body.
func (e *env) do(method, url, tok string, header map[string]string, body []byte) (int, http.Header, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := e.hc.Do(req.WithContext(ctx))
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return res.StatusCode, res.Header, b
}

// put creates a file or fails the test.
func (e *env) put(owner string, spec drivesvc.FileSpec) drivesvc.File {
	e.t.Helper()
	f, err := e.drive.PutFile(owner, spec)
	if err != nil {
		e.t.Fatal(err)
	}
	return f
}

// apiErr returns the Google error inside err, failing the test if there is none.
func apiErr(t *testing.T, err error) *googleapi.Error {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		t.Fatalf("err = %v, want a googleapi.Error", err)
	}
	return ge
}

// wantReason checks err is Google's error with code and reason.
func wantReason(t *testing.T, err error, code int, reason string) *googleapi.Error {
	t.Helper()
	ge := apiErr(t, err)
	if ge.Code != code || len(ge.Errors) == 0 || ge.Errors[0].Reason != reason {
		t.Fatalf("error %d %+v, want %d %s", ge.Code, ge.Errors, code, reason)
	}
	return ge
}

// jsonKeys decodes a JSON object's top-level keys.
func jsonKeys(t *testing.T, b []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %s", b)
	}
	return m
}
