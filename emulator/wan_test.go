package emulator_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	gdrive "google.golang.org/api/drive/v3"
	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/emulator/internal/core"
)

// wanCall sends body to /_emulator/wan and decodes the answer.
func wanCall(t *testing.T, env *emutest.Env, method, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, env.URL+"/_emulator/wan", strings.NewReader(body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatalf("%s /_emulator/wan: %v", method, err)
	}
	return res.StatusCode, out
}

func field(m map[string]any, api, name string) any {
	l, _ := m[api].(map[string]any)
	return l[name]
}

func TestWANControl(t *testing.T) {
	env := emutest.Start(t)
	steps := []struct {
		method, body string
		status       int
		check        func(map[string]any) bool
	}{
		{"GET", "", 200, func(m map[string]any) bool { return m["spec"] == "loopback" && field(m, "drive", "latency") == "0s" }},
		{"POST", `{"spec": "google"}`, 200, func(m map[string]any) bool {
			return m["spec"] == "google" && field(m, "drive", "down") == "33MB/s" && field(m, "gmail", "finish") == "500ms"
		}},
		// POST changes the profile in force.
		{"POST", `{"gmail": {"up": "8MiB/s"}}`, 200, func(m map[string]any) bool {
			return m["spec"] == "google,gmail.up=8MiB/s" && field(m, "drive", "latency") == "230ms"
		}},
		{"POST", `{"spec": "drive.ttfb=1s"}`, 200, func(m map[string]any) bool { return m["spec"] == "google,drive.ttfb=1s,gmail.up=8MiB/s" }},
		// PUT replaces it, starting from loopback.
		{"PUT", `{"oauth": {"latency": "70ms"}}`, 200, func(m map[string]any) bool {
			return m["spec"] == "loopback,oauth.latency=70ms" && field(m, "gmail", "up") == "0"
		}},
		{"POST", `{"spec": "mars"}`, 400, func(m map[string]any) bool { return strings.Contains(errorMessage(m), `no profile named "mars"`) }},
		{"POST", `{"drive": {"jitter": "1s"}}`, 400, func(m map[string]any) bool { return strings.Contains(errorMessage(m), "jitter") }},
		{"POST", `{"drive": {"down": "1B/s"}}`, 400, func(m map[string]any) bool { return strings.Contains(errorMessage(m), "drive.down") }},
		{"POST", `{"spec": "google"}` + strings.Repeat(" ", 16<<10-18), 200, func(m map[string]any) bool { return m["spec"] == "google" }},
		{"POST", `{"spec": "loopback"}` + strings.Repeat(" ", 16<<10-19), 400, func(m map[string]any) bool { return strings.Contains(errorMessage(m), "too large") }},
		// A refused change leaves the profile as it was.
		{"GET", "", 200, func(m map[string]any) bool { return m["spec"] == "google" }},
	}
	for i, s := range steps {
		status, m := wanCall(t, env, s.method, s.body)
		if status != s.status || !s.check(m) {
			t.Fatalf("step %d, %s %.40q: %d %v", i, s.method, s.body, status, m)
		}
	}
	if got := env.Emu.WAN().Spec(); got != "google" {
		t.Errorf("Emulator.WAN() = %q after the last change; want google", got)
	}
}

func errorMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

// The real clients, shaped: a 1 MiB download at 4 MiB/s takes at least
// 200 ms (250 ms less one burst), and a 1 MiB message uploaded at 4 MiB/s
// in four 256 KiB chunks at least 150 ms (each chunk is a request of its
// own, and each request's pacer lets its first burst through at once);
// the bytes arrive intact; on loopback the same calls are not held.
func TestWANShapesTheRealClients(t *testing.T) {
	const user = "ann@example.com"
	content := make([]byte, 1<<20)
	_, _ = rand.Read(content)
	message := append([]byte("From: ann@example.com\r\nTo: bob@example.com\r\nSubject: wan\r\n\r\n"), bytes.Repeat([]byte("0123456789abcdef\r\n"), 1<<20/18)...)
	for _, tc := range []struct {
		spec        string
		atLeast     time.Duration // the download
		sendAtLeast time.Duration
	}{
		{"loopback", 0, 0},
		{"drive.down=4MiB/s,gmail.up=4MiB/s", 200 * time.Millisecond, 150 * time.Millisecond},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			wan, err := emulator.ParseWAN(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			env := emutest.Start(t, emutest.WithConfig(emulator.Config{WAN: wan}))
			f := env.Put(user, drivesvc.FileSpec{Name: "one.bin", Content: content})
			hc := env.Client(user, emutest.ScopeDrive, emutest.ScopeGmailSend, emutest.ScopeGmailReadonly)
			ctx := context.Background()
			ds, err := gdrive.NewService(ctx, append([]option.ClientOption{option.WithHTTPClient(hc)}, env.Endpoints.DriveOptions()...)...)
			if err != nil {
				t.Fatal(err)
			}
			gs, err := gm.NewService(ctx, append([]option.ClientOption{option.WithHTTPClient(hc)}, env.Endpoints.GmailOptions()...)...)
			if err != nil {
				t.Fatal(err)
			}

			start := time.Now()
			res, err := ds.Files.Get(f.ID).Download()
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(res.Body)
			res.Body.Close()
			took := time.Since(start)
			if err != nil || !bytes.Equal(got, content) {
				t.Fatalf("downloaded %d bytes (%v); want the file's %d", len(got), err, len(content))
			}
			if took < tc.atLeast || took > tc.atLeast+10*time.Second {
				t.Errorf("download took %v; want at least %v", took, tc.atLeast)
			}

			start = time.Now()
			sent, err := gs.Users.Messages.Send("me", &gm.Message{}).
				Media(bytes.NewReader(message), googleapi.ContentType("message/rfc822"), googleapi.ChunkSize(256<<10)).Do()
			took = time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if took < tc.sendAtLeast || took > tc.sendAtLeast+10*time.Second {
				t.Errorf("send took %v; want at least %v", took, tc.sendAtLeast)
			}
			if stored := env.Message(user, sent.Id); !bytes.Contains(stored, message[len(message)-1000:]) {
				t.Errorf("the stored message lost its end (%d bytes stored of %d sent)", len(stored), len(message))
			}
		})
	}
}

// Faults still apply under a WAN profile: a response cut short fails the
// download rather than hang it, and a request cut short resets.
func TestWANKeepsFaults(t *testing.T) {
	const user = "ann@example.com"
	wan, err := emulator.ParseWAN("all.latency=20ms,all.down=4MiB/s,all.up=4MiB/s")
	if err != nil {
		t.Fatal(err)
	}
	env := emutest.Start(t, emutest.WithConfig(emulator.Config{WAN: wan}))
	f := env.Put(user, drivesvc.FileSpec{Name: "one.bin", Content: make([]byte, 1<<20)})
	cut := int64(100 << 10)
	env.Inject(emulator.Fault{PathPrefix: "/drive/v3/files/" + f.ID, CutResponseAfter: &cut},
		emulator.Fault{PathPrefix: "/upload/gmail/", CutRequestAfter: &cut})
	hc := env.Client(user, emutest.ScopeDrive, emutest.ScopeGmailSend)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ds, err := gdrive.NewService(ctx, append([]option.ClientOption{option.WithHTTPClient(hc)}, env.Endpoints.DriveOptions()...)...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ds.Files.Get(f.ID).Context(ctx).Download()
	if err == nil {
		var n int64
		n, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if err == nil {
			t.Errorf("a download cut after %d bytes read %d bytes without an error", cut, n)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the cut download hung")
	}
	gs, err := gm.NewService(ctx, append([]option.ClientOption{option.WithHTTPClient(hc)}, env.Endpoints.GmailOptions()...)...)
	if err != nil {
		t.Fatal(err)
	}
	msg := append([]byte("To: bob@example.com\r\nSubject: cut\r\n\r\n"), make([]byte, 1<<20)...)
	_, err = gs.Users.Messages.Send("me", &gm.Message{}).Context(ctx).
		Media(bytes.NewReader(msg), googleapi.ContentType("message/rfc822")).Do()
	if err == nil || ctx.Err() != nil {
		t.Errorf("an upload cut after %d bytes: err %v, context %v; want a reset, at once", cut, err, ctx.Err())
	}
}

// An injected delay and the WAN's latency add up: the fault delays the
// handler, the profile the answer it gives.
func TestWANLatencyAddsToAFaultDelay(t *testing.T) {
	wan, err := emulator.ParseWAN("drive.latency=300ms")
	if err != nil {
		t.Fatal(err)
	}
	env := emutest.Start(t, emutest.WithConfig(emulator.Config{WAN: wan}))
	env.Inject(emulator.Fault{PathPrefix: "/drive/v3/about", Delay: core.Duration(300 * time.Millisecond)})
	hc := env.Client("ann@example.com", emutest.ScopeDrive)
	start := time.Now()
	res, err := hc.Get(env.URL + "/drive/v3/about?fields=user")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if took := time.Since(start); took < 600*time.Millisecond || res.StatusCode != http.StatusOK {
		t.Errorf("HTTP %d after %v; want 200 after at least 300 ms of fault and 300 ms of latency", res.StatusCode, took)
	}
}
