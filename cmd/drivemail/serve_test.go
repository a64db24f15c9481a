package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeDemo runs the whole program as a user would: `drivemail serve
// --demo`, then the lines it prints, then a request with DEMO_TOKEN, then a
// clean stop.
func TestServeDemo(t *testing.T) {
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed", "demo@example.com")
	if err := os.MkdirAll(seed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(seed, "notes.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"serve", "--demo", "--addr", "127.0.0.1:0", "--shutdown-grace", "2s"},
			env(map[string]string{"DRIVEMAIL_STORE": "sqlite:" + filepath.Join(dir, "db"), "DRIVEMAIL_DEMO_SEED": filepath.Join(dir, "seed")}),
			pw, &stderr)
		pw.Close()
		done <- err
	}()
	var token, base string
	sc := bufio.NewScanner(pr)
	for base == "" && sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "DEMO_TOKEN="); ok {
			token = v
		}
		if v, ok := strings.CutPrefix(line, "listening on "); ok {
			base = v
		}
	}
	go io.Copy(io.Discard, pr)
	if token == "" || !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("printed DEMO_TOKEN %q, base %q; stderr:\n%s", token, base, stderr.String())
	}

	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz: %d", resp.StatusCode)
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
	if strings.Contains(stderr.String(), token) {
		t.Error("the demo token appears in the log")
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after its context ended")
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
		{[]string{"--demo", "--demo-seed", filepath.Join(t.TempDir(), "missing")}, "--demo needs the sample files"},
		{[]string{"--store", store, "--secret", key, "--google-client-id", "i", "--google-client-secret", "s", "--log-level", "loud"}, "--log-level"},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"serve", "--addr", "127.0.0.1:0"}, c.args...), env(nil), &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
		if strings.Contains(stdout.String(), "listening on") {
			t.Errorf("%v: printed a listening line although it refused to start", c.args)
		}
	}
}
