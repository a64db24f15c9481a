package compose_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/oauth2"
	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/google"
)

const (
	user  = "ana@example.com"
	other = "bob@example.com"

	scopeDrive    = "https://www.googleapis.com/auth/drive.readonly"
	scopeSend     = "https://www.googleapis.com/auth/gmail.send"
	scopeCompose  = "https://www.googleapis.com/auth/gmail.compose"
	scopeReadonly = "https://www.googleapis.com/auth/gmail.readonly"
)

// env is one in-process emulator with a user whose token can read Drive,
// send, draft and read mail, and a compose.Service pointed at it.
type env struct {
	t   *testing.T
	emu *emulator.Emulator
	srv *httptest.Server
	ep  google.Endpoints
	hc  *http.Client
	svc *compose.Service
}

func newEnv(t *testing.T, cfg compose.Config) *env {
	t.Helper()
	emu, err := emulator.New(emulator.Config{})
	if err != nil {
		t.Fatalf("emulator: %v", err)
	}
	t.Cleanup(func() { emu.Close() })
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	emu.AddUser(user)
	emu.AddUser(other)
	e := &env{t: t, emu: emu, srv: srv, ep: google.Endpoints{Base: srv.URL}}
	e.hc = e.client(user, scopeDrive, scopeSend, scopeCompose, scopeReadonly)
	cfg.Endpoints = e.ep
	e.svc = compose.New(cfg)
	return e
}

// client is an HTTP client carrying a fresh token of email with scopes.
func (e *env) client(email string, scopes ...string) *http.Client {
	tok := e.emu.AccessToken(email, scopes...)
	return oauth2.NewClient(context.Background(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok, TokenType: "Bearer"}))
}

func (e *env) put(owner string, spec drivesvc.FileSpec) drivesvc.File {
	e.t.Helper()
	f, err := e.emu.Drive().PutFile(owner, spec)
	if err != nil {
		e.t.Fatalf("put %q: %v", spec.Name, err)
	}
	return f
}

// putBytes stores random bytes as a binary file and returns it with them.
func (e *env) putBytes(name string, n int) (drivesvc.File, []byte) {
	e.t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	return e.put(user, drivesvc.FileSpec{Name: name, Content: b}), b
}

func (e *env) send(req compose.Request, opts compose.Options) (compose.Result, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return e.svc.Send(ctx, e.hc, req, opts)
}

// raw reads a stored message back with format=raw.
func (e *env) raw(id string) []byte {
	e.t.Helper()
	s, err := gm.NewService(context.Background(), append([]option.ClientOption{option.WithHTTPClient(e.hc)}, e.ep.GmailOptions()...)...)
	if err != nil {
		e.t.Fatal(err)
	}
	m, err := s.Users.Messages.Get("me", id).Format("raw").Do()
	if err != nil {
		e.t.Fatalf("messages.get raw %s: %v", id, err)
	}
	b, err := base64.URLEncoding.DecodeString(m.Raw)
	if err != nil {
		b, err = base64.RawURLEncoding.DecodeString(m.Raw)
	}
	if err != nil {
		e.t.Fatalf("decode raw: %v", err)
	}
	return b
}

// draftRaw reads a draft's message back.
func (e *env) draftRaw(draftID string) []byte {
	e.t.Helper()
	s, err := gm.NewService(context.Background(), append([]option.ClientOption{option.WithHTTPClient(e.hc)}, e.ep.GmailOptions()...)...)
	if err != nil {
		e.t.Fatal(err)
	}
	d, err := s.Users.Drafts.Get("me", draftID).Format("raw").Do()
	if err != nil {
		e.t.Fatalf("drafts.get %s: %v", draftID, err)
	}
	b, err := base64.URLEncoding.DecodeString(d.Message.Raw)
	if err != nil {
		b, err = base64.RawURLEncoding.DecodeString(d.Message.Raw)
	}
	if err != nil {
		e.t.Fatalf("decode raw: %v", err)
	}
	return b
}

// exportSHA is the sha256 of a native file's export as Drive serves it
// (through the same drive package, so the test compares against Drive,
// not against what compose wrote).
func (e *env) exportSHA(f drivesvc.File, mimeType string, tab *drive.Sheet) string {
	e.t.Helper()
	ctx := context.Background()
	dc, err := drive.New(ctx, e.hc, e.ep)
	if err != nil {
		e.t.Fatal(err)
	}
	df, err := dc.Get(ctx, f.ID)
	if err != nil {
		e.t.Fatalf("get %s: %v", f.ID, err)
	}
	rc, err := dc.Export(ctx, df, mimeType, tab)
	if err != nil {
		e.t.Fatalf("export %s as %s: %v", f.ID, mimeType, err)
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		e.t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func shaHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

var _ = bytes.NewReader
