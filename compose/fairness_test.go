package compose_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/internal/refusal"
)

// gmailGate holds the requests that open a user's Gmail uploads until
// the test lets them go, as a slow Gmail would: entered says one arrived.
type gmailGate struct {
	base    http.RoundTripper
	entered chan struct{}
	open    chan struct{}
}

func (g *gmailGate) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/upload/gmail/") {
		g.entered <- struct{}{}
		<-g.open
	}
	return g.base.RoundTrip(r)
}

// gated is email's Google client with its Gmail uploads held.
func gated(e *env, email string) (*http.Client, *gmailGate) {
	hc := e.Client(email, emutest.ScopeDriveReadonly, emutest.ScopeGmailSend)
	g := &gmailGate{base: hc.Transport, entered: make(chan struct{}, 16), open: make(chan struct{})}
	return &http.Client{Transport: g}, g
}

type sendOutcome struct {
	res compose.Result
	err error
}

func sendAs(e *env, hc *http.Client, id, email string) <-chan sendOutcome {
	ctx, acct := context.Background(), e.as(identity.User{ID: id, Email: email}, hc)
	out := make(chan sendOutcome, 1)
	go func() {
		res, err := e.svc.Send(ctx, acct, compose.Request{To: []string{"zoe@example.org"}, Subject: "s", BodyText: "hi"}, compose.Options{})
		out <- sendOutcome{res, err}
	}()
	return out
}

// TestOneUserCannotTakeEverySendSlot: with two slots and one per user,
// ann's two sends stuck at a slow Gmail hold one slot, not both, and
// bob's send goes at once; ann's second goes when her first is done.
func TestOneUserCannotTakeEverySendSlot(t *testing.T) {
	e := newEnv(t, compose.Config{MaxConcurrentSends: 2, MaxSendsPerUser: 1, SendQueueTimeout: time.Minute})
	annHC, ann := gated(e, user)
	a1 := sendAs(e, annHC, "ann", user)
	<-ann.entered // ann's first send is at Gmail, holding its slots
	a2 := sendAs(e, annHC, "ann", user)
	waitFor(t, func() bool { return e.svc.SendsOf("ann") == 2 }) // ann's second is at the slots

	bob := sendAs(e, e.Client(other, emutest.ScopeDriveReadonly, emutest.ScopeGmailSend), "bob", other)
	select {
	case got := <-bob:
		if got.err != nil {
			t.Fatalf("bob's send: %v", got.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("bob's send waited for ann's: one user held every slot")
	}
	close(ann.open)
	for i, ch := range []<-chan sendOutcome{a1, a2} {
		if got := <-ch; got.err != nil {
			t.Errorf("ann's send %d: %v", i+1, got.err)
		}
	}
	if n := e.Emu.Stats().MessagesSent; n != 3 {
		t.Errorf("%d messages sent, want 3", n)
	}
}

// TestABusyUserIsRefusedInTime: a send that finds its user's slots taken
// past the queue timeout is refused with a sentence the model can act on,
// and nothing of it reaches Gmail.
func TestABusyUserIsRefusedInTime(t *testing.T) {
	e := newEnv(t, compose.Config{MaxConcurrentSends: 4, MaxSendsPerUser: 1, SendQueueTimeout: 200 * time.Millisecond})
	annHC, ann := gated(e, user)
	a1 := sendAs(e, annHC, "ann", user)
	<-ann.entered
	start := time.Now()
	got := <-sendAs(e, annHC, "ann", user)
	if !isRefusal(got.err) || got.err.Error() != "Your previous message is still sending; wait for it to finish and try again. Nothing was sent." {
		t.Fatalf("ann's second send: %v", got.err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the refusal came after %v; the queue timeout is 200ms", d)
	}
	close(ann.open)
	if got := <-a1; got.err != nil {
		t.Fatalf("ann's first send: %v", got.err)
	}
	if n, entered := e.Emu.Stats().MessagesSent, len(ann.entered); n != 1 || entered != 0 {
		t.Errorf("%d messages sent and %d more Gmail uploads opened; the refused send must not reach Gmail", n, entered)
	}
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("the condition did not come about within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

func isRefusal(err error) bool {
	_, ok := refusal.As(err)
	return ok
}
