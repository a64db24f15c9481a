package emulator_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"golang.org/x/oauth2"
	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/demoseed"
)

// demoEmulator is an emulator with the embedded demo seed.
func demoEmulator(t *testing.T) *emulator.Emulator {
	t.Helper()
	emu, err := emulator.New(emulator.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	if err := emu.SeedFS(demoseed.FS()); err != nil {
		t.Fatal(err)
	}
	return emu
}

// TestDemoSeedHasMailToRead holds the demo's inbox to what the README's
// tour uses: mail from other senders, with attachments, and one thread;
// and its sent mail to what the README promises, none.
func TestDemoSeedHasMailToRead(t *testing.T) {
	emu := demoEmulator(t)
	if sent := emu.Gmail().Messages(""); len(sent) != 0 {
		t.Errorf("the demo starts with %d messages on the sent-mail page, want none: %+v", len(sent), sent)
	}
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	tok := emu.AccessToken(emulator.DemoUser, "https://www.googleapis.com/auth/gmail.readonly")
	hc := oauth2.NewClient(context.Background(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok}))
	svc, err := gm.NewService(context.Background(), option.WithHTTPClient(hc), option.WithEndpoint(srv.URL+"/"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := svc.Users.Messages.List("me").Q("in:inbox").Do()
	if err != nil {
		t.Fatal(err)
	}
	threads := map[string]int{}
	for _, m := range list.Messages {
		threads[m.ThreadId]++
	}
	withFiles, err := svc.Users.Messages.List("me").Q("has:attachment newer_than:1d").Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Messages) < 4 || len(threads) != len(list.Messages)-1 || len(withFiles.Messages) < 3 {
		t.Errorf("demo inbox: %d messages in %d threads, %d with attachments; want at least 4, one thread of two, 3 with attachments",
			len(list.Messages), len(threads), len(withFiles.Messages))
	}
}

// TestDemoSeedHasSendAsAliases: the demo user sends as their own address
// (with a signature), a verified alias, and has one alias still pending.
func TestDemoSeedHasSendAsAliases(t *testing.T) {
	emu := demoEmulator(t)
	list := emu.Gmail().SendAsList(emulator.DemoUser)
	if len(list) != 3 || !list[0].IsPrimary || !list[0].IsDefault || list[0].Signature == "" ||
		list[1].VerificationStatus != "accepted" || list[2].VerificationStatus != "pending" {
		t.Errorf("demo send-as %+v: want the primary with a signature, one accepted alias, one pending", list)
	}
}
