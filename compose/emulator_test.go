package compose_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/account/accounttest"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/internal/memnet"
)

const (
	user  = "ana@example.com"
	other = "bob@example.com"
)

// env is one in-process emulator with a user whose token can read Drive,
// send, draft and read mail, and a compose.Service pointed at it.
type env struct {
	*emutest.Env
	t   *testing.T
	hc  *http.Client
	svc *compose.Service
	// google tunes the user's Google clients (account.Options).
	google account.Options
}

// newEnv starts the emulator and a Service with cfg; google, when given,
// tunes the user's Google clients (chunk size, timeouts), and logs to
// cfg's logger unless it names its own, as serve gives both one logger.
func newEnv(t *testing.T, cfg compose.Config, google ...account.Options) *env {
	t.Helper()
	return startEnv(t, emutest.Start(t), cfg, google...)
}

// newBubbleEnv is newEnv for a test inside a testing/synctest bubble
// (call it there): the emulator serves on an in-memory network, so the
// bubble's clock runs the send's timeouts and pauses, at once.
func newBubbleEnv(t *testing.T, cfg compose.Config, google ...account.Options) *env {
	t.Helper()
	return startEnv(t, emutest.Start(t, emutest.OnNetwork(memnet.New())), cfg, google...)
}

// inBubble is test run inside a testing/synctest bubble, for t.Run or
// as a test's whole body: its env comes from newBubbleEnv.
func inBubble(test func(t *testing.T)) func(t *testing.T) {
	return func(t *testing.T) { synctest.Test(t, test) }
}

func startEnv(t *testing.T, emu *emutest.Env, cfg compose.Config, google ...account.Options) *env {
	t.Helper()
	e := &env{Env: emu, t: t}
	e.hc = e.Client(user, emutest.ScopeDriveReadonly, emutest.ScopeGmailSend, emutest.ScopeGmailCompose, emutest.ScopeGmailReadonly)
	if len(google) > 0 {
		e.google = google[0]
	}
	e.google.Endpoints = e.Endpoints
	if e.google.Logger == nil {
		e.google.Logger = cfg.Logger
	}
	e.svc = compose.New(cfg)
	return e
}

// as is u's account, its Google calls through hc (e.hc when nil).
func (e *env) as(u identity.User, hc *http.Client) *account.Account {
	if hc == nil {
		hc = e.hc
	}
	return accounttest.Over(u, hc, e.google)
}

// acct is the account most tests send from: e.hc's, with no user id or
// address, so From comes from Gmail's profile and nothing is cached.
func (e *env) acct() *account.Account { return e.as(identity.User{}, nil) }

// putBytes stores random bytes as a binary file and returns it with them.
func (e *env) putBytes(name string, n int) (drivesvc.File, []byte) {
	e.t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	return e.Put(user, drivesvc.FileSpec{Name: name, Content: b}), b
}

func (e *env) send(req compose.Request, opts compose.Options) (compose.Result, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return e.svc.Send(ctx, e.acct(), req, opts)
}

// sendFileOnce sends f as the only attachment and fails the test unless
// exactly one message went, its attachment byte for byte want.
func (e *env) sendFileOnce(subject string, f drivesvc.File, want []byte) {
	e.t.Helper()
	res, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: subject, BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}}}, compose.Options{})
	if err != nil {
		e.t.Fatalf("Send: %v", err)
	}
	if st := e.Emu.Stats(); st.MessagesSent != 1 {
		e.t.Errorf("messages sent = %d, want exactly 1", st.MessagesSent)
	}
	_, root := goParse(e.t, e.Message(user, res.ID))
	if l := root.leaves(); len(l) != 2 || shaHex(l[1].Body) != shaHex(want) {
		e.t.Errorf("attachment does not match Drive's bytes")
	}
}

// exportSHA is the sha256 of a native file's export as Drive serves it
// (through the same drive package, so the test compares against Drive,
// not against what compose wrote).
func (e *env) exportSHA(f drivesvc.File, mimeType string, tab *drive.Sheet) string {
	e.t.Helper()
	ctx := context.Background()
	dc, err := drive.New(ctx, e.hc, e.Endpoints)
	if err != nil {
		e.t.Fatal(err)
	}
	df, err := dc.Get(ctx, drive.Ref{ID: f.ID})
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
