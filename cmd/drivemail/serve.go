package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/drivemail/drivemail/clientfile"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/oauth"
	"github.com/drivemail/drivemail/server"
)

func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := serveConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	return server.Run(ctx, cfg, stdout, stderr)
}

// serveConfig reads serve's flags, with their environment defaults.
func serveConfig(args []string, getenv func(string) string, stderr io.Writer) (server.Config, error) {
	fs := flagSet("serve", "The drivemail MCP server (streamable HTTP at BASE/mcp).", stderr)
	finish, err := serveFlags(fs, getenv)
	if err != nil {
		return server.Config{}, err
	}
	if err := parseFlags(fs, args); err != nil {
		return server.Config{}, err
	}
	return finish()
}

// serveFlags defines serve's flags on fs, each defaulting to its
// environment variable, and returns what turns them into a Config once fs
// has parsed the command line. docs/reference.md's table of them is made
// from these definitions (TestReferenceIsCurrent).
func serveFlags(fs *flag.FlagSet, getenv func(string) string) (finish func() (server.Config, error), err error) {
	var cfg server.Config
	fs.StringVar(&cfg.Addr, "addr", envString(getenv, "DRIVEMAIL_ADDR", "127.0.0.1:8080"), "listen address [DRIVEMAIL_ADDR]")
	fs.StringVar(&cfg.BaseURL, "base-url", envString(getenv, "DRIVEMAIL_BASE_URL", ""), "public origin; the protected resource is BASE/mcp (default http://ADDR) [DRIVEMAIL_BASE_URL]")
	fs.StringVar(&cfg.Store, "store", envString(getenv, "DRIVEMAIL_STORE", "sqlite:drivemail.db"), "sqlite:PATH or postgres://… (replicas share a PostgreSQL store); --demo without it keeps a store of its own in a temporary folder, removed when it stops [DRIVEMAIL_STORE]")
	secret := fs.String("secret", envString(getenv, "DRIVEMAIL_SECRET", ""), "base64 key of at least 32 bytes; encrypts Google tokens at rest and signs upload tickets. To rotate, give NEW,OLD: the first encrypts, all decrypt (required unless --demo) [DRIVEMAIL_SECRET]")
	fs.StringVar(&cfg.GoogleClientID, "google-client-id", envString(getenv, "GOOGLE_CLIENT_ID", ""), "Google OAuth web client id [GOOGLE_CLIENT_ID]")
	fs.StringVar(&cfg.GoogleClientSecret, "google-client-secret", envString(getenv, "GOOGLE_CLIENT_SECRET", ""), "Google OAuth web client secret [GOOGLE_CLIENT_SECRET]")
	fs.StringVar(&cfg.GoogleEndpoint, "google-endpoint", envString(getenv, "DRIVEMAIL_GOOGLE_ENDPOINT", ""), "base URL of a Google emulator; every Google API and OAuth URL goes there (default Google itself) [DRIVEMAIL_GOOGLE_ENDPOINT]")
	fs.BoolVar(&cfg.Demo, "demo", false, "start a seeded Google emulator in-process and use it; needs no credentials")
	fs.StringVar(&cfg.DemoSeed, "demo-seed", envString(getenv, "DRIVEMAIL_DEMO_SEED", ""), "folder of sample files for --demo to load instead of the built-in ones (one sub-folder per user email) [DRIVEMAIL_DEMO_SEED]")
	fs.StringVar(&cfg.DemoEmulatorAddr, "demo-emulator-addr", envString(getenv, "DRIVEMAIL_DEMO_EMULATOR_ADDR", ""), "listen address of --demo's Google emulator (default a free port on 127.0.0.1) [DRIVEMAIL_DEMO_EMULATOR_ADDR]")
	demoPublic, err := envBool(getenv, "DRIVEMAIL_DEMO_PUBLIC", false)
	if err != nil {
		return nil, err
	}
	fs.BoolVar(&cfg.DemoPublic, "demo-public", demoPublic, "let --demo listen beyond loopback (--addr, --demo-emulator-addr), as in a container; its ready token and sample mailbox are then anyone's who reaches it [DRIVEMAIL_DEMO_PUBLIC]")
	fs.StringVar(&cfg.DemoWAN, "demo-wan", envString(getenv, "DRIVEMAIL_DEMO_WAN", ""), "network profile of --demo's emulator, as drivemail emulator --wan takes it (such as google: Google's latency and bandwidth) (default loopback) [DRIVEMAIL_DEMO_WAN]")
	drafts, err := envBool(getenv, "DRIVEMAIL_DRAFTS", false)
	if err != nil {
		return nil, err
	}
	fs.BoolVar(&cfg.Drafts, "drafts", drafts, "also ask Google for gmail.compose so create_draft and send_draft work (a restricted scope) [DRIVEMAIL_DRAFTS]")
	readMail, err := envBool(getenv, "DRIVEMAIL_READ_MAIL", false)
	if err != nil {
		return nil, err
	}
	fs.BoolVar(&cfg.ReadMail, "read-mail", readMail, "also ask Google for gmail.readonly so search_mail, save_to_drive, reply_to, forward and Gmail attachments work (a restricted scope) [DRIVEMAIL_READ_MAIL]")
	fs.StringVar(&cfg.DriveScope, "drive-scope", envString(getenv, "DRIVEMAIL_DRIVE_SCOPE", server.DriveReadonly), "how drivemail reaches Drive: readonly (drive.readonly, a restricted scope; drive_search sees the whole Drive) or file (drive.file alone, not restricted; drivemail sees only the files the user picks with drive_pick, uploads or saves; needs --google-api-key and --google-app-id) [DRIVEMAIL_DRIVE_SCOPE]")
	fs.StringVar(&cfg.GoogleAPIKey, "google-api-key", envString(getenv, "GOOGLE_API_KEY", ""), "the browser API key Google's file picker runs with, for --drive-scope file; restrict it to the Google Picker API and to this server's origin (--demo: its emulator's) [GOOGLE_API_KEY]")
	fs.StringVar(&cfg.GoogleAppID, "google-app-id", envString(getenv, "GOOGLE_APP_ID", ""), "the Google Cloud project number (the picker's App ID, which makes the files picked this app's), for --drive-scope file (--demo: its emulator's) [GOOGLE_APP_ID]")
	maxUpload, err := envInt64(getenv, "DRIVEMAIL_MAX_UPLOAD_BYTES", 1<<30)
	if err != nil {
		return nil, err
	}
	fs.Int64Var(&cfg.MaxUploadBytes, "max-upload-bytes", maxUpload, "largest file /upload accepts [DRIVEMAIL_MAX_UPLOAD_BYTES]")
	uploads, err := envInt64(getenv, "DRIVEMAIL_MAX_CONCURRENT_UPLOADS", server.DefaultMaxConcurrentUploads)
	if err != nil {
		return nil, err
	}
	fs.IntVar(&cfg.MaxConcurrentUploads, "max-concurrent-uploads", int(uploads), "uploads streamed into Drive at once (each holds about 8 MiB, so this bounds memory); past it an upload is refused at once with 503 and nothing is stored [DRIVEMAIL_MAX_CONCURRENT_UPLOADS]")
	uploadsPerUser, err := envInt64(getenv, "DRIVEMAIL_MAX_UPLOADS_PER_USER", server.DefaultMaxUploadsPerUser)
	if err != nil {
		return nil, err
	}
	fs.IntVar(&cfg.MaxUploadsPerUser, "max-uploads-per-user", int(uploadsPerUser), "one user's uploads streamed at once, so one user cannot take every upload slot; past it the user's upload is refused at once with 429 and nothing is stored; at most --max-concurrent-uploads, and left unset it follows a lower one [DRIVEMAIL_MAX_UPLOADS_PER_USER]")
	mcpPerUser, err := envInt64(getenv, "DRIVEMAIL_MAX_MCP_REQUESTS_PER_USER", server.DefaultMaxMCPRequestsPerUser)
	if err != nil {
		return nil, err
	}
	fs.IntVar(&cfg.MaxMCPRequestsPerUser, "max-mcp-requests-per-user", int(mcpPerUser), "one user's MCP requests in flight at once, so one signed-in user cannot hold the server's memory with slow requests; past it, or past 8 MiB of their request bodies, a request is refused at once with 429 and Retry-After [DRIVEMAIL_MAX_MCP_REQUESTS_PER_USER]")
	sendMemory, err := envSize(getenv, "DRIVEMAIL_SEND_MEMORY", compose.DefaultSendMemory)
	if err != nil {
		return nil, err
	}
	memory := byteSize(sendMemory)
	fs.Var(&memory, "send-memory", fmt.Sprintf("memory (a `size` such as 256MiB) the messages streaming at once may hold, each reserving what it will: a small message little, the largest %.1f MiB; more wait their turn, served by user. Left unset, a --max-concurrent-sends given sets it to that many of the largest [DRIVEMAIL_SEND_MEMORY]",
		float64(compose.MaxSendMemory)/(1<<20)))
	sends, err := envInt64(getenv, "DRIVEMAIL_MAX_CONCURRENT_SENDS", compose.DefaultMaxConcurrentSends)
	if err != nil {
		return nil, err
	}
	fs.IntVar(&cfg.MaxConcurrentSends, "max-concurrent-sends", int(sends), "messages streamed at once, whatever their size; more wait their turn [DRIVEMAIL_MAX_CONCURRENT_SENDS]")
	perUser, err := envInt64(getenv, "DRIVEMAIL_MAX_SENDS_PER_USER", compose.DefaultMaxSendsPerUser)
	if err != nil {
		return nil, err
	}
	fs.IntVar(&cfg.MaxSendsPerUser, "max-sends-per-user", int(perUser), "one user's messages streamed at once, so that one user's many cannot crowd out others'; more wait their turn; at most --max-concurrent-sends, and left unset it follows a lower one [DRIVEMAIL_MAX_SENDS_PER_USER]")
	queue, err := envDuration(getenv, "DRIVEMAIL_SEND_QUEUE_TIMEOUT", compose.DefaultSendQueueTimeout)
	if err != nil {
		return nil, err
	}
	fs.DurationVar(&cfg.SendQueueTimeout, "send-queue-timeout", queue, "longest wait for a send's turn; past it the send is refused and nothing is sent [DRIVEMAIL_SEND_QUEUE_TIMEOUT]")
	shutdown, err := envDuration(getenv, "DRIVEMAIL_SHUTDOWN_GRACE", 2*time.Minute)
	if err != nil {
		return nil, err
	}
	fs.DurationVar(&cfg.ShutdownGrace, "shutdown-grace", shutdown, "how long a stopping server lets running sends finish [DRIVEMAIL_SHUTDOWN_GRACE]")
	driveIdle, err := envDuration(getenv, "DRIVEMAIL_DRIVE_IDLE_TIMEOUT", time.Minute)
	if err != nil {
		return nil, err
	}
	fs.DurationVar(&cfg.DriveIdleTimeout, "drive-idle-timeout", driveIdle, "a Drive download or export that sends no byte for this long is abandoned (nothing is sent) [DRIVEMAIL_DRIVE_IDLE_TIMEOUT]")
	gmailChunk, err := envDuration(getenv, "DRIVEMAIL_GMAIL_CHUNK_TIMEOUT", 2*time.Minute)
	if err != nil {
		return nil, err
	}
	fs.DurationVar(&cfg.GmailChunkTimeout, "gmail-chunk-timeout", gmailChunk, "longest wait for one Gmail upload request; a stalled chunk is tried again, resuming from where Gmail says it got, and the send is abandoned when a chunk's tries pass twice this [DRIVEMAIL_GMAIL_CHUNK_TIMEOUT]")
	grace, err := envDuration(getenv, "DRIVEMAIL_REFRESH_GRACE", oauth.DefaultRefreshGrace)
	if err != nil {
		return nil, err
	}
	fs.DurationVar(&cfg.RefreshGrace, "refresh-grace", grace, "how long a spent refresh token still gets the pair it was exchanged for, so a client refreshing from several processes at once is not logged out; a reuse later revokes the grant; 0 turns it off, at most 1h [DRIVEMAIL_REFRESH_GRACE]")
	fileTransfer, err := envBool(getenv, "DRIVEMAIL_FILE_TRANSFER", false)
	if err != nil {
		return nil, err
	}
	fs.BoolVar(&cfg.FileTransfer, "file-transfer", fileTransfer, "answer the MCP file-transfer draft (SEP-2631, tracking a draft that may change): files/prepareUpload and files/authorizeUpload, and file_uris in send_email and create_draft [DRIVEMAIL_FILE_TRANSFER]")
	fs.StringVar(&cfg.ClientFileHosts, "client-file-hosts", envString(getenv, "DRIVEMAIL_CLIENT_FILE_HOSTS", strings.Join(clientfile.DefaultHosts, ",")), "hosts whose download URLs send_email fetches for files a chat client hands over (ChatGPT's file parameters): comma-separated names, *.domain for any name below it; https and public addresses only, always [DRIVEMAIL_CLIENT_FILE_HOSTS]")
	fs.StringVar(&cfg.ConfirmSends, "confirm-sends", envString(getenv, "DRIVEMAIL_CONFIRM_SENDS", "auto"), "when send_email and send_draft ask their user before sending (every check passed, nothing downloaded yet): auto asks where the client can ask its user (form elicitation); always also refuses to send where it cannot; off never asks, nor shows the compose view. create_draft never asks [DRIVEMAIL_CONFIRM_SENDS]")
	fs.StringVar(&cfg.LogLevel, "log-level", envString(getenv, "DRIVEMAIL_LOG_LEVEL", "info"), "debug, info, warn or error; --demo without it logs warn and above, so its guide stays on the screen [DRIVEMAIL_LOG_LEVEL]")
	metricsAddr := fs.String("metrics-addr", envString(getenv, "DRIVEMAIL_METRICS_ADDR", defaultMetricsAddr), "where GET /metrics is served, on a listener of its own (never the public one): keep it on loopback or a private network, as it needs no token; off serves none, and --demo serves none unless this is given [DRIVEMAIL_METRICS_ADDR]")
	fs.StringVar(&cfg.TrustedProxies, "trusted-proxies", envString(getenv, "DRIVEMAIL_TRUSTED_PROXIES", ""), "your reverse proxies' addresses, comma-separated CIDRs or IPs (10.0.0.0/8,192.168.1.10): from them, the client is the last X-Forwarded-For address not in the list, for per-address rate limits and logs [DRIVEMAIL_TRUSTED_PROXIES]")
	return func() (server.Config, error) {
		cfg.SendMemory = int64(memory)
		return finishServe(fs, getenv, cfg, *secret, *metricsAddr)
	}, nil
}

// finishServe completes a Config from the parsed flags: the defaults that
// depend on what was given, the checks flags alone can make, the secrets.
func finishServe(fs *flag.FlagSet, getenv func(string) string, cfg server.Config, secret, metricsAddr string) (server.Config, error) {
	// A per-user cap left to its default follows a total set lower, so
	// --max-concurrent-sends 2 alone starts; one given above its total is
	// refused by server.Config's check.
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["max-sends-per-user"] && getenv("DRIVEMAIL_MAX_SENDS_PER_USER") == "" {
		cfg.MaxSendsPerUser = max(1, min(cfg.MaxSendsPerUser, cfg.MaxConcurrentSends))
	}
	// The memory left to its default follows a count of sends given, as
	// that count bounded memory before there was a budget: room for that
	// many of the largest sends, so a setting of old keeps its meaning.
	if !given["send-memory"] && getenv("DRIVEMAIL_SEND_MEMORY") == "" &&
		(given["max-concurrent-sends"] || getenv("DRIVEMAIL_MAX_CONCURRENT_SENDS") != "") {
		cfg.SendMemory = compose.SendMemoryFor(cfg.MaxConcurrentSends)
	}
	if !given["max-uploads-per-user"] && getenv("DRIVEMAIL_MAX_UPLOADS_PER_USER") == "" {
		cfg.MaxUploadsPerUser = max(1, min(cfg.MaxUploadsPerUser, cfg.MaxConcurrentUploads))
	}
	// A demo not told otherwise leaves nothing behind in the folder it
	// ran from (server.Run gives it a store of its own, "" here), and
	// logs quietly: a line per request would scroll its guide away.
	if cfg.Demo && !given["store"] && getenv("DRIVEMAIL_STORE") == "" {
		cfg.Store = ""
	}
	if cfg.Demo && !given["log-level"] && getenv("DRIVEMAIL_LOG_LEVEL") == "" {
		cfg.LogLevel = "warn"
	}
	// In server.Config a zero takes compose's or upload's default; given here, it is a mistake.
	if cfg.MaxSendsPerUser < 1 {
		return cfg, fmt.Errorf("%w: --max-sends-per-user is %d: use 1 or more", errUsage, cfg.MaxSendsPerUser)
	}
	if cfg.SendMemory < 1 {
		return cfg, fmt.Errorf("%w: --send-memory is %s: %s", errUsage, formatSize(cfg.SendMemory), server.SendMemoryFloor())
	}
	if cfg.SendQueueTimeout <= 0 {
		return cfg, fmt.Errorf("%w: --send-queue-timeout is %v: use 1s or more", errUsage, cfg.SendQueueTimeout)
	}
	if cfg.MaxConcurrentUploads < 1 {
		return cfg, fmt.Errorf("%w: --max-concurrent-uploads is %d: use 1 or more", errUsage, cfg.MaxConcurrentUploads)
	}
	if cfg.MaxUploadsPerUser < 1 {
		return cfg, fmt.Errorf("%w: --max-uploads-per-user is %d: use 1 or more", errUsage, cfg.MaxUploadsPerUser)
	}
	if cfg.MaxMCPRequestsPerUser < 1 {
		return cfg, fmt.Errorf("%w: --max-mcp-requests-per-user is %d: use 1 or more", errUsage, cfg.MaxMCPRequestsPerUser)
	}
	keys, err := parseSecrets(secret)
	if err != nil {
		return cfg, err
	}
	cfg.Secrets = keys
	cfg.MetricsAddr = metricsAddress(metricsAddr, cfg.Demo && !given["metrics-addr"] && getenv("DRIVEMAIL_METRICS_ADDR") == "")
	cfg.Version = version
	return cfg, nil
}

// defaultMetricsAddr is loopback, so that only the host (or its Prometheus
// agent) reads the figures unless the operator says otherwise.
const defaultMetricsAddr = "127.0.0.1:9464"

// metricsAddress reads --metrics-addr: "off" or empty serves no metrics,
// and so does a demo that was not given an address (several demos and
// test servers then run side by side without fighting over the port).
func metricsAddress(v string, demoDefault bool) string {
	if demoDefault || v == "" || strings.EqualFold(v, "off") {
		return ""
	}
	return v
}

// parseSecrets decodes a comma-separated list of base64 keys of at least 32 bytes.
func parseSecrets(s string) ([][]byte, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var keys [][]byte
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		k, err := base64.StdEncoding.DecodeString(part)
		if err != nil {
			k, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(part, "="))
		}
		if err != nil {
			return nil, fmt.Errorf("%w: --secret key %d is not base64 (make one with: openssl rand -base64 32)", errUsage, i+1)
		}
		if len(k) < 32 {
			return nil, fmt.Errorf("%w: --secret key %d has %d bytes; it needs at least 32 (make one with: openssl rand -base64 32)", errUsage, i+1, len(k))
		}
		keys = append(keys, k)
	}
	return keys, nil
}
