package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/compose"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestRunCommands(t *testing.T) {
	cases := []struct {
		name       string
		args       []string
		wantErr    error // nil: success
		exit       int
		stdout     string
		stderr     string
		errContain string
	}{
		{name: "no command", args: nil, wantErr: errUsage, exit: 2, stderr: "Usage:", errContain: "no command given"},
		{name: "unknown command", args: []string{"mail"}, wantErr: errUsage, exit: 2, stderr: "Usage:", errContain: `unknown command "mail"`},
		{name: "version", args: []string{"version"}, stdout: "drivemail dev\n"},
		{name: "--version", args: []string{"--version"}, stdout: "drivemail dev\n"},
		{name: "help", args: []string{"help"}, stdout: "drivemail serve"},
		{name: "--help", args: []string{"--help"}, stdout: "drivemail emulator"},
		{name: "serve --help", args: []string{"serve", "--help"}, wantErr: flag.ErrHelp, exit: 1, stderr: "[DRIVEMAIL_BASE_URL]"},
		{name: "serve bad flag", args: []string{"serve", "--nope"}, wantErr: errUsage, exit: 2, errContain: "flag provided but not defined: -nope"},
		{name: "serve stray argument", args: []string{"serve", "--demo", "now"}, wantErr: errUsage, exit: 2, errContain: `unexpected argument "now"`},
		{name: "serve bad duration", args: []string{"serve", "--shutdown-grace", "soon"}, wantErr: errUsage, exit: 2, errContain: "invalid value"},
		{name: "emulator --help", args: []string{"emulator", "--help"}, wantErr: flag.ErrHelp, exit: 1, stderr: "-seed string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), c.args, env(nil), &stdout, &stderr)
			switch {
			case c.wantErr == nil && err != nil:
				t.Fatalf("err = %v", err)
			case c.wantErr != nil && !errors.Is(err, c.wantErr):
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			}
			if c.wantErr != nil && exitCode(err) != c.exit {
				t.Errorf("exit code %d, want %d", exitCode(err), c.exit)
			}
			if c.errContain != "" && !strings.Contains(err.Error(), c.errContain) {
				t.Errorf("err %q lacks %q", err, c.errContain)
			}
			if !strings.Contains(stdout.String(), c.stdout) {
				t.Errorf("stdout %q lacks %q", stdout.String(), c.stdout)
			}
			if !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), c.stderr)
			}
		})
	}
}

func TestServeConfigFlagsAndEnvironment(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	old := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 40))
	e := env(map[string]string{
		"DRIVEMAIL_ADDR":                 "0.0.0.0:9000",
		"DRIVEMAIL_BASE_URL":             "https://env.example.com",
		"DRIVEMAIL_STORE":                "postgres://db/dm",
		"DRIVEMAIL_SECRET":               key + "," + old,
		"GOOGLE_CLIENT_ID":               "cid",
		"GOOGLE_CLIENT_SECRET":           "csecret",
		"DRIVEMAIL_GOOGLE_ENDPOINT":      "http://127.0.0.1:9090",
		"DRIVEMAIL_DRAFTS":               "true",
		"DRIVEMAIL_MAX_UPLOAD_BYTES":     "1000",
		"DRIVEMAIL_MAX_CONCURRENT_SENDS": "3",
		"DRIVEMAIL_MAX_SENDS_PER_USER":   "2",
		"DRIVEMAIL_SEND_QUEUE_TIMEOUT":   "5s",
		"DRIVEMAIL_SHUTDOWN_GRACE":       "45s",
		"DRIVEMAIL_LOG_LEVEL":            "debug",
		"DRIVEMAIL_TRUSTED_PROXIES":      "10.0.0.0/8",
		"DRIVEMAIL_DRIVE_IDLE_TIMEOUT":   "30s",
		"DRIVEMAIL_GMAIL_CHUNK_TIMEOUT":  "90s",
		"DRIVEMAIL_REFRESH_GRACE":        "0",
		"DRIVEMAIL_METRICS_ADDR":         "10.0.0.5:9464",
		"DRIVEMAIL_CLIENT_FILE_HOSTS":    "files.example.com",
		"DRIVEMAIL_FILE_TRANSFER":        "true",
		"DRIVEMAIL_CONFIRM_SENDS":        "always",
	})
	cfg, err := serveConfig([]string{"--base-url", "https://flag.example.com", "--max-concurrent-sends", "5", "--max-sends-per-user", "4"}, e, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BaseURL != "https://flag.example.com" || cfg.MaxConcurrentSends != 5 || cfg.MaxSendsPerUser != 4 || cfg.SendQueueTimeout != 5*time.Second {
		t.Errorf("a flag must win over the environment: %+v", cfg)
	}
	if cfg.Addr != "0.0.0.0:9000" || cfg.Store != "postgres://db/dm" || cfg.GoogleClientID != "cid" ||
		cfg.GoogleClientSecret != "csecret" || cfg.GoogleEndpoint != "http://127.0.0.1:9090" || !cfg.Drafts ||
		cfg.MaxUploadBytes != 1000 || cfg.ShutdownGrace != 45*time.Second || cfg.LogLevel != "debug" ||
		cfg.TrustedProxies != "10.0.0.0/8" || cfg.DriveIdleTimeout != 30*time.Second || cfg.GmailChunkTimeout != 90*time.Second ||
		cfg.RefreshGrace != 0 || cfg.ClientFileHosts != "files.example.com" || !cfg.FileTransfer ||
		cfg.MetricsAddr != "10.0.0.5:9464" || cfg.ConfirmSends != "always" {
		t.Errorf("environment not read: %+v", cfg)
	}
	if len(cfg.Secrets) != 2 || len(cfg.Secrets[0]) != 32 || len(cfg.Secrets[1]) != 40 {
		t.Errorf("secrets = %d keys", len(cfg.Secrets))
	}
	if cfg.Version != "dev" {
		t.Errorf("version = %q", cfg.Version)
	}

	def, err := serveConfig(nil, env(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if def.Addr != "127.0.0.1:8080" || def.Store != "sqlite:drivemail.db" || def.MaxConcurrentSends != compose.DefaultMaxConcurrentSends || def.SendMemory != compose.DefaultSendMemory ||
		def.MaxSendsPerUser != 3 || def.SendQueueTimeout != 30*time.Second ||
		def.ShutdownGrace != 2*time.Minute || def.LogLevel != "info" || def.Demo || def.Drafts || def.Secrets != nil ||
		def.TrustedProxies != "" || def.DriveIdleTimeout != time.Minute || def.GmailChunkTimeout != 2*time.Minute ||
		def.RefreshGrace != 2*time.Minute || def.ClientFileHosts != "*.oaiusercontent.com,chatgpt.com" || def.FileTransfer ||
		def.MetricsAddr != "127.0.0.1:9464" || def.ConfirmSends != "auto" {
		t.Errorf("defaults = %+v", def)
	}
	if flagged, err := serveConfig([]string{"--refresh-grace", "90s"}, env(nil), &bytes.Buffer{}); err != nil || flagged.RefreshGrace != 90*time.Second {
		t.Errorf("--refresh-grace 90s: %v, %v", flagged.RefreshGrace, err)
	}
}

// TestServeDemoDefaults: a demo told nothing keeps a store of its own
// ("" here) and logs warnings only; a store or level given as a flag or
// in the environment is kept.
func TestServeDemoDefaults(t *testing.T) {
	for _, c := range []struct {
		args         []string
		env          map[string]string
		store, level string
	}{
		{[]string{"--demo"}, nil, "", "warn"},
		{[]string{"--demo", "--store", "sqlite:kept.db", "--log-level", "debug"}, nil, "sqlite:kept.db", "debug"},
		{[]string{"--demo"}, map[string]string{"DRIVEMAIL_STORE": "sqlite:env.db", "DRIVEMAIL_LOG_LEVEL": "info"}, "sqlite:env.db", "info"},
		{nil, nil, "sqlite:drivemail.db", "info"},
	} {
		cfg, err := serveConfig(c.args, env(c.env), &bytes.Buffer{})
		if err != nil || cfg.Store != c.store || cfg.LogLevel != c.level {
			t.Errorf("%v %v: store %q, log level %q, %v; want %q, %q", c.args, c.env, cfg.Store, cfg.LogLevel, err, c.store, c.level)
		}
	}
}

// The upload slots: 16 in all and 4 per user unless told, from the
// environment or a flag, the flag winning.
func TestServeUploadSlots(t *testing.T) {
	for _, c := range []struct {
		args           []string
		env            map[string]string
		total, perUser int
	}{
		{nil, nil, 16, 4},
		{nil, map[string]string{"DRIVEMAIL_MAX_CONCURRENT_UPLOADS": "6", "DRIVEMAIL_MAX_UPLOADS_PER_USER": "5"}, 6, 5},
		{[]string{"--max-concurrent-uploads", "32", "--max-uploads-per-user", "1"}, nil, 32, 1},
		{[]string{"--max-uploads-per-user", "2"}, map[string]string{"DRIVEMAIL_MAX_UPLOADS_PER_USER": "3"}, 16, 2},
	} {
		cfg, err := serveConfig(c.args, env(c.env), &bytes.Buffer{})
		if err != nil || cfg.MaxConcurrentUploads != c.total || cfg.MaxUploadsPerUser != c.perUser {
			t.Errorf("%v %v: %d in all, %d per user (%v); want %d, %d", c.args, c.env, cfg.MaxConcurrentUploads, cfg.MaxUploadsPerUser, err, c.total, c.perUser)
		}
	}
}

// One user's MCP requests in flight: 16 unless told, from the
// environment or a flag, the flag winning.
func TestServeMCPRequestsPerUser(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want int
	}{
		{nil, nil, 16},
		{nil, map[string]string{"DRIVEMAIL_MAX_MCP_REQUESTS_PER_USER": "40"}, 40},
		{[]string{"--max-mcp-requests-per-user", "1"}, map[string]string{"DRIVEMAIL_MAX_MCP_REQUESTS_PER_USER": "40"}, 1},
	} {
		cfg, err := serveConfig(c.args, env(c.env), &bytes.Buffer{})
		if err != nil || cfg.MaxMCPRequestsPerUser != c.want {
			t.Errorf("%v %v: %d (%v), want %d", c.args, c.env, cfg.MaxMCPRequestsPerUser, err, c.want)
		}
	}
}

// TestServeSlotDefaultsFollowTheTotal: a per-user cap left to its
// default is at most the total, so lowering the total alone starts; one
// given (flag or environment) is kept, for server.Config to judge.
func TestServeSlotDefaultsFollowTheTotal(t *testing.T) {
	for _, c := range []struct {
		args                  []string
		env                   map[string]string
		sendsUser, uploadUser int
	}{
		{nil, nil, 3, 4},
		{[]string{"--max-concurrent-sends", "2", "--max-concurrent-uploads", "1"}, nil, 2, 1},
		{nil, map[string]string{"DRIVEMAIL_MAX_CONCURRENT_SENDS": "1", "DRIVEMAIL_MAX_CONCURRENT_UPLOADS": "3"}, 1, 3},
		{[]string{"--max-concurrent-sends", "2", "--max-sends-per-user", "3"}, nil, 3, 4},
		{[]string{"--max-concurrent-uploads", "2"}, map[string]string{"DRIVEMAIL_MAX_UPLOADS_PER_USER": "4"}, 3, 4},
	} {
		cfg, err := serveConfig(c.args, env(c.env), &bytes.Buffer{})
		if err != nil || cfg.MaxSendsPerUser != c.sendsUser || cfg.MaxUploadsPerUser != c.uploadUser {
			t.Errorf("%v %v: %d sends and %d uploads per user (%v); want %d, %d", c.args, c.env, cfg.MaxSendsPerUser, cfg.MaxUploadsPerUser, err, c.sendsUser, c.uploadUser)
		}
	}
}

// TestServeSendMemory: --send-memory (DRIVEMAIL_SEND_MEMORY) takes bytes
// or KiB, MiB, GiB; left unset it is compose's default, unless a count
// of sends is given, which then keeps the memory it bounded before there
// was a budget: that many of the largest sends.
func TestServeSendMemory(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want int64
	}{
		{nil, nil, compose.DefaultSendMemory},
		{[]string{"--send-memory", "256MiB"}, nil, 256 << 20},
		{nil, map[string]string{"DRIVEMAIL_SEND_MEMORY": "300000000"}, 300000000},
		{[]string{"--max-concurrent-sends", "16"}, nil, 16 * compose.MaxSendMemory},
		{nil, map[string]string{"DRIVEMAIL_MAX_CONCURRENT_SENDS": "1"}, compose.MaxSendMemory},
		{[]string{"--max-concurrent-sends", "16", "--send-memory", "64MiB"}, nil, 64 << 20},
		{[]string{"--max-concurrent-sends", "16"}, map[string]string{"DRIVEMAIL_SEND_MEMORY": "1GiB"}, 1 << 30},
	} {
		cfg, err := serveConfig(c.args, env(c.env), &bytes.Buffer{})
		if err != nil || cfg.SendMemory != c.want {
			t.Errorf("%v %v: --send-memory %d (%v), want %d", c.args, c.env, cfg.SendMemory, err, c.want)
		}
	}
}

// --read-mail (DRIVEMAIL_READ_MAIL) is off unless asked for: it adds a
// restricted Google scope to every sign-in.
func TestServeReadMail(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want bool
	}{
		{nil, nil, false},
		{[]string{"--read-mail"}, nil, true},
		{nil, map[string]string{"DRIVEMAIL_READ_MAIL": "true"}, true},
		{[]string{"--read-mail=false"}, map[string]string{"DRIVEMAIL_READ_MAIL": "1"}, false},
	} {
		cfg, err := serveConfig(c.args, env(c.env), &bytes.Buffer{})
		if err != nil || cfg.ReadMail != c.want {
			t.Errorf("%v %v: ReadMail %v (%v), want %v", c.args, c.env, cfg.ReadMail, err, c.want)
		}
	}
	if _, err := serveConfig(nil, env(map[string]string{"DRIVEMAIL_READ_MAIL": "maybe"}), &bytes.Buffer{}); err == nil {
		t.Error("DRIVEMAIL_READ_MAIL=maybe was read")
	}
}

// --demo-public (DRIVEMAIL_DEMO_PUBLIC) is off unless asked for: without
// it a demo listens on loopback only.
func TestServeDemoPublic(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want bool
	}{
		{[]string{"--demo"}, nil, false},
		{[]string{"--demo", "--demo-public"}, nil, true},
		{[]string{"--demo"}, map[string]string{"DRIVEMAIL_DEMO_PUBLIC": "true"}, true},
		{[]string{"--demo", "--demo-public=false"}, map[string]string{"DRIVEMAIL_DEMO_PUBLIC": "1"}, false},
	} {
		cfg, err := serveConfig(c.args, env(c.env), &bytes.Buffer{})
		if err != nil || cfg.DemoPublic != c.want {
			t.Errorf("%v %v: DemoPublic %v (%v), want %v", c.args, c.env, cfg.DemoPublic, err, c.want)
		}
	}
	if _, err := serveConfig(nil, env(map[string]string{"DRIVEMAIL_DEMO_PUBLIC": "maybe"}), &bytes.Buffer{}); err == nil {
		t.Error("DRIVEMAIL_DEMO_PUBLIC=maybe was read")
	}
}

// --metrics-addr: loopback by default, off to serve none; a demo serves
// none unless given an address, by flag or environment.
func TestServeMetricsAddr(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, nil, "127.0.0.1:9464"},
		{[]string{"--metrics-addr", "off"}, nil, ""},
		{[]string{"--metrics-addr="}, nil, ""},
		{nil, map[string]string{"DRIVEMAIL_METRICS_ADDR": "OFF"}, ""},
		{[]string{"--metrics-addr", ":9464"}, map[string]string{"DRIVEMAIL_METRICS_ADDR": "off"}, ":9464"},
		{[]string{"--demo"}, nil, ""},
		{[]string{"--demo", "--metrics-addr", "127.0.0.1:0"}, nil, "127.0.0.1:0"},
		{[]string{"--demo"}, map[string]string{"DRIVEMAIL_METRICS_ADDR": "127.0.0.1:21464"}, "127.0.0.1:21464"},
	} {
		cfg, err := serveConfig(c.args, env(c.env), &bytes.Buffer{})
		if err != nil || cfg.MetricsAddr != c.want {
			t.Errorf("%v %v: MetricsAddr %q (%v), want %q", c.args, c.env, cfg.MetricsAddr, err, c.want)
		}
	}
}

func TestServeConfigRefuses(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, map[string]string{"DRIVEMAIL_DRAFTS": "maybe"}, `DRIVEMAIL_DRAFTS="maybe" is not a boolean`},
		{nil, map[string]string{"DRIVEMAIL_SHUTDOWN_GRACE": "2"}, "is not a duration"},
		{nil, map[string]string{"DRIVEMAIL_REFRESH_GRACE": "1 minute"}, "DRIVEMAIL_REFRESH_GRACE"},
		{nil, map[string]string{"DRIVEMAIL_MAX_UPLOAD_BYTES": "1GB"}, "is not a whole number"},
		{[]string{"--max-sends-per-user", "0"}, nil, "--max-sends-per-user is 0"},
		{nil, map[string]string{"DRIVEMAIL_SEND_QUEUE_TIMEOUT": "0s"}, "--send-queue-timeout is 0s"},
		{[]string{"--send-memory", "0"}, nil, "--send-memory is 0: use at least 17924096 bytes"},
		{[]string{"--send-memory", "lots"}, nil, `invalid value "lots" for flag -send-memory: not a size`},
		{nil, map[string]string{"DRIVEMAIL_SEND_MEMORY": "128MB"}, `DRIVEMAIL_SEND_MEMORY="128MB" is not a size: give whole bytes, or KiB, MiB or GiB`},
		{[]string{"--max-concurrent-uploads", "0"}, nil, "--max-concurrent-uploads is 0: use 1 or more"},
		{nil, map[string]string{"DRIVEMAIL_MAX_UPLOADS_PER_USER": "0"}, "--max-uploads-per-user is 0: use 1 or more"},
		{[]string{"--max-mcp-requests-per-user", "0"}, nil, "--max-mcp-requests-per-user is 0: use 1 or more"},
		{nil, map[string]string{"DRIVEMAIL_MAX_CONCURRENT_UPLOADS": "many"}, `DRIVEMAIL_MAX_CONCURRENT_UPLOADS="many" is not a whole number`},
		{[]string{"--secret", "not base64!"}, nil, "--secret key 1 is not base64"},
		{[]string{"--secret", base64.StdEncoding.EncodeToString(make([]byte, 31))}, nil, "has 31 bytes; it needs at least 32"},
		{[]string{"--secret", base64.StdEncoding.EncodeToString(make([]byte, 32)) + ",short"}, nil, "--secret key 2"},
	}
	for _, c := range cases {
		_, err := serveConfig(c.args, env(c.env), &bytes.Buffer{})
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: err = %v, want a usage error with %q", c.args, c.env, err, c.want)
		}
	}
	// Exactly 32 bytes is enough; URL-safe base64 without padding works too.
	k := base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32))
	if _, err := serveConfig([]string{"--secret", k}, env(nil), &bytes.Buffer{}); err != nil {
		t.Errorf("32-byte URL-safe key refused: %v", err)
	}
}
