package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/internal/logtest"
)

// wanSpec asks an emulator at origin for the spec of its WAN profile.
func wanSpec(t *testing.T, origin string) string {
	t.Helper()
	res, err := http.Get(origin + "/_emulator/wan")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var p struct{ Spec string }
	if err := json.NewDecoder(res.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	return p.Spec
}

func TestEmulatorWAN(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{name: "default", want: "loopback"},
		{name: "flag", args: []string{"--wan", "google,gmail.up=8MiB/s"}, want: "google,gmail.up=8MiB/s"},
		{name: "environment", env: map[string]string{"DRIVEMAIL_EMULATOR_WAN": "google"}, want: "google"},
		{name: "flag wins", args: []string{"--wan", "loopback,oauth.latency=5ms"}, env: map[string]string{"DRIVEMAIL_EMULATOR_WAN": "google"}, want: "loopback,oauth.latency=5ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pr, pw := io.Pipe()
			done := make(chan error, 1)
			go func() {
				err := run(ctx, append([]string{"emulator", "--addr", "127.0.0.1:0"}, tc.args...), env(tc.env), pw, &logtest.Buffer{})
				pw.Close()
				done <- err
			}()
			var origin string
			sc := bufio.NewScanner(pr)
			for origin == "" && sc.Scan() {
				origin, _ = strings.CutPrefix(sc.Text(), "listening on ")
			}
			go io.Copy(io.Discard, pr)
			if origin == "" {
				t.Fatalf("the emulator did not start: %v", <-done)
			}
			if got := wanSpec(t, origin); got != tc.want {
				t.Errorf("GET /_emulator/wan: spec %q, want %q", got, tc.want)
			}
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the emulator did not stop")
			}
		})
	}
}

func TestEmulatorRefusesABadWAN(t *testing.T) {
	err := run(context.Background(), []string{"emulator", "--addr", "127.0.0.1:0", "--wan", "google,drive.latency=2m"}, env(nil), io.Discard, io.Discard)
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--wan: drive.latency=2m") {
		t.Errorf("err = %v; want a usage error naming the override", err)
	}
}

func TestServeDemoWAN(t *testing.T) {
	d := startDemo(t, "--demo-wan", "google,drive.ttfb=1s")
	if d.emulator == "" {
		t.Fatalf("no emulator line; stderr:\n%s", d.stderr.String())
	}
	if got := wanSpec(t, d.emulator); got != "google,drive.ttfb=1s" {
		t.Errorf("the demo's emulator runs %q; want google,drive.ttfb=1s", got)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
}
