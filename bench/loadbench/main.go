// Command loadbench is the load test: many signed-in users at once
// calling drivemail's tools over real MCP (the go-sdk client), under the
// emulator's WAN profile, against one `drivemail serve` replica (SQLite)
// and against two replicas sharing PostgreSQL, each request of a session
// going to the next replica in turn.
//
// Each user signs in through the server's OAuth flow (the emulator
// auto-approves, as the login_hint user the bench's browser names), then
// loops until the time is up: think (exponential, -think mean), then one
// call drawn from the mix: drive_search, a send of the user's own 50 KiB
// file, or a send of one of a few large files shared with every user.
//
// Printed per setup: throughput, calls, errors (the goal is none), p50
// and p99 per tool, each replica's RSS growth (the goal is at most
// 64 MiB), drive_search's p99 under load against its p99 unloaded, and a
// 50 KiB send's p50 under load against its p50 unloaded (one user,
// measured first; the goals are at most 1.5x, and at most 2 s).
//
// Bounded: at most 1000 users and 10 minutes of load; every call has a
// deadline; servers, emulator and PostgreSQL are on loopback only.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"
)

// Bounds of a run.
const (
	maxUsers    = 1000
	maxDuration = 10 * time.Minute
)

type config struct {
	drivemail, postgres, wan string
	users                    int
	duration, think          time.Duration
	searches, sends          int
	replicas                 []string // "1", "2"
	mix                      mix
	largeSize                int64
	maxSends                 int    // 0: the server's default
	sendMemory               string // "": the server's default
}

func main() {
	c := config{}
	flag.StringVar(&c.drivemail, "drivemail", "bin/drivemail", "the drivemail binary: emulator and server")
	flag.IntVar(&c.users, "users", 200, fmt.Sprintf("simulated users, each signed in (at most %d)", maxUsers))
	flag.DurationVar(&c.duration, "duration", time.Minute, fmt.Sprintf("how long the users call tools (at most %v)", maxDuration))
	flag.DurationVar(&c.think, "think", 5*time.Second, "mean pause of a user between calls (exponential)")
	flag.StringVar(&c.wan, "wan", "google", "the emulator's WAN profile during the load (a spec as drivemail emulator --wan takes it)")
	flag.IntVar(&c.searches, "baseline-searches", 100, "drive_search calls of one user, alone, for the unloaded p99")
	flag.IntVar(&c.sends, "baseline-sends", 10, "50 KiB sends of one user, alone, for the unloaded p50")
	replicas := flag.String("replicas", "1,2", "setups to run: 1 (one replica, SQLite), 2 (two replicas sharing PostgreSQL)")
	flag.StringVar(&c.postgres, "postgres", os.Getenv("DRIVEMAIL_TEST_POSTGRES"), "PostgreSQL URL on loopback for the 2-replica setup (default: postgres://root@127.0.0.1:5432/test, then user postgres) [DRIVEMAIL_TEST_POSTGRES]")
	mixFlag := flag.String("mix", "search=70,small=25,large=5", "relative weights of drive_search, small sends and large sends")
	flag.Int64Var(&c.largeSize, "large", 5<<20, "bytes of each large file")
	flag.IntVar(&c.maxSends, "max-sends", 0, "each replica's --max-concurrent-sends (0: the server's default; given, it also sets --send-memory unless that is given)")
	flag.StringVar(&c.sendMemory, "send-memory", "", "each replica's --send-memory, such as 256MiB (empty: the server's default)")
	flag.Parse()

	c.replicas = strings.Split(*replicas, ",")
	m, err := parseMix(*mixFlag)
	if err == nil {
		c.mix = m
		err = c.check()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

func (c config) check() error {
	switch {
	case c.users < 1 || c.users > maxUsers:
		return fmt.Errorf("-users %d: use 1 to %d", c.users, maxUsers)
	case c.duration <= 0 || c.duration > maxDuration:
		return fmt.Errorf("-duration %v: use up to %v", c.duration, maxDuration)
	case c.think < 0:
		return fmt.Errorf("-think %v: use 0 or more", c.think)
	case c.searches < 1 || c.searches > 10000:
		return fmt.Errorf("-baseline-searches %d: use 1 to 10000", c.searches)
	case c.sends < 1 || c.sends > 1000:
		return fmt.Errorf("-baseline-sends %d: use 1 to 1000", c.sends)
	case c.maxSends < 0 || c.maxSends > 1000:
		return fmt.Errorf("-max-sends %d: use 1 to 1000, or 0 for the server's default", c.maxSends)
	case c.largeSize < 1 || c.largeSize > 25<<20:
		return fmt.Errorf("-large %d: use 1 byte to 25 MiB (Gmail's attachment limit)", c.largeSize)
	}
	for _, r := range c.replicas {
		if r != "1" && r != "2" {
			return fmt.Errorf("-replicas %q: use 1, 2 or 1,2", r)
		}
	}
	return nil
}
