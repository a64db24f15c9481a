package account_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/account/accounttest"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/internal/logtest"
)

// countingTokens counts the token reads an account makes.
type countingTokens struct {
	hc    *http.Client
	err   error
	reads atomic.Int32
	users sync.Map // the user ids asked for
}

func (c *countingTokens) Client(_ context.Context, userID string) (*http.Client, error) {
	c.reads.Add(1)
	c.users.Store(userID, true)
	return c.hc, c.err
}

// TestAnAccountReadsItsTokenOnceWhenFirstNeeded: opening an account asks
// nothing of the token store (a call refused before Google costs no
// read), and its Drive and Gmail clients, asked for from many goroutines,
// come from one token read for that user.
func TestAnAccountReadsItsTokenOnceWhenFirstNeeded(t *testing.T) {
	env := emutest.Start(t)
	tokens := &countingTokens{hc: env.Client("ana@example.com", emutest.ScopeDriveReadonly, emutest.ScopeGmailReadonly)}
	door := account.NewDoor(tokens, account.Options{Endpoints: env.Endpoints})
	acct := door.Open(identity.User{ID: "u-ana", Email: "ana@example.com"})
	if n := tokens.reads.Load(); n != 0 {
		t.Fatalf("Open read the token %d times, want 0", n)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := acct.Drive(context.Background()); err != nil {
				t.Error(err)
			}
			if _, err := acct.Gmail(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := tokens.reads.Load(); n != 1 {
		t.Errorf("16 client requests read the token %d times, want 1", n)
	}
	if _, ok := tokens.users.Load("u-ana"); !ok {
		t.Error("the token read was not the account's user's")
	}
	// The clients reach the emulator as the user.
	dc, _ := acct.Drive(context.Background())
	if _, err := dc.Search(context.Background(), drive.Query{}); err != nil {
		t.Errorf("Drive search: %v", err)
	}
	gc, _ := acct.Gmail(context.Background())
	if _, err := gc.Search(context.Background(), "", 5, ""); err != nil {
		t.Errorf("Gmail search: %v", err)
	}
	// Another call's account reads again: an account lives for one call.
	if _, err := door.Open(identity.User{ID: "u-ana"}).Drive(context.Background()); err != nil || tokens.reads.Load() != 2 {
		t.Errorf("a second account: %v after %d reads, want 2", err, tokens.reads.Load())
	}
}

// TestAnAccountWithoutATokenSaysWhy: when the user's token cannot be had,
// both clients give the reason, which errors.Is still finds (a lost grant
// is a refusal the tools show as it is), and no client is made.
func TestAnAccountWithoutATokenSaysWhy(t *testing.T) {
	lost := errors.New("no Google token stored for this user")
	tokens := &countingTokens{err: lost}
	acct := account.NewDoor(tokens, account.Options{}).Open(identity.User{ID: "u1"})
	dc, errDrive := acct.Drive(context.Background())
	gc, errGmail := acct.Gmail(context.Background())
	if dc != nil || gc != nil || !errors.Is(errDrive, lost) || !errors.Is(errGmail, lost) {
		t.Errorf("Drive = %v, %v; Gmail = %v, %v; want nil clients and the token's error", dc, errDrive, gc, errGmail)
	}
	if n := tokens.reads.Load(); n != 1 {
		t.Errorf("the token was read %d times, want once", n)
	}
	if _, err := account.NewDoor(nil, account.Options{}).Open(identity.User{ID: "u1"}).Drive(context.Background()); err == nil {
		t.Error("a door without tokens gave a Drive client")
	}
}

// TestOneSetOfOptionsReachesEveryClient: the options a door is given
// tune the Drive and the Gmail client alike; here the logger, which hears
// from each that its API is disabled for drivemail's project.
func TestOneSetOfOptionsReachesEveryClient(t *testing.T) {
	env := emutest.Start(t)
	logs := &logtest.Buffer{}
	acct := accounttest.Emulated(env, account.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))},
		"ana@example.com", emutest.ScopeDriveReadonly, emutest.ScopeGmailReadonly)
	for _, api := range []string{"drive", "gmail"} {
		if err := env.Emu.SetAPIEnabled(api, false); err != nil {
			t.Fatal(err)
		}
	}
	dc, err := acct.Drive(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dc.Search(context.Background(), drive.Query{}); !errors.Is(err, drive.ErrAPIDisabled) {
		t.Errorf("Drive search: %v, want the API disabled", err)
	}
	gc, err := acct.Gmail(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gc.Search(context.Background(), "", 5, ""); err == nil {
		t.Error("Gmail search succeeded with the API disabled")
	}
	for _, api := range []string{"drive.googleapis.com", "gmail.googleapis.com"} {
		if !strings.Contains(logs.String(), "api="+api) {
			t.Errorf("the options' logger did not hear of %s:\n%s", api, logs.String())
		}
	}
}

// TestScopesSayWhatTheUserAllowed: each feature's check, for each scope
// that grants it and for one that does not.
func TestScopesSayWhatTheUserAllowed(t *testing.T) {
	const (
		send     = "https://www.googleapis.com/auth/gmail.send"
		compose  = "https://www.googleapis.com/auth/gmail.compose"
		readonly = "https://www.googleapis.com/auth/gmail.readonly"
		modify   = "https://www.googleapis.com/auth/gmail.modify"
		full     = "https://mail.google.com/"
		file     = "https://www.googleapis.com/auth/drive.file"
		allDrive = "https://www.googleapis.com/auth/drive"
		driveRO  = "https://www.googleapis.com/auth/drive.readonly"
	)
	cases := []struct {
		scope                  string
		addFiles, draft, reads bool
	}{
		{send, false, false, false},
		{compose, false, true, false},
		{readonly, false, false, true},
		{modify, false, true, true},
		{full, false, true, true},
		{file, true, false, false},
		{allDrive, true, false, false},
		{driveRO, false, false, false},
		{"https://www.googleapis.com/auth/drive.file.evil", false, false, false},
	}
	door := account.NewDoor(nil, account.Options{})
	for _, c := range cases {
		a := door.Open(identity.User{ID: "u1", GoogleScopes: []string{"openid", c.scope}})
		if a.MayAddFiles() != c.addFiles || a.MayDraft() != c.draft || a.MayReadMail() != c.reads {
			t.Errorf("%s: add files %v, draft %v, read mail %v; want %v, %v, %v", c.scope,
				a.MayAddFiles(), a.MayDraft(), a.MayReadMail(), c.addFiles, c.draft, c.reads)
		}
	}
	// A ticket's account knows its user's id, and nothing it could be
	// allowed.
	a := door.OpenID("u2")
	if a.ID() != "u2" || a.Email() != "" || a.MayAddFiles() || a.MayDraft() || a.MayReadMail() {
		t.Errorf("OpenID: %q %q %v %v %v", a.ID(), a.Email(), a.MayAddFiles(), a.MayDraft(), a.MayReadMail())
	}
}

// The send-as addresses are read with users.settings.sendAs.list, whose
// scopes (the discovery document's) are not the send or drafts scopes.
func TestMayReadSendAs(t *testing.T) {
	door := account.NewDoor(nil, account.Options{})
	for scope, want := range map[string]bool{
		"https://www.googleapis.com/auth/gmail.send":           false,
		"https://www.googleapis.com/auth/gmail.compose":        false,
		"https://www.googleapis.com/auth/gmail.metadata":       false,
		"https://www.googleapis.com/auth/gmail.readonly":       true,
		"https://www.googleapis.com/auth/gmail.settings.basic": true,
		"https://www.googleapis.com/auth/gmail.modify":         true,
		"https://mail.google.com/":                             true,
	} {
		if got := door.Open(identity.User{ID: "u1", GoogleScopes: []string{"openid", scope}}).MayReadSendAs(); got != want {
			t.Errorf("%s: MayReadSendAs = %v, want %v", scope, got, want)
		}
	}
}

// TestMayShareFollowsTheDriveScope: drivemail may change sharing with
// the drive scope on any file, with drive.file only on its own or picked
// files, and never with drive.readonly alone (permissions.create takes
// drive or drive.file).
func TestMayShareFollowsTheDriveScope(t *testing.T) {
	const (
		file     = "https://www.googleapis.com/auth/drive.file"
		allDrive = "https://www.googleapis.com/auth/drive"
		driveRO  = "https://www.googleapis.com/auth/drive.readonly"
	)
	cases := []struct {
		scopes           []string
		appFile, another bool // may share an app file, another file
	}{
		{[]string{driveRO}, false, false},
		{[]string{driveRO, file}, true, false},
		{[]string{file}, true, false},
		{[]string{allDrive}, true, true},
		{nil, false, false},
	}
	door := account.NewDoor(nil, account.Options{})
	for _, c := range cases {
		a := door.Open(identity.User{ID: "u1", GoogleScopes: c.scopes})
		if a.MayShare(true) != c.appFile || a.MayShare(false) != c.another {
			t.Errorf("%v: may share an app file %v, another %v; want %v, %v", c.scopes, a.MayShare(true), a.MayShare(false), c.appFile, c.another)
		}
	}
}
