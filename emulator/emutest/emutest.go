// Package emutest starts an in-process Google emulator for a test: the
// emulator behind a loopback HTTP server, the google.Endpoints that point
// at it, and HTTP clients carrying a user's token, so a test of drive,
// gmail or compose starts with one line and reads back what was stored.
// Every helper fails the test rather than return an error.
package emutest

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"golang.org/x/oauth2"
	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/internal/memnet"
)

// The Google scopes tests grant.
const (
	ScopeDrive         = drivesvc.ScopeDrive
	ScopeDriveReadonly = drivesvc.ScopeDriveReadonly
	ScopeDriveFile     = drivesvc.ScopeDriveFile
	ScopeGmailSend     = "https://www.googleapis.com/auth/gmail.send"
	ScopeGmailCompose  = "https://www.googleapis.com/auth/gmail.compose"
	ScopeGmailReadonly = "https://www.googleapis.com/auth/gmail.readonly"
)

// Env is one emulator serving on loopback for the length of a test. Its
// helpers fail the test given to Start (a subtest sharing an Env fails
// its parent).
type Env struct {
	Emu       *emulator.Emulator
	URL       string           // the emulator's origin, http://127.0.0.1:PORT
	Endpoints google.Endpoints // every Google API and OAuth URL on URL
	// Transport reaches URL: net/http's default over loopback, the
	// network's under OnNetwork.
	Transport http.RoundTripper

	t testing.TB
}

// Option tunes the emulator before it starts.
type Option func(*settings)

type settings struct {
	cfg emulator.Config
	net *memnet.Network
}

// WithConfig starts the emulator with cfg (a clock, a token lifetime,
// auto-approval) instead of the zero Config.
func WithConfig(cfg emulator.Config) Option {
	return func(s *settings) { s.cfg = cfg }
}

// OnNetwork serves the emulator on n, an in-memory network, instead of a
// loopback socket, so that a test started inside a testing/synctest
// bubble runs whole in it: Start the Env inside the bubble, and reach it
// through Client or Transport.
func OnNetwork(n *memnet.Network) Option {
	return func(s *settings) { s.net = n }
}

// Start runs an emulator with no users until the test ends.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	var s settings
	for _, o := range opts {
		o(&s)
	}
	emu, err := emulator.New(s.cfg)
	if err != nil {
		t.Fatalf("start the emulator: %v", err)
	}
	t.Cleanup(func() { emu.Close() })
	var srv *httptest.Server
	var transport http.RoundTripper = http.DefaultTransport
	if s.net != nil {
		srv = s.net.NewServer(emu.Handler())
		transport = s.net.Client(t).Transport
	} else {
		srv = httptest.NewServer(emu.Handler())
	}
	t.Cleanup(srv.Close)
	return &Env{Emu: emu, URL: srv.URL, Endpoints: google.Endpoints{Base: srv.URL}, Transport: transport, t: t}
}

// Token mints an access token for email with scopes, as if the user had
// consented; the user is registered if new.
func (e *Env) Token(email string, scopes ...string) string {
	return e.Emu.AccessToken(email, scopes...)
}

// Client is an HTTP client that sends a fresh token of email with scopes
// on every request, as the per-user clients of drivemail do.
func (e *Env) Client(email string, scopes ...string) *http.Client {
	tok := &oauth2.Token{AccessToken: e.Token(email, scopes...), TokenType: "Bearer"}
	return &http.Client{Transport: &oauth2.Transport{Source: oauth2.StaticTokenSource(tok), Base: e.Transport}}
}

// Put stores a Drive file owned by owner, registering owner as a user.
func (e *Env) Put(owner string, spec drivesvc.FileSpec) drivesvc.File {
	e.t.Helper()
	e.Emu.AddUser(owner)
	f, err := e.Emu.Drive().PutFile(owner, spec)
	if err != nil {
		e.t.Fatalf("put %q: %v", spec.Name, err)
	}
	return f
}

// Inject queues fault rules, in order; a rule the emulator refuses fails
// the test.
func (e *Env) Inject(faults ...emulator.Fault) {
	e.t.Helper()
	for _, f := range faults {
		if err := e.Emu.InjectFault(f); err != nil {
			e.t.Fatalf("inject fault on %s: %v", f.PathPrefix, err)
		}
	}
}

// Content is the bytes the emulated Drive holds for a binary file.
func (e *Env) Content(fileID string) []byte {
	e.t.Helper()
	rc, err := e.Emu.Drive().Content(fileID)
	if err != nil {
		e.t.Fatalf("content of %s: %v", fileID, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		e.t.Fatalf("read content of %s: %v", fileID, err)
	}
	return b
}

// Message is a sent message of email's mailbox as Gmail stores it, read
// back through the Gmail API with format=raw.
func (e *Env) Message(email, id string) []byte {
	e.t.Helper()
	m, err := e.gmail(email).Users.Messages.Get("me", id).Format("raw").Do()
	if err != nil {
		e.t.Fatalf("messages.get %s: %v", id, err)
	}
	return e.decodeRaw(m.Raw)
}

// Draft is the message of one of email's drafts, read back with
// format=raw.
func (e *Env) Draft(email, draftID string) []byte {
	e.t.Helper()
	d, err := e.gmail(email).Users.Drafts.Get("me", draftID).Format("raw").Do()
	if err != nil {
		e.t.Fatalf("drafts.get %s: %v", draftID, err)
	}
	if d.Message == nil {
		e.t.Fatalf("drafts.get %s: no message", draftID)
	}
	return e.decodeRaw(d.Message.Raw)
}

// gmail is a Gmail API client that may read email's mailbox.
func (e *Env) gmail(email string) *gm.Service {
	e.t.Helper()
	opts := append([]option.ClientOption{option.WithHTTPClient(e.Client(email, ScopeGmailReadonly))}, e.Endpoints.GmailOptions()...)
	s, err := gm.NewService(context.Background(), opts...)
	if err != nil {
		e.t.Fatalf("gmail client: %v", err)
	}
	return s
}

// decodeRaw decodes Gmail's base64url "raw", padded or not.
func (e *Env) decodeRaw(raw string) []byte {
	e.t.Helper()
	b, err := base64.URLEncoding.DecodeString(raw)
	if err != nil {
		b, err = base64.RawURLEncoding.DecodeString(raw)
	}
	if err != nil {
		e.t.Fatalf("decode raw message: %v", err)
	}
	return b
}
