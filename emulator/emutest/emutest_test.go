package emutest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/internal/memnet"
	"github.com/drivemail/drivemail/store/storetest"
)

const user = "ana@example.com"

// message is a whole message, with the Date and Message-ID Gmail would
// otherwise add.
func message(subject string) []byte {
	return []byte("From: " + user + "\r\nTo: zoe@example.org\r\nSubject: " + subject + "\r\n" +
		"Date: Mon, 02 Mar 2026 10:00:00 +0000\r\nMessage-ID: <" + subject + "@example.com>\r\n\r\nhi there\r\n")
}

// aboutUser asks the emulated Drive who hc's token belongs to and returns
// the HTTP status and the email.
func aboutUser(t *testing.T, hc *http.Client, env *emutest.Env) (int, string) {
	t.Helper()
	res, err := hc.Get(env.URL + "/drive/v3/about?fields=user")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var about struct {
		User struct {
			EmailAddress string `json:"emailAddress"`
		} `json:"user"`
	}
	if res.StatusCode == http.StatusOK {
		if err := json.NewDecoder(io.LimitReader(res.Body, 1<<16)).Decode(&about); err != nil {
			t.Fatal(err)
		}
	}
	return res.StatusCode, about.User.EmailAddress
}

func TestStartServesTheEmulatorWithTokens(t *testing.T) {
	env := emutest.Start(t)
	if env.Endpoints.Base != env.URL || !strings.HasPrefix(env.URL, "http://127.0.0.1:") {
		t.Fatalf("URL %q, endpoints %q: want one loopback origin", env.URL, env.Endpoints.Base)
	}
	if code, who := aboutUser(t, env.Client(user, emutest.ScopeDriveReadonly), env); code != 200 || who != user {
		t.Errorf("about with ana's token = %d %q, want 200 %q", code, who, user)
	}
	if code, _ := aboutUser(t, http.DefaultClient, env); code != http.StatusUnauthorized {
		t.Errorf("about without a token = %d, want 401", code)
	}
	if code, _ := aboutUser(t, env.Client(user, emutest.ScopeGmailSend), env); code != http.StatusForbidden {
		t.Errorf("about with a Gmail-only token = %d, want 403", code)
	}
	// Each test has its own emulator: a token of one means nothing to another.
	other := emutest.Start(t)
	if code, _ := aboutUser(t, env.Client(user, emutest.ScopeDriveReadonly), other); code != http.StatusUnauthorized {
		t.Errorf("a token used on another emulator = %d, want 401", code)
	}
}

// Faults apply in the order given, each to its next matching request.
func TestInject(t *testing.T) {
	env := emutest.Start(t)
	hc := env.Client(user, emutest.ScopeDriveReadonly)
	env.Inject(
		emulator.Fault{PathPrefix: "/drive/v3/about", Status: 503},
		emulator.Fault{PathPrefix: "/drive/v3/about", Status: 429, Times: 2},
	)
	var got []int
	for range 4 {
		code, _ := aboutUser(t, hc, env)
		got = append(got, code)
	}
	if fmt.Sprint(got) != "[503 429 429 200]" {
		t.Errorf("statuses = %v, want [503 429 429 200]", got)
	}
}

func TestPutAndContent(t *testing.T) {
	env := emutest.Start(t)
	content := []byte("%PDF-1.7 quarterly numbers")
	f := env.Put("Bob@Example.com", drivesvc.FileSpec{Name: "q3.pdf", Content: content})
	if got := env.Content(f.ID); !bytes.Equal(got, content) {
		t.Errorf("Content = %q, want %q", got, content)
	}
	if files := env.Emu.Drive().Files("bob@example.com"); len(files) == 0 {
		t.Errorf("the file is not in its owner's Drive")
	}
}

// helperFailure runs fn with a testing.TB that records a Fatalf instead
// of failing this test, and returns what it said ("" if fn passed).
func helperFailure(t *testing.T, fn func(tb testing.TB)) string {
	r := &recorder{TB: t}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		fn(r)
	}()
	wg.Wait()
	return r.failed
}

// recorder is the test's own testing.TB but for Fatalf, which it records
// and ends fn's goroutine with, as testing does.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestHelpersFailTheTestOnBadInput(t *testing.T) {
	tests := []struct {
		name string
		call func(env *emutest.Env)
		want string
	}{
		{"owner that is not an address", func(env *emutest.Env) { env.Put("nobody", drivesvc.FileSpec{Name: "x.txt", Content: []byte("x")}) }, `put "x.txt"`},
		{"fault without a failure", func(env *emutest.Env) { env.Inject(emulator.Fault{PathPrefix: "/drive/v3/"}) }, "inject fault on /drive/v3/"},
		{"fault on a relative path", func(env *emutest.Env) { env.Inject(emulator.Fault{PathPrefix: "drive", Status: 503}) }, "inject fault on drive"},
		{"content of an unknown file", func(env *emutest.Env) { env.Content("1NoSuchFile") }, "content of 1NoSuchFile"},
		{"unknown message", func(env *emutest.Env) { env.Message(user, "nosuchmessage") }, "messages.get nosuchmessage"},
		{"unknown draft", func(env *emutest.Env) { env.Draft(user, "nosuchdraft") }, "drafts.get nosuchdraft"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := helperFailure(t, func(tb testing.TB) { tt.call(emutest.Start(tb)) })
			if !strings.Contains(got, tt.want) {
				t.Errorf("failure = %q, want it to mention %q", got, tt.want)
			}
		})
	}
	// Mail is per user: bob cannot read back ana's message or draft.
	for name, read := range map[string]func(env *emutest.Env, msgID, draftID string){
		"message": func(env *emutest.Env, msgID, _ string) { env.Message("bob@example.com", msgID) },
		"draft":   func(env *emutest.Env, _, draftID string) { env.Draft("bob@example.com", draftID) },
	} {
		got := helperFailure(t, func(tb testing.TB) {
			env := emutest.Start(tb)
			msgID, draftID := sendAndDraft(tb, env, user, message("private"))
			read(env, msgID, draftID)
		})
		if !strings.Contains(got, "404") {
			t.Errorf("bob reading ana's %s: failure = %q, want a 404", name, got)
		}
	}
}

// sendAndDraft sends msg as email and saves it as a draft too, through
// the Gmail API, and returns the message and draft ids.
func sendAndDraft(tb testing.TB, env *emutest.Env, email string, msg []byte) (msgID, draftID string) {
	tb.Helper()
	svc, err := gm.NewService(context.Background(),
		append([]option.ClientOption{option.WithHTTPClient(env.Client(email, emutest.ScopeGmailCompose))}, env.Endpoints.GmailOptions()...)...)
	if err != nil {
		tb.Fatalf("gmail client: %v", err)
	}
	raw := base64.URLEncoding.EncodeToString(msg)
	sent, err := svc.Users.Messages.Send("me", &gm.Message{Raw: raw}).Do()
	if err != nil {
		tb.Fatalf("send: %v", err)
	}
	d, err := svc.Users.Drafts.Create("me", &gm.Draft{Message: &gm.Message{Raw: raw}}).Do()
	if err != nil {
		tb.Fatalf("draft: %v", err)
	}
	return sent.Id, d.Id
}

// A message sent and a draft created by a token that may not read mail
// still read back byte for byte.
func TestMessageAndDraftReadBack(t *testing.T) {
	env := emutest.Start(t)
	msg := message("hello")
	msgID, draftID := sendAndDraft(t, env, user, msg)
	if got := env.Message(user, msgID); !bytes.Equal(got, msg) {
		t.Errorf("Message = %q, want %q", got, msg)
	}
	if got := env.Draft(user, draftID); !bytes.Equal(got, msg) {
		t.Errorf("Draft = %q, want %q", got, msg)
	}
}

func TestWithConfig(t *testing.T) {
	c := storetest.NewClock()
	env := emutest.Start(t, emutest.WithConfig(emulator.Config{AccessTTL: time.Minute, Now: c.Now}))
	hc := env.Client(user, emutest.ScopeDriveReadonly)
	if code, _ := aboutUser(t, hc, env); code != 200 {
		t.Fatalf("a fresh token = %d, want 200", code)
	}
	c.Advance(time.Minute + time.Second)
	if code, _ := aboutUser(t, hc, env); code != http.StatusUnauthorized {
		t.Errorf("a token past the configured one-minute lifetime = %d, want 401", code)
	}
}

// TestOnNetworkRunsInABubble: an Env on an in-memory network serves the
// same emulator inside a synctest bubble, and an injected delay of ten
// minutes passes there at once, exactly as long as it was told.
func TestOnNetworkRunsInABubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := emutest.Start(t, emutest.OnNetwork(memnet.New()))
		hc := env.Client(user, emutest.ScopeDriveReadonly)
		env.Inject(emulator.Fault{Method: "GET", PathPrefix: "/drive/v3/about", Delay: 600_000_000_000}) // ten minutes
		start := time.Now()
		if status, email := aboutUser(t, hc, env); status != http.StatusOK || email != user {
			t.Fatalf("about: %d %q, want 200 and %s", status, email, user)
		}
		if d := time.Since(start); d != 10*time.Minute {
			t.Errorf("the delayed answer came after %v on the bubble's clock, want the ten minutes injected", d)
		}
	})
}
