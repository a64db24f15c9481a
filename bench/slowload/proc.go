package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// demo is the `drivemail serve --demo` under test.
type demo struct {
	cmd   *exec.Cmd
	base  string // what it printed after "listening on "
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
	cmd := exec.CommandContext(ctx, drivemail, "serve", "--demo", "--addr", "127.0.0.1:0",
		"--store", "sqlite:"+filepath.Join(dir, "demo.db"), "--log-level", "error")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s serve --demo: %w", drivemail, err)
	}
	d := &demo{cmd: cmd, dir: dir}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "DEMO_TOKEN="); ok {
				d.token = v
			}
			if v, ok := strings.CutPrefix(line, "listening on "); ok && d.base == "" {
				d.base = v
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		d.stop()
		return nil, fmt.Errorf("%s serve --demo did not say where it listens within 30 s", drivemail)
	}
	if err := loopbackOnly(d.base); err != nil {
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

// stop interrupts the server and waits for it (killing it after 10 s).
func (d *demo) stop() {
	defer os.RemoveAll(d.dir)
	_ = d.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = d.cmd.Process.Kill()
		<-done
	}
}

// resetPeak sets the server's RSS high-water mark to its current RSS and
// returns that RSS.
func (d *demo) resetPeak() (int64, error) {
	pid := d.cmd.Process.Pid
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		return 0, fmt.Errorf("reset the peak RSS of pid %d (Linux /proc/PID/clear_refs): %w", pid, err)
	}
	rss, _, err := memory(pid)
	return rss, err
}

// memory reads a process's resident set and its high-water mark, in bytes.
func memory(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("RSS needs Linux's /proc: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			rss = n << 10
		case "VmHWM":
			hwm = n << 10
		}
	}
	if rss == 0 || hwm == 0 {
		return 0, 0, fmt.Errorf("no VmRSS/VmHWM in /proc/%d/status", pid)
	}
	return rss, hwm, nil
}
