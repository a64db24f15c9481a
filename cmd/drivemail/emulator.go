package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/drivemail/drivemail/emulator"
)

// emulatorArgs are what `drivemail emulator` is told.
type emulatorArgs struct {
	addr, seed, wan       string
	projectNumber, apiKey string
	autoApprove           bool
	tokenTTL              time.Duration
}

// emulatorFlags defines the emulator's flags on fs, each defaulting to its
// environment variable; docs/reference.md's table of them is made from
// these definitions (TestReferenceIsCurrent).
func emulatorFlags(fs *flag.FlagSet, getenv func(string) string) (*emulatorArgs, error) {
	var a emulatorArgs
	fs.StringVar(&a.addr, "addr", envString(getenv, "DRIVEMAIL_EMULATOR_ADDR", "127.0.0.1:9090"), "listen address [DRIVEMAIL_EMULATOR_ADDR]")
	fs.StringVar(&a.seed, "seed", envString(getenv, "DRIVEMAIL_EMULATOR_SEED", ""), "folder of files to preload: one sub-folder per user email [DRIVEMAIL_EMULATOR_SEED]")
	autoDef, err := envBool(getenv, "DRIVEMAIL_EMULATOR_AUTO_APPROVE", false)
	if err != nil {
		return nil, err
	}
	fs.BoolVar(&a.autoApprove, "auto-approve", autoDef, "the consent page approves at once, as the login_hint user or "+emulator.DemoUser+" [DRIVEMAIL_EMULATOR_AUTO_APPROVE]")
	ttlDef, err := envDuration(getenv, "DRIVEMAIL_EMULATOR_TOKEN_TTL", time.Hour)
	if err != nil {
		return nil, err
	}
	fs.DurationVar(&a.tokenTTL, "token-ttl", ttlDef, "lifetime of issued access tokens [DRIVEMAIL_EMULATOR_TOKEN_TTL]")
	fs.StringVar(&a.wan, "wan", envString(getenv, "DRIVEMAIL_EMULATOR_WAN", "loopback"), "network profile: loopback or google, then overrides such as google,drive.ttfb=1s,gmail.up=8MiB/s (docs/emulator.md); change it later at /_emulator/wan [DRIVEMAIL_EMULATOR_WAN]")
	fs.StringVar(&a.projectNumber, "project-number", envString(getenv, "DRIVEMAIL_EMULATOR_PROJECT_NUMBER", emulator.DemoProjectNumber), "the Cloud project number the Picker takes as its App ID (setAppId) [DRIVEMAIL_EMULATOR_PROJECT_NUMBER]")
	fs.StringVar(&a.apiKey, "api-key", envString(getenv, "DRIVEMAIL_EMULATOR_API_KEY", emulator.DemoAPIKey), "the browser API key the Picker takes (setDeveloperKey) [DRIVEMAIL_EMULATOR_API_KEY]")
	return &a, nil
}

func runEmulator(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flagSet("emulator", "A local Google emulator: Drive v3, Sheets v4, Gmail v1 and OAuth 2 on one origin.", stderr)
	a, err := emulatorFlags(fs, getenv)
	if err != nil {
		return err
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	wan, err := emulator.ParseWAN(a.wan)
	if err != nil {
		return fmt.Errorf("%w: --wan: %w", errUsage, err)
	}

	logger := slog.New(slog.NewTextHandler(stderr, nil))
	emu, err := emulator.New(emulator.Config{AccessTTL: a.tokenTTL, AutoApprove: a.autoApprove, WAN: wan, ProjectNumber: a.projectNumber, APIKey: a.apiKey})
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	defer emu.Close()
	if a.seed != "" {
		if err := emu.Seed(a.seed); err != nil {
			return fmt.Errorf("seed %s: %w", a.seed, err)
		}
	}
	ln, err := net.Listen("tcp", a.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: emu.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	fmt.Fprintf(stdout, "outbox: http://%s/_emulator/outbox\n", ln.Addr())
	fmt.Fprintf(stdout, "picker: http://%s/js/api.js (app id %s, api key %s)\n", ln.Addr(), emu.ProjectNumber(), emu.APIKey())
	if !wan.IsLoopback() {
		fmt.Fprintf(stdout, "wan profile: %s\n", wan.Spec())
	}
	return serveUntilDone(ctx, srv, ln)
}

// serveUntilDone serves until ctx ends, then shuts down gracefully.
func serveUntilDone(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
