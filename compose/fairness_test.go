package compose_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/mimemsg"
)

// third is a third user, beside user and other.
const third = "cat@example.com"

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

// TestAQuietUserGoesBeforeABusyUsersQueue: with room for one send, the
// next room goes to a user who has had none, not to the busy user's send
// that asked first.
func TestAQuietUserGoesBeforeABusyUsersQueue(t *testing.T) {
	e := newEnv(t, compose.Config{SendMemory: 1, SendQueueTimeout: time.Minute}) // each send takes the whole budget
	annHC, ann := gated(e, user)
	bobHC, bob := gated(e, other)
	a1 := sendAs(e, annHC, "ann", user)
	<-ann.entered // ann's first holds the budget at Gmail
	a2 := sendAs(e, annHC, "ann", user)
	waitFor(t, func() bool { return e.svc.SendsOf("ann") == 2 })
	b := sendAs(e, bobHC, "bob", other)
	waitFor(t, func() bool { return e.svc.SendsOf("bob") == 1 })

	ann.open <- struct{}{} // ann's first goes on, and its room comes free
	if got := <-a1; got.err != nil {
		t.Fatalf("ann's first send: %v", got.err)
	}
	select {
	case <-bob.entered:
	case <-ann.entered:
		t.Fatal("ann's second send went before bob's, which asked after it but had nothing sending")
	case <-time.After(20 * time.Second):
		t.Fatal("neither send went on")
	}
	close(bob.open)
	close(ann.open)
	for who, ch := range map[string]<-chan sendOutcome{"bob": b, "ann's second": a2} {
		if got := <-ch; got.err != nil {
			t.Errorf("%s: %v", who, got.err)
		}
	}
}

// TestSmallSendsShareTheBudget: a send reserves what it holds, so a
// budget of two small messages' buffers lets exactly two stream at once,
// and a third, one past it, is refused in time with nothing sent.
func TestSmallSendsShareTheBudget(t *testing.T) { synctest.Test(t, testSmallSendsShareTheBudget) }

func testSmallSendsShareTheBudget(t *testing.T) {
	small := int64(googleapi.MinUploadChunkSize + mimemsg.StreamBuffers) // a body-only message: one upload unit, the writer's buffers
	e := newBubbleEnv(t, compose.Config{SendMemory: 2 * small, SendQueueTimeout: 200 * time.Millisecond})
	annHC, ann := gated(e, user)
	bobHC, bob := gated(e, other)
	a := sendAs(e, annHC, "ann", user)
	b := sendAs(e, bobHC, "bob", other)
	enters(t, ann, "ann's send")
	enters(t, bob, "bob's send, beside ann's") // the budget exactly
	got := <-sendAs(e, e.Client(third, emutest.ScopeDriveReadonly, emutest.ScopeGmailSend), "cat", third)
	if refusal.KindOf(got.err) != "server_busy" || !strings.Contains(got.err.Error(), "Nothing was sent") {
		t.Fatalf("a third small send past the budget: %v", got.err)
	}
	close(ann.open)
	close(bob.open)
	for _, ch := range []<-chan sendOutcome{a, b} {
		if got := <-ch; got.err != nil {
			t.Errorf("%v", got.err)
		}
	}
	if n := e.Emu.Stats().MessagesSent; n != 2 {
		t.Errorf("%d messages sent, want 2", n)
	}
}

// enters waits for a request at g, failing the test after 20 s.
func enters(t *testing.T, g *gmailGate, what string) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not reach Gmail", what)
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
