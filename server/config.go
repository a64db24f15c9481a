// Package server wires drivemail's HTTP surface: the routes, the middleware
// around them, and the process lifecycle from start to graceful shutdown.
package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/drivemail/drivemail/clientfile"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/internal/safedial"
	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/tools"
	"github.com/drivemail/drivemail/upload"
)

// Defaults of the upload slots' flags: upload's own.
const (
	DefaultMaxConcurrentUploads = upload.DefaultMaxConcurrent
	DefaultMaxUploadsPerUser    = upload.DefaultMaxPerUser
)

// Config is everything `drivemail serve` is told on its command line.
type Config struct {
	Addr               string
	BaseURL            string
	Store              string   // "" only with Demo: a store in the demo's own folder, removed when it stops
	Secrets            [][]byte // first encrypts and signs; all decrypt
	GoogleClientID     string
	GoogleClientSecret string
	GoogleEndpoint     string
	Demo               bool
	DemoSeed           string // folder of --demo's sample files ("": the built-in ones)
	DemoEmulatorAddr   string // where --demo's emulator listens ("": a free loopback port)
	DemoWAN            string // network profile of --demo's emulator (emulator.ParseWAN; empty: loopback)
	// DemoPublic lets --demo listen beyond loopback (--addr, and
	// --demo-emulator-addr): the demo prints a ready token, and its
	// sample mailbox and emulator pages are anyone's who reaches it.
	DemoPublic         bool
	Drafts             bool
	ReadMail           bool // ask for gmail.readonly: search_mail, save_to_drive, reply_to, forward
	MaxUploadBytes     int64
	SendMemory         int64 // bytes the sends streaming at once may reserve; 0: compose's default
	MaxConcurrentSends int
	MaxSendsPerUser    int           // 0: compose's default
	SendQueueTimeout   time.Duration // 0: compose's default
	ShutdownGrace      time.Duration
	DriveIdleTimeout   time.Duration // 0: compose's default
	GmailChunkTimeout  time.Duration // 0: compose's default
	LogLevel           string
	Version            string
	// TrustedProxies lists the reverse proxies (CIDRs or addresses, comma
	// separated) whose X-Forwarded-For names the client.
	TrustedProxies string
	// RefreshGrace is how long a spent refresh token still gets the pair
	// it was exchanged for (0: off).
	RefreshGrace time.Duration
	// MetricsAddr is where GET /metrics is served, apart from the public
	// listener; "" serves no metrics.
	MetricsAddr string
	// FileTransfer answers the MCP file-transfer draft (SEP-2631): the
	// files capability, files/prepareUpload and files/authorizeUpload,
	// and file_uris in send_email and create_draft.
	FileTransfer bool
	// ClientFileHosts is the allowlist of hosts whose download URLs the
	// tools fetch for files a chat client hands over, comma separated;
	// "" is clientfile.DefaultHosts.
	ClientFileHosts string
	// MaxConcurrentUploads and MaxUploadsPerUser bound the uploads
	// running at once on this replica, in all and per user; past either,
	// an upload is refused at once (uploads do not queue). 0: the default.
	MaxConcurrentUploads int
	MaxUploadsPerUser    int
	// DriveScope is how drivemail reaches Drive: DriveReadonly (""
	// too) asks for drive.readonly, DriveFile for drive.file alone, the
	// files the user picks with drive_pick, uploads or saves.
	DriveScope string
	// GoogleAPIKey and GoogleAppID are the Picker's browser API key and
	// the Cloud project number, which file mode needs; --demo fills
	// them from its emulator.
	GoogleAPIKey string
	GoogleAppID  string
	// MaxMCPRequestsPerUser caps one user's /mcp requests in flight on
	// this replica; past it a request is refused at once with 429. 0: the
	// default.
	MaxMCPRequestsPerUser int
	// ConfirmSends says when send_email asks its user before sending:
	// auto ("" too), always or off (tools.ParseConfirmSends).
	ConfirmSends string
}

// The ways drivemail reaches Drive (--drive-scope).
const (
	DriveReadonly = "readonly"
	DriveFile     = "file"
)

// driveFile reports whether Drive is reached with drive.file alone.
func (c Config) driveFile() bool { return c.DriveScope == DriveFile }

// checkPicker reports what file mode lacks or was given wrong. Outside
// file mode the Picker's settings are not read (GOOGLE_API_KEY is set
// for other Google tools too).
func (c Config) checkPicker() error {
	switch {
	case c.DriveScope != "" && c.DriveScope != DriveReadonly && c.DriveScope != DriveFile:
		return fmt.Errorf("--drive-scope %q: use readonly (drive_search sees the whole Drive; a restricted scope) or file (drivemail sees only the files the user picks, uploads or saves)", c.DriveScope)
	case !c.driveFile() || c.Demo && c.GoogleAPIKey == "" && c.GoogleAppID == "":
		return nil
	case c.GoogleAPIKey == "" || c.GoogleAppID == "":
		return errors.New("--drive-scope file needs --google-api-key and --google-app-id for Google's file picker: " +
			"a browser API key and the Cloud project's number, as docs/google-cloud-setup.md explains")
	case len(c.GoogleAppID) > 20 || strings.Trim(c.GoogleAppID, "0123456789") != "":
		return fmt.Errorf("--google-app-id %q: give the Cloud project number (digits, on the project's dashboard), not the project id", c.GoogleAppID)
	case len(c.GoogleAPIKey) > 200 || strings.IndexFunc(c.GoogleAPIKey, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0:
		return errors.New("--google-api-key: give the browser API key as Google Cloud shows it (letters, digits, - and _)")
	}
	return nil
}

// clientFiles is the Fetcher for files a chat client hands over; logger
// gets each address it refuses to dial, with its block (nil: none).
func (c Config) clientFiles(logger *slog.Logger) (*clientfile.Fetcher, error) {
	var hosts []string
	if strings.TrimSpace(c.ClientFileHosts) != "" {
		hosts = strings.Split(c.ClientFileHosts, ",")
	}
	f, err := clientfile.New(clientfile.Config{Hosts: hosts, Policy: safedial.Policy{Logger: logger}})
	if err != nil {
		return nil, fmt.Errorf("--client-file-hosts %q: give host names or *.domain patterns, comma-separated, such as %s", c.ClientFileHosts, strings.Join(clientfile.DefaultHosts, ","))
	}
	return f, nil
}

// loopbackListener reports whether a listen address names a loopback
// host: ":8080" and "0.0.0.0:8080" listen on every interface.
func loopbackListener(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && host != "" && isLoopbackHost(host)
}

// baseURL returns the public origin: --base-url, or http://ADDR of the
// listener that was opened (so a :0 port resolves to the real one).
func (c Config) baseURL(listenAddr string) (*url.URL, error) {
	raw := c.BaseURL
	if raw == "" {
		host, port, err := net.SplitHostPort(listenAddr)
		if err != nil {
			return nil, fmt.Errorf("listen address %q: %w", listenAddr, err)
		}
		if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
			host = "localhost"
		}
		raw = "http://" + net.JoinHostPort(host, port)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("--base-url %q: want the public origin, such as https://mail.example.com", raw)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("--base-url %q: want an origin without a path; drivemail serves /mcp, /oauth and /upload at the root", raw)
	}
	if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("--base-url %q: use https (MCP clients and Google refuse plain http except on localhost); put drivemail behind a TLS proxy and give its https URL", raw)
	}
	u.Path = ""
	return u, nil
}

// check reports the first setting that cannot work, as a sentence that
// says what to do.
func (c Config) check() error {
	switch {
	case c.Addr == "":
		return errors.New("--addr is empty: give a listen address such as 127.0.0.1:8080")
	case c.Store == "" && !c.Demo:
		return errors.New("--store is empty: give sqlite:PATH, or postgres://… for several replicas")
	case !c.Demo && len(c.Secrets) == 0:
		return errors.New("--secret is required (a base64 key of at least 32 bytes; make one with: openssl rand -base64 32), unless you run --demo")
	case !c.Demo && (c.GoogleClientID == "" || c.GoogleClientSecret == ""):
		return errors.New("--google-client-id and --google-client-secret are required unless you run --demo: create an OAuth web client as docs/google-cloud-setup.md explains")
	case c.Demo && c.GoogleEndpoint != "":
		return errors.New("--demo starts its own Google emulator: leave out --google-endpoint")
	case !c.Demo && (c.DemoSeed != "" || c.DemoEmulatorAddr != ""):
		return errors.New("--demo-seed and --demo-emulator-addr set up the demo's emulator: add --demo, or leave them out")
	case !c.Demo && c.DemoWAN != "":
		return errors.New("--demo-wan shapes --demo's emulator only: add --demo, or give --wan to `drivemail emulator`")
	case !c.Demo && c.DemoPublic:
		return errors.New("--demo-public lets --demo listen beyond loopback: add --demo, or leave it out")
	case c.Demo && !c.DemoPublic && !loopbackListener(c.Addr):
		return fmt.Errorf("--demo with --addr %s would serve the demo to other machines (its ready token, its sample mailbox): "+
			"listen on loopback (--addr 127.0.0.1:8080), or add --demo-public if that is what you mean (in a container, for one)", c.Addr)
	case c.Demo && !c.DemoPublic && c.DemoEmulatorAddr != "" && !loopbackListener(c.DemoEmulatorAddr):
		return fmt.Errorf("--demo-emulator-addr %s would serve the demo's emulator (its consent page, its sent mail) to other machines: "+
			"listen on loopback (127.0.0.1:9090), or add --demo-public if that is what you mean", c.DemoEmulatorAddr)
	case c.SendMemory < 0 || c.SendMemory > 0 && c.SendMemory < compose.MaxSendMemory:
		return fmt.Errorf("--send-memory is %d bytes: %s", c.SendMemory, SendMemoryFloor())
	case c.MaxConcurrentSends < 1:
		return fmt.Errorf("--max-concurrent-sends is %d: use 1 or more", c.MaxConcurrentSends)
	case c.MaxSendsPerUser < 0:
		return fmt.Errorf("--max-sends-per-user is %d: use 1 or more", c.MaxSendsPerUser)
	case c.sendsPerUser() > c.MaxConcurrentSends:
		return fmt.Errorf("--max-sends-per-user is %d, above --max-concurrent-sends (%d): use %d or less, or raise --max-concurrent-sends",
			c.sendsPerUser(), c.MaxConcurrentSends, c.MaxConcurrentSends)
	case c.SendQueueTimeout < 0 || c.SendQueueTimeout > 0 && c.SendQueueTimeout < time.Second:
		return fmt.Errorf("--send-queue-timeout is %v: use 1s or more", c.SendQueueTimeout)
	case c.MaxUploadBytes < 1:
		return fmt.Errorf("--max-upload-bytes is %d: use 1 or more", c.MaxUploadBytes)
	case c.MaxConcurrentUploads < 0:
		return fmt.Errorf("--max-concurrent-uploads is %d: use 1 or more", c.MaxConcurrentUploads)
	case c.MaxUploadsPerUser < 0:
		return fmt.Errorf("--max-uploads-per-user is %d: use 1 or more", c.MaxUploadsPerUser)
	case c.uploadsPerUser() > c.concurrentUploads():
		return fmt.Errorf("--max-uploads-per-user is %d, above --max-concurrent-uploads (%d): use %d or less, or raise --max-concurrent-uploads",
			c.uploadsPerUser(), c.concurrentUploads(), c.concurrentUploads())
	case c.MaxMCPRequestsPerUser < 0:
		return fmt.Errorf("--max-mcp-requests-per-user is %d: use 1 or more", c.MaxMCPRequestsPerUser)
	case c.ShutdownGrace < 0:
		return fmt.Errorf("--shutdown-grace is %v: use 0 or more", c.ShutdownGrace)
	case c.DriveIdleTimeout < 0 || c.DriveIdleTimeout > 0 && c.DriveIdleTimeout < time.Second:
		return fmt.Errorf("--drive-idle-timeout is %v: use 1s or more", c.DriveIdleTimeout)
	case c.GmailChunkTimeout < 0 || c.GmailChunkTimeout > 0 && c.GmailChunkTimeout < time.Second:
		return fmt.Errorf("--gmail-chunk-timeout is %v: use 1s or more", c.GmailChunkTimeout)
	case c.RefreshGrace < 0 || c.RefreshGrace > store.MaxRefreshGrace:
		return fmt.Errorf("--refresh-grace is %v: use 0 (off) up to %v", c.RefreshGrace, store.MaxRefreshGrace)
	}
	if err := c.checkPicker(); err != nil {
		return err
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		return err
	}
	if _, err := parseTrustedProxies(c.TrustedProxies); err != nil {
		return err
	}
	if _, err := tools.ParseConfirmSends(c.ConfirmSends); err != nil {
		return err
	}
	if _, err := c.clientFiles(nil); err != nil {
		return err
	}
	return nil
}

// SendMemoryFloor says what --send-memory must be at least: room for the
// largest send, so that every send can stream once the others are done.
func SendMemoryFloor() string {
	return fmt.Sprintf("use at least %d bytes (%.1f MiB; 18MiB will do), what the largest send holds, so that every send can go once the others are done",
		int64(compose.MaxSendMemory), float64(compose.MaxSendMemory)/(1<<20))
}

// sendsPerUser is --max-sends-per-user, 0 read as compose's default.
// (--max-concurrent-sends has no default here: it must be 1 or more.)
func (c Config) sendsPerUser() int {
	if c.MaxSendsPerUser == 0 {
		return compose.DefaultMaxSendsPerUser
	}
	return c.MaxSendsPerUser
}

// concurrentUploads is --max-concurrent-uploads, 0 read as its default.
func (c Config) concurrentUploads() int {
	if c.MaxConcurrentUploads == 0 {
		return DefaultMaxConcurrentUploads
	}
	return c.MaxConcurrentUploads
}

// uploadsPerUser is --max-uploads-per-user, 0 read as its default.
func (c Config) uploadsPerUser() int {
	if c.MaxUploadsPerUser == 0 {
		return DefaultMaxUploadsPerUser
	}
	return c.MaxUploadsPerUser
}

// parseLevel reads --log-level.
func parseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("--log-level %q: use debug, info, warn or error", s)
}
