// Command slowload is the load script for slow, unauthenticated
// request bodies. It runs `drivemail serve --demo` as a separate process on
// loopback and, in two phases of the same run:
//
//	baseline  the demo user sends small messages through MCP, one after
//	          another, with nothing else going on;
//	load      the same sends while -conns slow clients spread over POST
//	          /mcp without a token, POST /oauth/token, POST /oauth/register
//	          and PUT /upload/<forged ticket>: each announces the largest
//	          body its route accepts, sends all of it but the last byte at
//	          once (-burst), then a byte every -interval, and never ends.
//
// It prints how long the server took to close each kind of slow client
// (target: within the body deadline, 10 s, plus scheduling slack), the
// server's peak RSS growth in each phase (target under 32 MiB under load),
// and the legitimate sends' outcome and latency, the load phase's as a
// ratio to the baseline's. It exits 1 when a target is missed.
//
// Bounded: at most 1,000 slow clients, phases of at most a minute, and
// every address is the loopback server it started.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
)

// The targets docs/security.md states for slow clients.
const (
	maxGrowth = 32 << 20
	// closeDeadline: the server's body deadline for OAuth forms
	// (server.DefaultBodyTimeout), plus slack for a busy machine.
	bodyDeadline  = 10 * time.Second
	closeDeadline = bodyDeadline + 2*time.Second
	maxConns      = 1000
	maxPhase      = time.Minute
)

func main() {
	var (
		drivemail = flag.String("drivemail", "bin/drivemail", "the drivemail binary to run as `serve --demo`")
		conns     = flag.Int("conns", 200, "slow clients in the load phase (at most 1000), spread over the four routes")
		interval  = flag.Duration("interval", 2*time.Second, "how often each slow client sends one more byte")
		baseline  = flag.Duration("baseline", 5*time.Second, "length of the baseline phase")
		burst     = flag.Bool("burst", true, "each slow client first sends all but the last byte of its body at once (the most memory it can make the server hold), then trickles")
		session   = flag.Bool("session", false, "the user initializes and sends with its Mcp-Session-Id, as the SDK clients do (default: no session, as Claude.ai)")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *conns < 4 || *conns > maxConns || *baseline <= 0 || *baseline > maxPhase || *interval <= 0 {
		fmt.Fprintf(os.Stderr, "slowload: want 4 to %d -conns, a -baseline up to %s and a positive -interval\n", maxConns, maxPhase)
		os.Exit(2)
	}
	ok, err := run(ctx, *drivemail, *conns, *interval, *baseline, *burst, *session)
	if err != nil {
		fmt.Fprintln(os.Stderr, "slowload:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

func run(ctx context.Context, drivemail string, conns int, interval, baseline time.Duration, burst, session bool) (bool, error) {
	srv, err := startDemo(ctx, drivemail)
	if err != nil {
		return false, err
	}
	defer srv.stop()
	fmt.Printf("drivemail serve --demo, pid %d, at %s\n", srv.Pid(), srv.URL)

	user := &sender{base: srv.URL, token: srv.token}
	if session {
		if err := user.initialize(ctx); err != nil {
			return false, err
		}
	}
	if r := user.send(ctx); r.err != nil {
		return false, fmt.Errorf("warm-up send: %w", r.err)
	}

	// Baseline: sends alone.
	base, err := phase(ctx, srv, user, func(ctx context.Context) { waitOrDone(ctx, baseline) })
	if err != nil {
		return false, err
	}
	fmt.Printf("\nbaseline, %s: %s; RSS %s, peak %s\n", base.took.Round(10*time.Millisecond), base.sends, mib(base.rss), mib(base.rss+base.growth))

	// Load: the same sends while the slow clients hold on.
	var slow []slowResult
	load, err := phase(ctx, srv, user, func(ctx context.Context) {
		slow = runSlowClients(ctx, srv.URL, conns, interval, maxPhase, burst)
	})
	if err != nil {
		return false, err
	}
	fmt.Printf("load, %d slow clients, %s: %s; RSS %s, peak %s\n\n", conns, load.took.Round(10*time.Millisecond), load.sends, mib(load.rss), mib(load.rss+load.growth))

	ok := reportSlow(slow)
	growthOK := load.growth < maxGrowth
	fmt.Printf("\nserver RSS growth under load: %s over its start, %s over the baseline's peak (target under %s): %s\n",
		mib(load.growth), mib(load.rss+load.growth-base.rss-base.growth), mib(maxGrowth), verdict(growthOK))
	sendsOK := load.sends.failed == 0 && load.sends.ok > 0
	fmt.Printf("legitimate sends under load: %d succeeded, %d failed: %s\n", load.sends.ok, load.sends.failed, verdict(sendsOK))
	if base.sends.p50 > 0 {
		fmt.Printf("send latency under load vs baseline: p50 %.2f×, max %.2f×\n",
			float64(load.sends.p50)/float64(base.sends.p50), float64(load.sends.max)/float64(base.sends.max))
	}
	return ok && growthOK && sendsOK, nil
}

// phaseResult is one phase's figures.
type phaseResult struct {
	took   time.Duration
	sends  sendStats
	rss    int64 // at the start
	growth int64 // peak RSS during the phase over rss
}

// phase runs the user's sends, one after another, for as long as work
// runs, and measures the server's peak RSS growth over it.
func phase(ctx context.Context, srv *demo, user *sender, work func(context.Context)) (phaseResult, error) {
	mark, err := srv.markPeak()
	if err != nil {
		return phaseResult{}, err
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, maxPhase+closeDeadline)
	defer cancel()
	stats := make(chan sendStats, 1)
	stop := make(chan struct{})
	go func() { stats <- user.sendUntil(ctx, stop) }()
	work(ctx)
	close(stop)
	res := phaseResult{took: time.Since(start), sends: <-stats, rss: mark.RSS()}
	growth, err := mark.Growth()
	if err != nil {
		return phaseResult{}, err
	}
	res.growth = max(growth, 0)
	return res, ctx.Err()
}

func waitOrDone(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}
