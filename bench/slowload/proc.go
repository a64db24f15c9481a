package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"

	"github.com/drivemail/drivemail/bench/internal/benchkit"
)

// demo is the `drivemail serve --demo` under test.
type demo struct {
	*benchkit.Proc
	token string // DEMO_TOKEN
	dir   string
}

// startDemo runs `drivemail serve --demo` on a loopback port of its own
// choosing, with a fresh store, and waits for its token and address.
func startDemo(ctx context.Context, drivemail string) (*demo, error) {
	dir, err := os.MkdirTemp("", "slowload")
	if err != nil {
		return nil, err
	}
	p, err := benchkit.Start(ctx, drivemail, "serve", "--demo", "--addr", "127.0.0.1:0",
		"--store", "sqlite:"+filepath.Join(dir, "demo.db"), "--log-level", "error")
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	d := &demo{Proc: p, token: p.Printed("DEMO_TOKEN="), dir: dir}
	if err := loopbackOnly(p.URL); err != nil {
		d.stop()
		return nil, err
	}
	if d.token == "" {
		d.stop()
		return nil, fmt.Errorf("%s serve --demo printed no DEMO_TOKEN", drivemail)
	}
	return d, nil
}

// loopbackOnly refuses to load anything but a loopback address.
func loopbackOnly(base string) error {
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("the server listens on %s, not a loopback address: refusing to load it", base)
	}
	return nil
}

// stop interrupts the server, waits for it, and removes its store.
func (d *demo) stop() {
	d.Stop()
	os.RemoveAll(d.dir)
}

// markPeak sets the server's RSS high-water mark to its current RSS, so
// that a phase's growth is its own.
func (d *demo) markPeak() (benchkit.PeakMark, error) {
	m, err := benchkit.MarkPeak(d.Pid())
	if err == nil && !m.Cleared {
		err = fmt.Errorf("reset the peak RSS of pid %d (Linux /proc/PID/clear_refs): not permitted", d.Pid())
	}
	return m, err
}
