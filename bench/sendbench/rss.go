package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// memMark is the process's resident memory before a scenario.
type memMark struct {
	rss     int64 // VmRSS, bytes
	cleared bool  // VmHWM was reset to the current RSS
}

// markMemory settles the heap, resets the kernel's high-water mark
// (echo 5 > /proc/self/clear_refs) where allowed, and notes VmRSS.
func markMemory() (memMark, error) {
	runtime.GC()
	debug.FreeOSMemory()
	cleared := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	st, err := procStatus()
	if err != nil {
		return memMark{}, err
	}
	return memMark{rss: st["VmRSS"], cleared: cleared}, nil
}

// peakGrowth is how far resident memory peaked above the mark.
func peakGrowth(m memMark) (int64, error) {
	st, err := procStatus()
	if err != nil {
		return 0, err
	}
	return st["VmHWM"] - m.rss, nil
}

// procStatus reads the kB fields of /proc/self/status, in bytes.
func procStatus() (map[string]int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return nil, fmt.Errorf("peak RSS needs Linux's /proc: %w", err)
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || !strings.HasSuffix(v, " kB") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(v, " kB")), 10, 64)
		if err == nil {
			out[k] = n << 10
		}
	}
	return out, sc.Err()
}
