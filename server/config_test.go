package server

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator"
)

func TestBaseURL(t *testing.T) {
	cases := []struct {
		base, listen, want, err string
	}{
		{"", "127.0.0.1:8080", "http://127.0.0.1:8080", ""},
		{"", "0.0.0.0:8080", "http://localhost:8080", ""},
		{"", "[::]:8080", "http://localhost:8080", ""},
		{"", "[::1]:9000", "http://[::1]:9000", ""},
		{"https://mail.example.com", "0.0.0.0:8080", "https://mail.example.com", ""},
		{"https://mail.example.com/", "0.0.0.0:8080", "https://mail.example.com", ""},
		{"http://localhost:8080", "0.0.0.0:8080", "http://localhost:8080", ""},
		{"http://mail.example.com", "", "", "use https"},
		{"https://mail.example.com/drivemail", "", "", "without a path"},
		{"https://mail.example.com?x=1", "", "", "without a path"},
		{"ftp://mail.example.com", "", "", "want the public origin"},
		{"mail.example.com", "", "", "want the public origin"},
		{"https://user:pw@mail.example.com", "", "", "want the public origin"},
	}
	for _, c := range cases {
		u, err := Config{BaseURL: c.base}.baseURL(c.listen)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err = %v, want %q", c.base, err, c.err)
			}
			continue
		}
		if err != nil || u.String() != c.want {
			t.Errorf("%q on %q: %v %v, want %s", c.base, c.listen, u, err, c.want)
		}
	}
}

func TestConfigCheck(t *testing.T) {
	good := Config{Addr: "127.0.0.1:0", Store: "sqlite:drivemail.db", Secrets: [][]byte{make([]byte, 32)}, GoogleClientID: "id", GoogleClientSecret: "s",
		MaxConcurrentSends: 1, MaxSendsPerUser: 1, MaxUploadBytes: 1, ShutdownGrace: 0, LogLevel: "info"}
	if err := good.check(); err != nil {
		t.Fatalf("good config refused: %v", err)
	}
	edge := good
	edge.DriveIdleTimeout, edge.GmailChunkTimeout, edge.RefreshGrace = time.Second, time.Second, time.Hour
	if err := edge.check(); err != nil {
		t.Fatalf("1s timeouts (the edge) refused: %v", err)
	}
	uploads := good
	uploads.MaxConcurrentUploads, uploads.MaxUploadsPerUser = 1, 1
	if err := uploads.check(); err != nil {
		t.Fatalf("one upload slot, for one user (the edge) refused: %v", err)
	}
	uploads.MaxConcurrentUploads, uploads.MaxUploadsPerUser = 64, 64
	if err := uploads.check(); err != nil {
		t.Fatalf("a per-user upload cap equal to the total refused: %v", err)
	}
	sends := good
	sends.MaxConcurrentSends, sends.MaxSendsPerUser = 8, 8
	if err := sends.check(); err != nil {
		t.Fatalf("a per-user send cap equal to the total refused: %v", err)
	}
	memory := good
	memory.SendMemory = compose.MaxSendMemory // the largest send, alone
	if err := memory.check(); err != nil {
		t.Fatalf("a send budget of the largest send (the edge) refused: %v", err)
	}
	demo := Config{Addr: "127.0.0.1:0", Demo: true, DemoSeed: "seed", DemoEmulatorAddr: "127.0.0.1:0", MaxConcurrentSends: 8, MaxUploadBytes: 1 << 30, ShutdownGrace: time.Minute, LogLevel: "warn"}
	if err := demo.check(); err != nil {
		t.Fatalf("demo config refused: %v", err)
	}
	cases := []struct {
		mutate func(*Config)
		want   string
	}{
		{func(c *Config) { c.Addr = "" }, "--addr is empty"},
		{func(c *Config) { c.Store = "" }, "--store is empty: give sqlite:PATH"},
		{func(c *Config) { c.Secrets = nil }, "openssl rand -base64 32"},
		{func(c *Config) { c.GoogleClientSecret = "" }, "docs/google-cloud-setup.md"},
		{func(c *Config) { c.Demo, c.GoogleEndpoint = true, "http://127.0.0.1:9090" }, "leave out --google-endpoint"},
		{func(c *Config) { c.DemoEmulatorAddr = "127.0.0.1:9090" }, "add --demo, or leave them out"},
		{func(c *Config) { c.DemoSeed = "seed" }, "add --demo, or leave them out"},
		{func(c *Config) { c.MaxConcurrentSends = 0 }, "--max-concurrent-sends is 0"},
		{func(c *Config) { c.SendMemory = compose.MaxSendMemory - 1 }, "--send-memory is 17924095 bytes: use at least 17924096 bytes (17.1 MiB; 18MiB will do)"},
		{func(c *Config) { c.SendMemory = -1 }, "--send-memory is -1 bytes: use at least"},
		{func(c *Config) { c.MaxUploadBytes = 0 }, "--max-upload-bytes is 0"},
		{func(c *Config) { c.MaxConcurrentUploads = -1 }, "--max-concurrent-uploads is -1: use 1 or more"},
		{func(c *Config) { c.MaxUploadsPerUser = -1 }, "--max-uploads-per-user is -1: use 1 or more"},
		{func(c *Config) { c.MaxConcurrentUploads, c.MaxUploadsPerUser = 2, 3 },
			"--max-uploads-per-user is 3, above --max-concurrent-uploads (2): use 2 or less, or raise --max-concurrent-uploads"},
		// Only the total given: the per-user default (4) is above it.
		{func(c *Config) { c.MaxConcurrentUploads = 3 }, "--max-uploads-per-user is 4, above --max-concurrent-uploads (3)"},
		// Only the per-user cap given: the total's default (16) is below it.
		{func(c *Config) { c.MaxUploadsPerUser = 17 }, "--max-uploads-per-user is 17, above --max-concurrent-uploads (16)"},
		{func(c *Config) { c.MaxSendsPerUser = -1 }, "--max-sends-per-user is -1: use 1 or more"},
		{func(c *Config) { c.MaxConcurrentSends, c.MaxSendsPerUser = 2, 3 },
			"--max-sends-per-user is 3, above --max-concurrent-sends (2): use 2 or less, or raise --max-concurrent-sends"},
		// The per-user cap left to compose's default (3), above the total.
		{func(c *Config) { c.MaxConcurrentSends, c.MaxSendsPerUser = 2, 0 }, "--max-sends-per-user is 3, above --max-concurrent-sends (2)"},
		// A total given, the per-user cap above it.
		{func(c *Config) { c.MaxConcurrentSends, c.MaxSendsPerUser = 8, 9 }, "--max-sends-per-user is 9, above --max-concurrent-sends (8)"},
		{func(c *Config) { c.SendQueueTimeout = 999 * time.Millisecond }, "--send-queue-timeout is 999ms: use 1s or more"},
		{func(c *Config) { c.ShutdownGrace = -time.Second }, "--shutdown-grace is -1s"},
		{func(c *Config) { c.LogLevel = "loud" }, `--log-level "loud"`},
		{func(c *Config) { c.DriveIdleTimeout = 999 * time.Millisecond }, "--drive-idle-timeout is 999ms: use 1s or more"},
		{func(c *Config) { c.GmailChunkTimeout = -time.Second }, "--gmail-chunk-timeout is -1s"},
		{func(c *Config) { c.RefreshGrace = -time.Second }, "--refresh-grace is -1s: use 0 (off) up to 1h0m0s"},
		{func(c *Config) { c.RefreshGrace = time.Hour + time.Second }, "--refresh-grace is 1h0m1s"},
		{func(c *Config) { c.ClientFileHosts = "https://files.example.com/x" }, "--client-file-hosts"},
		{func(c *Config) { c.DemoPublic = true }, "--demo-public lets --demo listen beyond loopback: add --demo"},
		{func(c *Config) { c.DriveScope = "full" }, `--drive-scope "full": use readonly`},
		{func(c *Config) { c.DriveScope = DriveFile }, "--drive-scope file needs --google-api-key and --google-app-id"},
		{func(c *Config) { c.DriveScope, c.GoogleAPIKey = DriveFile, "AIzaKey" }, "--drive-scope file needs --google-api-key and --google-app-id"},
		{func(c *Config) { c.DriveScope, c.GoogleAppID = DriveFile, "123456789012" }, "--drive-scope file needs --google-api-key and --google-app-id"},
		{func(c *Config) { c.DriveScope, c.GoogleAPIKey, c.GoogleAppID = DriveFile, "AIzaKey", "drivemail-prod" },
			`--google-app-id "drivemail-prod": give the Cloud project number`},
		{func(c *Config) { c.DriveScope, c.GoogleAPIKey, c.GoogleAppID = DriveFile, "AIza Key", "123" }, "--google-api-key: give the browser API key"},
	}
	// File mode starts with the Picker's key and App ID; a demo fills
	// them in; readonly mode ignores them (GOOGLE_API_KEY serves other
	// Google tools too).
	for _, c := range []Config{
		func() Config {
			c := good
			c.DriveScope, c.GoogleAPIKey, c.GoogleAppID = DriveFile, "AIzaKey", "123456789012"
			return c
		}(),
		func() Config { c := demo; c.DriveScope = DriveFile; return c }(),
		func() Config {
			c := good
			c.DriveScope, c.GoogleAPIKey, c.GoogleAppID = DriveReadonly, "any key", "not a number"
			return c
		}(),
	} {
		if err := c.check(); err != nil {
			t.Errorf("--drive-scope %s refused: %v", c.DriveScope, err)
		}
	}
	// A demo listens on loopback, unless --demo-public says otherwise.
	for _, addr := range []string{"0.0.0.0:8080", ":8080", "[::]:8080", "192.168.1.20:8080", "example.com:8080", "8080"} {
		c := demo
		c.Addr = addr
		if err := c.check(); err == nil || !strings.Contains(err.Error(), "add --demo-public if that is what you mean") {
			t.Errorf("--demo --addr %s: err = %v, want a refusal naming --demo-public", addr, err)
		}
		c.DemoPublic = true
		if err := c.check(); err != nil && addr != "8080" {
			t.Errorf("--demo --demo-public --addr %s refused: %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:8080", "localhost:0", "[::1]:8080", "127.9.9.9:1"} {
		c := demo
		c.Addr = addr
		if err := c.check(); err != nil {
			t.Errorf("--demo --addr %s refused: %v", addr, err)
		}
	}
	exposed := demo
	exposed.DemoEmulatorAddr = "0.0.0.0:9090"
	if err := exposed.check(); err == nil || !strings.Contains(err.Error(), "--demo-emulator-addr 0.0.0.0:9090") {
		t.Errorf("a demo emulator on every interface: err = %v, want it refused", err)
	}
	exposed.DemoPublic = true
	if err := exposed.check(); err != nil {
		t.Errorf("a demo emulator on every interface with --demo-public: %v", err)
	}
	for _, cs := range cases {
		c := good
		cs.mutate(&c)
		if err := c.check(); err == nil || !strings.Contains(err.Error(), cs.want) {
			t.Errorf("err = %v, want %q", err, cs.want)
		}
	}
}

// The demo needs no Google client, secret, drafts flag or Picker project
// from its user, and shows every tool working, create_draft included.
func TestDemoConfigureFillsWhatNoOneSupplies(t *testing.T) {
	emu, err := emulator.New(emulator.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	d := &demoGoogle{url: "http://127.0.0.1:1", emu: emu}
	cfg := d.configure(Config{Demo: true})
	if cfg.GoogleEndpoint != d.url || cfg.GoogleClientID == "" || cfg.GoogleClientSecret == "" {
		t.Errorf("Google client not filled in: %+v", cfg)
	}
	if len(cfg.Secrets) != 1 || len(cfg.Secrets[0]) != 32 {
		t.Errorf("secret not generated: %d keys", len(cfg.Secrets))
	}
	if !cfg.Drafts {
		t.Error("drafts are off in the demo; create_draft would refuse")
	}
	if cfg.GoogleAPIKey != emulator.DemoAPIKey || cfg.GoogleAppID != emulator.DemoProjectNumber {
		t.Errorf("the Picker's key and App ID are not the emulator's: %q %q", cfg.GoogleAPIKey, cfg.GoogleAppID)
	}
	given := [][]byte{make([]byte, 40)}
	if got := d.configure(Config{Demo: true, Secrets: given}); len(got.Secrets[0]) != 40 {
		t.Error("a given --secret was replaced")
	}
}

// TestDemoStoreIsItsOwn: a demo given no store keeps one in its own
// folder, which close removes; a store it is given is kept.
func TestDemoStoreIsItsOwn(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	d, err := startDemoGoogle(Config{Demo: true}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	cfg := d.configure(Config{Demo: true})
	if want := "sqlite:" + filepath.Join(d.dir, "demo.db"); cfg.Store != want {
		t.Errorf("store %q, want %q", cfg.Store, want)
	}
	if got := d.configure(Config{Demo: true, Store: "sqlite:kept.db"}); got.Store != "sqlite:kept.db" {
		t.Errorf("a given --store became %q", got.Store)
	}
	if err := os.WriteFile(filepath.Join(d.dir, "demo.db"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.close()
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
		t.Errorf("the demo left %v in the temporary folder", left)
	}
}
