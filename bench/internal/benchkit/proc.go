// Package benchkit is what drivemail's benchmarks share: running
// drivemail processes (emulator and server) and reading their memory,
// signing users in through the server's real OAuth flow, switching the
// emulator's WAN profile, and calling tools over MCP.
package benchkit

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Proc is a drivemail process a benchmark started.
type Proc struct {
	Cmd *exec.Cmd
	URL string // what it printed after "listening on "
	// before are the lines it printed before that one (serve --demo's
	// DEMO_TOKEN=…).
	before []string
}

// Printed is the rest of the line the process printed, before it said
// where it listens, that starts with prefix; "" when there was none.
func (p *Proc) Printed(prefix string) string {
	for _, l := range p.before {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			return v
		}
	}
	return ""
}

// Start runs drivemail with args and waits for its "listening on" line.
// Its log goes to stderr.
func Start(ctx context.Context, drivemail string, args ...string) (*Proc, error) {
	return startEnv(ctx, nil, drivemail, args...)
}

// startEnv is Start with variables added to the environment.
func startEnv(ctx context.Context, env []string, drivemail string, args ...string) (*Proc, error) {
	cmd := exec.CommandContext(ctx, drivemail, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s %s: %w", drivemail, args[0], err)
	}
	p := &Proc{Cmd: cmd}
	ready := make(chan struct{})
	go func() {
		var before []string
		listening := false
		sc := bufio.NewScanner(out)
		for sc.Scan() { // to the end, so the process never blocks on a full pipe
			switch l, ok := strings.CutPrefix(sc.Text(), "listening on "); {
			case listening:
			case ok:
				p.URL, p.before, listening = l, before, true
				close(ready)
			default:
				before = append(before, sc.Text())
			}
		}
	}()
	select {
	case <-ready:
		return p, nil
	case <-time.After(30 * time.Second):
		p.Stop()
		return nil, fmt.Errorf("%s %s did not say where it listens within 30 s", drivemail, args[0])
	}
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Stop interrupts the process and waits for it (killing it after 10 s).
func (p *Proc) Stop() {
	_ = p.Cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-done
	}
}

// Server is how StartServer runs `drivemail serve`.
type Server struct {
	Binary string // the drivemail binary
	Google string // the emulator's origin
	Store  string // sqlite:PATH or postgres://…
	Secret string // base64 key (NewSecret); the same one reopens the store
	// Addr is the listen address (default 127.0.0.1:0, a free port). A
	// restarted server needs its old one: tokens are bound to BASE/mcp.
	Addr string
	Args []string
}

// NewSecret makes a random --secret.
func NewSecret() string {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return base64.StdEncoding.EncodeToString(key)
}

// StartServer runs `drivemail serve` on a free loopback port (or Addr).
// The secret goes in the environment, not on the command line, where any
// user of the machine could read it. Metrics are off (by environment, which
// an older build ignores), so replicas and runs do not fight over a port.
func StartServer(ctx context.Context, s Server) (*Proc, error) {
	addr := s.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	args := append([]string{"serve", "--addr", addr, "--google-endpoint", s.Google,
		"--store", s.Store,
		"--google-client-id", "bench.apps.googleusercontent.com", "--google-client-secret", "bench",
		"--log-level", "warn"}, s.Args...)
	return startEnv(ctx, []string{"DRIVEMAIL_SECRET=" + s.Secret, "DRIVEMAIL_METRICS_ADDR=off"}, s.Binary, args...)
}

// Memory reads a process's resident set and its high-water mark, in bytes.
func Memory(pid int) (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("peak RSS needs Linux's /proc: %w", err)
	}
	defer f.Close()
	return parseStatus(f)
}

func parseStatus(r io.Reader) (rss, hwm int64, err error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || !strings.HasSuffix(v, " kB") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(v, " kB")), 10, 64)
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
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if rss == 0 || hwm == 0 {
		return 0, 0, fmt.Errorf("no VmRSS/VmHWM in /proc status")
	}
	return rss, hwm, nil
}

// ResetPeak sets the process's high-water mark to its current RSS, where
// the kernel lets us (same user); it reports whether it did.
func ResetPeak(pid int) bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
}

// PeakMark is a process's resident memory when a measurement began.
type PeakMark struct {
	pid     int
	rss     int64
	Cleared bool // the high-water mark was reset; otherwise it counts from the process's start
}

// MarkPeak resets pid's high-water mark and notes its RSS.
func MarkPeak(pid int) (PeakMark, error) {
	cleared := ResetPeak(pid)
	rss, _, err := Memory(pid)
	return PeakMark{pid: pid, rss: rss, Cleared: cleared}, err
}

// RSS is the resident memory at the mark.
func (m PeakMark) RSS() int64 { return m.rss }

// Growth is how far the process's resident memory peaked above the mark.
func (m PeakMark) Growth() (int64, error) {
	_, hwm, err := Memory(m.pid)
	return hwm - m.rss, err
}

// CPUTime is the CPU time (user and system) a process has used so far.
func CPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("CPU time needs Linux's /proc: %w", err)
	}
	// The command name may hold spaces; the fields after it are fixed.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / ticks, nil
}
