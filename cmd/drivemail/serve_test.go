package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/internal/logtest"
)

// TestServeDemo runs the whole program as a user would: `drivemail serve
// --demo`, then the lines it prints, then a request with DEMO_TOKEN, then a
// clean stop.
func TestServeDemo(t *testing.T) {
	d := startDemo(t)
	base, token := d.base, d.token
	if token == "" || !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("printed DEMO_TOKEN %q, base %q; stderr:\n%s", token, base, d.stderr.String())
	}

	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz: %d", resp.StatusCode)
	}
	for _, path := range []string{"/.well-known/openid-configuration", "/.well-known/oauth-authorization-server",
		"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp", "/mcp/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, c := range []struct {
		auth   string
		status int
	}{{"", 401}, {"Bearer nope", 401}, {"Bearer " + token, 200}} {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("POST /mcp with %q: %d, want %d", c.auth, resp.StatusCode, c.status)
		}
		if c.status == 401 && !strings.Contains(resp.Header.Get("WWW-Authenticate"), base+"/.well-known/oauth-protected-resource/mcp") {
			t.Errorf("401 without resource_metadata: %q", resp.Header.Get("WWW-Authenticate"))
		}
	}
	if strings.Contains(d.stderr.String(), token) {
		t.Error("the demo token appears in the log")
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
}

// TestServeDemoFromAnyFolder: with no seed folder and no repository
// around it, `serve --demo` loads its built-in sample files, and its
// emulator listens where DRIVEMAIL_DEMO_EMULATOR_ADDR says. Given no
// --store and no --log-level, it leaves nothing in the folder it ran from
// or in the temporary folder once stopped, and logs no line per request,
// which would scroll its guide away.
func TestServeDemoFromAnyFolder(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	t.Chdir(dir)
	t.Setenv("TMPDIR", tmp)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	emuAddr := ln.Addr().String()
	ln.Close() // free again for the emulator; a clash would fail the test loudly, not falsely pass
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr logtest.Buffer
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"serve", "--demo", "--addr", "127.0.0.1:0", "--shutdown-grace", "2s"},
			env(map[string]string{"DRIVEMAIL_DEMO_EMULATOR_ADDR": emuAddr}), pw, &stderr)
		pw.CloseWithError(fmt.Errorf("serve --demo ended: %v", err))
		done <- err
	}()
	// The guide ends with the upload line.
	var b strings.Builder
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "/upload") {
			break
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%v; stdout:\n%s\nstderr:\n%s", err, b.String(), stderr.String())
	}
	go io.Copy(io.Discard, pr)
	out := b.String()
	if !strings.Contains(out, "emulator on http://"+emuAddr+" ") {
		t.Errorf("the emulator is not on %s:\n%s", emuAddr, out)
	}
	if !strings.Contains(out, `"Q3 Report.pdf"`) {
		t.Errorf("the guide offers no send of the built-in seed's Q3 Report.pdf:\n%s", out)
	}
	resp, err := http.Get("http://" + emuAddr + "/_emulator/outbox")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("outbox: %d", resp.StatusCode)
	}
	// In the order the README gives, the guide after them.
	if lines := strings.SplitN(out, "\n", 4); len(lines) < 4 || !strings.HasPrefix(lines[0], "DEMO_TOKEN=") ||
		!strings.HasPrefix(lines[1], "emulator on ") || !strings.HasPrefix(lines[2], "listening on ") || !strings.Contains(lines[3], "drivemail demo:") {
		t.Errorf("the demo's first lines are not DEMO_TOKEN, emulator on, listening on, then the guide:\n%s", out)
	}
	base := regexp.MustCompile(`(?m)^listening on (\S+)$`).FindStringSubmatch(out)
	token := regexp.MustCompile(`(?m)^DEMO_TOKEN=(\S+)$`).FindStringSubmatch(out)
	if base == nil || token == nil {
		t.Fatalf("no listening or DEMO_TOKEN line:\n%s", out)
	}
	req, _ := http.NewRequest(http.MethodPost, base[1]+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer "+token[1])
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("tools/list: %d", resp.StatusCode)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the demo wrote %v into the folder it runs from", left)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), "level=INFO") {
		t.Errorf("the demo logged INFO lines by default:\n%s", stderr.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the stopped demo left %v in the temporary folder", left)
	}
}

// demo is a running `drivemail serve --demo`.
type demo struct {
	base, token string
	emulator    string // the in-process emulator's origin
	stderr      *logtest.Buffer
	stop        func() error // ends it, and says whether it stopped cleanly
}

// startDemo runs `drivemail serve --demo` with its sample files and
// extra arguments, and reads the lines it prints until it listens. It
// logs at info, as the tests read the request log.
func startDemo(t *testing.T, args ...string) *demo {
	t.Helper()
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed", "demo@example.com")
	if err := os.MkdirAll(seed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(seed, "notes.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pr, pw := io.Pipe()
	d := &demo{stderr: &logtest.Buffer{}}
	done := make(chan error, 1)
	go func() {
		err := run(ctx, append([]string{"serve", "--demo", "--addr", "127.0.0.1:0", "--shutdown-grace", "2s"}, args...),
			env(map[string]string{"DRIVEMAIL_STORE": "sqlite:" + filepath.Join(dir, "db"), "DRIVEMAIL_DEMO_SEED": filepath.Join(dir, "seed"), "DRIVEMAIL_LOG_LEVEL": "info"}),
			pw, d.stderr)
		pw.Close()
		done <- err
	}()
	sc := bufio.NewScanner(pr)
	for d.base == "" && sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "DEMO_TOKEN="); ok {
			d.token = v
		}
		if v, ok := strings.CutPrefix(line, "listening on "); ok {
			d.base = v
		}
		if v, ok := strings.CutPrefix(line, "emulator on "); ok {
			d.emulator, _, _ = strings.Cut(v, " ")
		}
	}
	go io.Copy(io.Discard, pr)
	d.stop = func() error {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("serve returned %w", err)
			}
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("serve did not stop after its context ended")
		}
	}
	return d
}

// TestServeTrustedProxies: behind a trusted proxy, the per-address limit
// and the request log go by the client the proxy names in X-Forwarded-For,
// so one client's authorization requests do not use up another's. (The
// demo allows 1000 registrations an hour; authorizations stay at 300.)
func TestServeTrustedProxies(t *testing.T) {
	d := startDemo(t, "--trusted-proxies", "127.0.0.1,::1")
	if d.base == "" {
		t.Fatalf("did not start; stderr:\n%s", d.stderr.String())
	}
	authorize := func(client string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, d.base+"/oauth/authorize?client_id=dmc_unknown", nil)
		req.Header.Set("X-Forwarded-For", "192.0.2.1, "+client) // the left one is the client's own claim
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := range 300 {
		if got := authorize("198.51.100.7"); got != http.StatusBadRequest { // counted, then refused: unknown client
			t.Fatalf("authorization request %d: %d, want 400", i+1, got)
		}
	}
	if got := authorize("198.51.100.7"); got != http.StatusTooManyRequests {
		t.Errorf("301st authorization request from one client: %d, want 429", got)
	}
	if got := authorize("198.51.100.8"); got != http.StatusBadRequest {
		t.Errorf("another client behind the same proxy: %d, want 400 (not limited)", got)
	}
	// A developer re-running SDK examples registers often: the demo lets
	// one address register more than a public server's 30 an hour.
	for i := range 31 {
		resp, err := http.Post(d.base+"/register", "application/json", strings.NewReader(`{"redirect_uris":["http://127.0.0.1/cb"]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("demo registration %d (at the root alias): %d, want 201", i+1, resp.StatusCode)
		}
	}
	logs := d.stderr.String()
	if !strings.Contains(logs, "remote=198.51.100.8") || strings.Contains(logs, "remote=192.0.2.1") {
		t.Errorf("the request log should name the client the proxy saw:\n%s", logs)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
}

func TestServeRefusesWhatCannotWork(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	store := "sqlite:" + filepath.Join(t.TempDir(), "db")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--store", store}, "--secret is required"},
		{[]string{"--store", store, "--secret", key}, "--google-client-id and --google-client-secret are required"},
		{[]string{"--store", store, "--secret", key, "--google-client-id", "i", "--google-client-secret", "s", "--base-url", "http://mail.example.com"}, "use https"},
		{[]string{"--store", "mysql://x", "--secret", key, "--google-client-id", "i", "--google-client-secret", "s"}, "want sqlite:PATH"},
		{[]string{"--demo", "--demo-seed", filepath.Join(t.TempDir(), "missing")}, "no such folder"},
		{[]string{"--demo", "--demo-emulator-addr", "127.0.0.1:99999"}, "--demo-emulator-addr"},
		{[]string{"--store", store, "--secret", key, "--google-client-id", "i", "--google-client-secret", "s", "--demo-emulator-addr", "127.0.0.1:0"}, "add --demo"},
		{[]string{"--demo", "--demo-wan", "mars"}, `--demo-wan: no profile named "mars"`},
		// The documented container line, without the flag that says the
		// demo is meant to be reachable from elsewhere.
		{[]string{"--demo", "--addr", "0.0.0.0:0"}, "add --demo-public if that is what you mean"},
		{[]string{"--demo", "--addr", ":0"}, "add --demo-public if that is what you mean"},
		{[]string{"--demo", "--demo-emulator-addr", "0.0.0.0:0"}, "--demo-emulator-addr 0.0.0.0:0 would serve"},
		{[]string{"--store", store, "--secret", key, "--google-client-id", "i", "--google-client-secret", "s", "--demo-public"}, "add --demo, or leave it out"},
		{[]string{"--store", store, "--secret", key, "--google-client-id", "i", "--google-client-secret", "s", "--demo-wan", "google"}, "--demo-wan shapes --demo's emulator only"},
		{[]string{"--store", store, "--secret", key, "--google-client-id", "i", "--google-client-secret", "s", "--log-level", "loud"}, "--log-level"},
		{[]string{"--store", store, "--secret", key, "--google-client-id", "i", "--google-client-secret", "s", "--trusted-proxies", "10.0.0.0/33"}, `--trusted-proxies: "10.0.0.0/33" is not an IP address or CIDR range`},
		// A per-user cap given above the total, given or at its default
		// (64); one left to its default follows a lower total instead
		// (TestServeSlotDefaultsFollowTheTotal).
		{[]string{"--demo", "--max-concurrent-sends", "2", "--max-sends-per-user", "3"}, "--max-sends-per-user is 3, above --max-concurrent-sends (2): use 2 or less"},
		{[]string{"--demo", "--max-sends-per-user", "65"}, "--max-sends-per-user is 65, above --max-concurrent-sends (64)"},
		// One byte below what the largest send holds (TestServeSendMemory
		// starts at the edge).
		{[]string{"--demo", "--send-memory", "17924095"}, "--send-memory is 17924095 bytes: use at least 17924096 bytes (17.1 MiB; 18MiB will do)"},
		{[]string{"--demo", "--max-uploads-per-user", "17"}, "--max-uploads-per-user is 17, above --max-concurrent-uploads (16)"},
		{[]string{"--demo", "--confirm-sends", "sometimes"}, `--confirm-sends "sometimes": want auto`},
		{[]string{"--store", store, "--secret", key, "--google-client-id", "i", "--google-client-secret", "s", "--drive-scope", "file"},
			"--drive-scope file needs --google-api-key and --google-app-id for Google's file picker"},
		{[]string{"--demo", "--drive-scope", "all"}, `--drive-scope "all": use readonly`},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		// A server that starts after all serves until ctx ends: the case
		// fails (no error) rather than hanging the test.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, c.args...), env(nil), &stdout, &stderr)
		cancel()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
		if strings.Contains(stdout.String(), "listening on") {
			t.Errorf("%v: printed a listening line although it refused to start", c.args)
		}
	}
}

// TestServeMetricsListener: with --metrics-addr, /metrics is served there
// and only there; the public listener answers 404 for it.
func TestServeMetricsListener(t *testing.T) {
	d := startDemo(t, "--metrics-addr", "127.0.0.1:0")
	if d.base == "" {
		t.Fatalf("did not start; stderr:\n%s", d.stderr.String())
	}
	m := regexp.MustCompile(`msg="metrics served" url=(http://127\.0\.0\.1:\d+/metrics)`).FindStringSubmatch(d.stderr.String())
	if m == nil {
		t.Fatalf("no metrics URL in the log:\n%s", d.stderr.String())
	}
	for url, want := range map[string]int{m[1]: 200, d.base + "/metrics": 404} {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", url, resp.StatusCode, want)
		}
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
}

// TestServeMaxUploadsPerUser: --max-uploads-per-user reaches /upload.
// With 1, a user's second upload while the first still streams is
// refused at once with 429 and the sentence that says to wait, and stores
// nothing; once the first ends, the next is accepted. (The default, 4,
// would accept the second.)
func TestServeMaxUploadsPerUser(t *testing.T) {
	d := startDemo(t, "--max-uploads-per-user", "1")
	if d.base == "" {
		t.Fatalf("did not start; stderr:\n%s", d.stderr.String())
	}
	upload := func(name string, body io.Reader) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, d.base+"/upload?name="+name, body)
		req.Header.Set("Authorization", "Bearer "+d.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		defer resp.Body.Close()
		var answer struct {
			Error string `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&answer)
		return resp.StatusCode, answer.Error
	}
	started := func() int64 {
		t.Helper()
		resp, err := http.Get(d.emulator + "/_emulator/stats")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var s struct {
			UploadsStarted int64 `json:"uploads_started"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
			t.Fatal(err)
		}
		return s.UploadsStarted
	}

	// The first upload holds its slot: more than one Drive chunk (4 MiB)
	// is written, so Drive's upload session is open, and the rest waits.
	const chunk = 4 << 20
	before := started()
	pr, pw := io.Pipe()
	first := make(chan int, 1)
	go func() {
		status, _ := upload("big.bin", pr)
		first <- status
	}()
	go func() { _, _ = pw.Write(make([]byte, chunk+1)) }()
	for deadline := time.Now().Add(10 * time.Second); started() == before; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the first upload never reached Drive; stderr:\n%s", d.stderr.String())
		}
	}

	status, msg := upload("second.txt", strings.NewReader("x"))
	if want := "Your previous upload is still running; wait for it to finish and try again. Nothing was stored."; status != http.StatusTooManyRequests || msg != want {
		t.Errorf("a second upload while the first streams: %d %q, want 429 %q", status, msg, want)
	}
	pw.Close()
	if status := <-first; status != http.StatusCreated {
		t.Fatalf("the first upload: %d, want 201", status)
	}
	if status, msg := upload("third.txt", strings.NewReader("x")); status != http.StatusCreated {
		t.Errorf("an upload after the first ended: %d %q, want 201", status, msg)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
}
