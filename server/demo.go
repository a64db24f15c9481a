package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/oauth2"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/demoseed"
	"github.com/drivemail/drivemail/oauth"
	"github.com/drivemail/drivemail/oauth/googleauth"
)

// demoClientID is the Google client the demo's emulator thinks it serves;
// the emulator accepts any.
const demoClientID = "drivemail-demo.apps.googleusercontent.com"

// demoTokenTTL is how long DEMO_TOKEN works: a working day of trying
// things out, so a demo does not stop mid-way.
const demoTokenTTL = 12 * time.Hour

// demoGoogle is the in-process Google emulator that --demo runs, seeded
// with sample files for demo@example.com, on its own loopback listener.
type demoGoogle struct {
	emu *emulator.Emulator
	srv *http.Server
	url string
	// dir is the demo's own folder, which close removes: it holds the
	// sample file and, unless --store names one, the store.
	dir string
	// sample is the absolute path of a small file the guide's curl line
	// uploads, in dir.
	sample string
}

// sampleUpload is the file the guide's upload line sends.
const (
	sampleName = "drivemail-demo-upload.txt"
	sampleText = "Uploaded with curl during the drivemail demo. Attach it by the file_id /upload returned.\n"
)

// startDemoGoogle starts the emulator, seeds it (from --demo-seed, else
// the seed built into the binary) and listens on --demo-emulator-addr.
func startDemoGoogle(cfg Config, logger *slog.Logger) (*demoGoogle, error) {
	var wan emulator.WANProfile
	if cfg.DemoWAN != "" {
		var err error
		if wan, err = emulator.ParseWAN(cfg.DemoWAN); err != nil {
			return nil, fmt.Errorf("--demo-wan: %w", err)
		}
	}
	// The emulator's consent page is shown, as Google's would be, so a demo
	// sign-in through OAuth looks like the real one (DEMO_TOKEN needs none).
	// Its Picker plays the project given (--google-app-id and
	// --google-api-key), else the emulator's own.
	emu, err := emulator.New(emulator.Config{WAN: wan, ProjectNumber: cfg.GoogleAppID, APIKey: cfg.GoogleAPIKey})
	if err != nil {
		return nil, fmt.Errorf("demo emulator: %w", err)
	}
	if err := seedDemo(emu, cfg.DemoSeed); err != nil {
		emu.Close()
		return nil, err
	}
	addr := cfg.DemoEmulatorAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		emu.Close()
		return nil, fmt.Errorf("demo emulator: listen on %s (--demo-emulator-addr): %w", addr, err)
	}
	dir, err := os.MkdirTemp("", "drivemail-demo-")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, sampleName), []byte(sampleText), 0o644)
	}
	if err != nil {
		ln.Close()
		emu.Close()
		return nil, fmt.Errorf("demo: a sample file to upload: %w", err)
	}
	d := &demoGoogle{
		dir:    dir,
		sample: filepath.Join(dir, sampleName),
		emu:    emu,
		srv: &http.Server{Handler: emu.Handler(), ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)},
		url: "http://" + ln.Addr().String(),
	}
	go func() {
		if err := d.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("demo emulator stopped", "error", err.Error())
		}
	}()
	return d, nil
}

// seedDemo loads the sample files: the folder dir, or the built-in seed.
func seedDemo(emu *emulator.Emulator, dir string) error {
	if dir == "" {
		if err := emu.SeedFS(demoseed.FS()); err != nil {
			return fmt.Errorf("demo emulator: the built-in seed: %w", err)
		}
		return nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("--demo-seed %s: no such folder; give a folder with one sub-folder per user email, or leave --demo-seed out for the built-in sample files", dir)
	}
	if err := emu.Seed(dir); err != nil {
		return fmt.Errorf("demo emulator: seed %s: %w", dir, err)
	}
	return nil
}

// configure points cfg at the emulator and fills in what a demo needs no
// one to supply: a Google client, the Picker's project and, unless
// given, a fresh secret and a store in the demo's folder. A demo's Google
// tokens come from its own emulator, sealed with a key made for that run,
// so a store kept for the next run could not be used again anyway. Drafts
// and reading mail are on: the emulator has no restricted-scope review to
// pass, and a demo should show every tool working.
func (d *demoGoogle) configure(cfg Config) Config {
	cfg.GoogleEndpoint = d.url
	cfg.Drafts = true
	cfg.ReadMail = true
	cfg.GoogleClientID = demoClientID
	cfg.GoogleClientSecret = "demo-secret"
	cfg.GoogleAppID, cfg.GoogleAPIKey = d.emu.ProjectNumber(), d.emu.APIKey()
	if len(cfg.Secrets) == 0 {
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		cfg.Secrets = [][]byte{key}
	}
	if cfg.Store == "" {
		cfg.Store = "sqlite:" + filepath.Join(d.dir, "demo.db")
	}
	return cfg
}

// signIn does what a browser sign-in would: it stores a Google grant for
// the demo user (tokens minted by the emulator) and returns a drivemail
// access token for that user.
func (d *demoGoogle) signIn(ctx context.Context, g *googleauth.Service, auth *oauth.Server) (string, error) {
	// Google grants "email" as its full scope URL; so does the emulator's
	// consent page, which this sign-in skips.
	var scopes []string
	for _, sc := range g.Scopes() {
		if sc == googleauth.ScopeEmail {
			sc = googleauth.ScopeUserinfoEmail
		}
		scopes = append(scopes, sc)
	}
	// Both tokens are the demo client's, as Google's are the OAuth
	// client's that signed in: drive.file reaches the files of one client.
	tok := &oauth2.Token{
		AccessToken:  d.emu.AccessTokenFor(emulator.DemoUser, demoClientID, scopes...),
		RefreshToken: d.emu.RefreshToken(emulator.DemoUser, demoClientID, scopes...),
		TokenType:    "Bearer",
		Expiry:       time.Now().Add(50 * time.Minute),
	}
	grant, err := g.GrantForToken(ctx, tok)
	if err != nil {
		return "", fmt.Errorf("demo sign-in: %w", err)
	}
	user, err := g.SaveGrant(ctx, grant)
	if err != nil {
		return "", fmt.Errorf("demo sign-in: %w", err)
	}
	token, err := auth.MintAccessToken(ctx, user.ID, demoTokenTTL)
	if err != nil {
		return "", fmt.Errorf("demo sign-in: %w", err)
	}
	return token, nil
}

// close stops the emulator and removes its files.
func (d *demoGoogle) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = d.srv.Shutdown(ctx)
	_ = d.emu.Close()
	_ = os.RemoveAll(d.dir)
}
