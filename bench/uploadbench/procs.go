package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// proc is a drivemail process the bench started.
type proc struct {
	cmd *exec.Cmd
	url string // what it printed after "listening on "
}

// start runs drivemail with args and waits for its "listening on" line.
func start(ctx context.Context, drivemail string, args ...string) (*proc, error) {
	cmd := exec.CommandContext(ctx, drivemail, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s %s: %w", drivemail, args[0], err)
	}
	p := &proc{cmd: cmd}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if l, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				lines <- l
			}
		}
	}()
	select {
	case p.url = <-lines:
		return p, nil
	case <-time.After(30 * time.Second):
		p.stop()
		return nil, fmt.Errorf("%s %s did not say where it listens within 30 s", drivemail, args[0])
	}
}

// stop interrupts the process and waits for it (killing it after 10 s).
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// startServer runs `drivemail serve` against the emulator at google, with
// a fresh store and secret, accepting uploads of maxUpload bytes.
func startServer(ctx context.Context, drivemail, google, dir string, maxUpload int64) (*proc, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return start(ctx, drivemail, "serve", "--addr", "127.0.0.1:0", "--google-endpoint", google,
		"--store", "sqlite:"+filepath.Join(dir, "bench.db"), "--secret", base64.StdEncoding.EncodeToString(key),
		"--google-client-id", "uploadbench.apps.googleusercontent.com", "--google-client-secret", "uploadbench",
		"--max-upload-bytes", strconv.FormatInt(maxUpload, 10), "--log-level", "warn", "--metrics-addr", "off")
}

// memory reads a process's resident set and its high-water mark, in bytes.
func memory(pid int) (rss, hwm int64, err error) {
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

// resetPeak sets the process's high-water mark to its current RSS, where
// the kernel lets us (same user); it reports whether it did.
func resetPeak(pid int) bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
}

// cpuTime is the CPU time (user and system) a process has used so far.
func cpuTime(pid int) (time.Duration, error) {
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
