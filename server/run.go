package server

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/internal/metrics"
	"github.com/drivemail/drivemail/oauth"
	"github.com/drivemail/drivemail/oauth/googleauth"
	"github.com/drivemail/drivemail/oauth/keyring"
	"github.com/drivemail/drivemail/prepared"
	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/store/backend"
	"github.com/drivemail/drivemail/tools"
	"github.com/drivemail/drivemail/upload"
	"github.com/drivemail/drivemail/views"
)

// sweepEvery is how often expired authorization rows are deleted.
const sweepEvery = 10 * time.Minute

// Run starts the server described by cfg and serves until ctx ends, then
// shuts down gracefully. It prints `listening on BASE` to stdout once ready
// (and, with --demo, a `DEMO_TOKEN=` line first); logs go to stderr.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	if err := cfg.check(); err != nil {
		return err
	}
	level, _ := parseLevel(cfg.LogLevel)
	logger := slog.New(withRequestID(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})))

	var demo *demoGoogle
	if cfg.Demo {
		var err error
		if demo, err = startDemoGoogle(cfg, logger); err != nil {
			return err
		}
		defer demo.close()
		cfg = demo.configure(cfg)
	}
	endpoints, err := google.Parse(cfg.GoogleEndpoint)
	if err != nil {
		return fmt.Errorf("--google-endpoint: %w", err)
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	defer ln.Close()
	base, err := cfg.baseURL(ln.Addr().String())
	if err != nil {
		return err
	}

	st, err := backend.Open(ctx, cfg.Store, store.Options{})
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	sweepCtx, stopSweep := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSweep()
	go store.SweepEvery(sweepCtx, st, sweepEvery, logger)

	keys, err := keyring.New(cfg.Secrets, googleauth.KeyPurpose)
	if err != nil {
		return fmt.Errorf("--secret: %w", err)
	}
	meter := metrics.New(cfg.Version)
	gauth, err := googleauth.New(googleauth.Config{
		// Every Google call (token, userinfo and each user's API calls)
		// goes through this transport, which measures it; an HTTP/2
		// answer holds at most google.StreamWindow unread.
		HTTPClient:   &http.Client{Timeout: 30 * time.Second, Transport: meter.GoogleTransport(google.Transport())},
		Endpoints:    endpoints,
		ClientID:     cfg.GoogleClientID,
		ClientSecret: cfg.GoogleClientSecret,
		RedirectURL:  base.String() + "/oauth/callback",
		Drafts:       cfg.Drafts,
		ReadMail:     cfg.ReadMail,
		DriveFile:    cfg.driveFile(),
		Store:        st,
		Keys:         keys,
		Logger:       logger,
	})
	if err != nil {
		return fmt.Errorf("google oauth: %w", err)
	}
	trusted, err := parseTrustedProxies(cfg.TrustedProxies)
	if err != nil {
		return err
	}
	client := clientIP(trusted)
	refreshKeys, err := keyring.New(cfg.Secrets, oauth.RefreshKeyPurpose)
	if err != nil {
		return fmt.Errorf("--secret: %w", err)
	}
	auth, err := oauth.New(oauth.Config{BaseURL: base.String(), Store: st, Google: gauth, Logger: logger, ClientIP: client,
		RefreshGrace: cfg.RefreshGrace, Keys: refreshKeys, Demo: cfg.Demo})
	if err != nil {
		return fmt.Errorf("authorization server: %w", err)
	}
	files, err := cfg.clientFiles(logger)
	if err != nil {
		return err
	}
	// The one door to every user's Google account: their clients, with
	// one set of options, for the tools, compose and upload alike.
	accounts := account.NewDoor(gauth, account.Options{Endpoints: endpoints, DriveIdleTimeout: cfg.DriveIdleTimeout,
		GmailChunkTimeout: cfg.GmailChunkTimeout, Logger: logger})
	ucfg := upload.Config{
		BaseURL:  base,
		Secrets:  cfg.Secrets,
		Accounts: accounts,
		Limits:   st,
		Files:    files,
		MaxBytes: cfg.MaxUploadBytes,
		Logger:   logger,
		// check has refused negative values and a per-user cap above
		// the total; the zero value is upload's default.
		MaxConcurrent: cfg.MaxConcurrentUploads,
		MaxPerUser:    cfg.MaxUploadsPerUser,
	}
	if cfg.FileTransfer {
		ucfg.Transfers = st
	}
	uploads, err := upload.New(ucfg)
	if err != nil {
		return fmt.Errorf("uploads: %w", err)
	}
	ccfg := compose.Config{SendMemory: cfg.SendMemory, MaxConcurrentSends: cfg.MaxConcurrentSends,
		MaxSendsPerUser: cfg.MaxSendsPerUser, SendQueueTimeout: cfg.SendQueueTimeout, Logger: logger,
		Files: files}
	var transfers Transfers
	if cfg.FileTransfer {
		ccfg.Transfers, transfers = uploads, callerTransfers{uploads: uploads, door: accounts}
	}
	mail := compose.New(ccfg)
	confirmSends, _ := tools.ParseConfirmSends(cfg.ConfirmSends) // check has read it
	picks, err := cfg.picks(base, st, gauth, accounts, endpoints, logger)
	if err != nil {
		return err
	}
	// The MCP App views, and the messages the compose view holds for its
	// user; a prepared id outlives no replica that shares the secret.
	viewSet, err := views.New(views.Config{Pick: cfg.driveFile(), BaseURL: base})
	if err != nil {
		return err
	}
	held, err := prepared.New(cfg.Secrets, st.UseOnce, store.ErrUsed)
	if err != nil {
		return err
	}

	s := NewServer(Deps{
		Logger:   logger,
		BaseURL:  base,
		Version:  cfg.Version,
		Auth:     auth,
		Accounts: accounts,
		Tools: tools.Deps{
			Drive:           accountDrive{},
			Mail:            accountMail{compose: mail},
			Uploads:         uploads,
			Saver:           uploads,
			DraftsEnabled:   cfg.Drafts,
			ReadMailEnabled: cfg.ReadMail,
			ConfirmSends:    confirmSends,
			Confirmed:       meter.SendConfirmation,
			MailReader:      accountMailReader{},
			Picks:           picks.links(),
			Prepared:        held,
		},
		Resources:      viewSet.Resources(),
		Picks:          picks.page(),
		Uploads:        uploads,
		Store:          st,
		Metrics:        meter,
		ClientIP:       client,
		SessionSecrets: cfg.Secrets,
		FileTransfer:   transfers,
		// check has refused a negative value; zero is the default.
		MaxMCPRequestsPerUser: cfg.MaxMCPRequestsPerUser,
		UseOnce:               st.UseOnce,
	})
	_, stopMetrics, err := serveMetrics(cfg.MetricsAddr, meter, logger)
	if err != nil {
		return err
	}
	defer stopMetrics()

	var demoToken string
	if demo != nil {
		token, err := demo.signIn(ctx, gauth, auth)
		if err != nil {
			return err
		}
		demoToken = token
		fmt.Fprintf(stdout, "DEMO_TOKEN=%s\n", token)
		fmt.Fprintf(stdout, "emulator on %s (sent mail: %s/_emulator/outbox)\n", demo.url, demo.url)
	}
	srv := newHTTPServer(s, defaultTimeouts, logger)
	logger.Info("drivemail serving", "base_url", base.String(), "version", cfg.Version, "demo", cfg.Demo, "drafts", cfg.Drafts, "read_mail", cfg.ReadMail,
		"drive_scope", cmp.Or(cfg.DriveScope, DriveReadonly))
	fmt.Fprintf(stdout, "listening on %s\n", base)
	if demo != nil {
		demo.guide(base, demoToken, cfg.driveFile()).write(stdout)
	}
	return serve(ctx, srv, ln, cfg.ShutdownGrace, logger)
}

// serveMetrics serves GET /metrics on its own listener at addr ("" for
// none), never on the public one: the figures need no token, so they
// belong on loopback or a private network. It returns the metrics URL and
// what stops the listener.
func serveMetrics(addr string, meter *metrics.Metrics, logger *slog.Logger) (url string, stop func(), err error) {
	if addr == "" {
		return "", func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("--metrics-addr: listen on %s: %w (give another address, or off)", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", meter.Handler())
	srv := newHTTPServer(mux, defaultTimeouts, logger)
	go func() { _ = srv.Serve(ln) }()
	url = "http://" + ln.Addr().String() + "/metrics"
	logger.Info("metrics served", "url", url)
	return url, func() { _ = srv.Close() }, nil
}
