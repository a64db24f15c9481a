// Command slowload is the load script for slow, unauthenticated
// request bodies. It runs `drivemail serve --demo` as a separate process on
// loopback and, in three phases of the same run:
//
//	baseline  the demo user sends small messages through MCP, one after
//	          another, with nothing else going on;
//	load      the same sends while -conns slow clients spread over POST
//	          /mcp without a token, POST /oauth/token, POST /oauth/register
//	          and PUT /upload/<forged ticket>: each announces the largest
//	          body its route accepts, sends all of it but the last byte at
//	          once (-burst), then a byte every -interval, and never ends;
//	signed in the same sends while another user, signed in through OAuth,
//	          opens -user-conns such clients on POST /mcp with their token,
//	          each announcing 4 MiB.
//
// It prints how long the server took to close each kind of slow client
// (target: within its body deadline, 10 s, 30 s for a signed-in MCP
// request, plus scheduling slack), the server's peak RSS growth in each
// phase (targets: under 32 MiB under load, under 48 MiB for one user's
// slow requests), and the legitimate sends' outcome and latency, each
// phase's as a ratio to the baseline's. It exits 1 when a target is
// missed.
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

	"github.com/drivemail/drivemail/bench/internal/benchkit"
)

// The targets docs/security.md states for slow clients.
const (
	maxGrowth = 32 << 20
	// maxUserGrowth: one signed-in user's slow MCP requests.
	maxUserGrowth = 48 << 20
	// mcpBodyDeadline: a signed-in user's MCP body
	// (server.DefaultMCPBodyTimeout).
	mcpBodyDeadline = 30 * time.Second
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
		userConns = flag.Int("user-conns", 100, "slow clients of one signed-in user in the signed-in phase (at most 1000; 0 skips the phase)")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *conns < 4 || *conns > maxConns || *userConns < 0 || *userConns > maxConns || *baseline <= 0 || *baseline > maxPhase || *interval <= 0 {
		fmt.Fprintf(os.Stderr, "slowload: want 4 to %d -conns, 0 to %d -user-conns, a -baseline up to %s and a positive -interval\n", maxConns, maxConns, maxPhase)
		os.Exit(2)
	}
	ok, err := run(ctx, *drivemail, *conns, *userConns, *interval, *baseline, *burst, *session)
	if err != nil {
		fmt.Fprintln(os.Stderr, "slowload:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

func run(ctx context.Context, drivemail string, conns, userConns int, interval, baseline time.Duration, burst, session bool) (bool, error) {
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
	load, slow, err := slowPhase(ctx, srv, user, "load", slowRoutes, conns, interval, burst)
	if err != nil {
		return false, err
	}

	ok := reportSlow(slow, slowRoutes, bodyDeadline, closeDeadline)
	ok = reportGrowth("under load", load, base, maxGrowth) && ok
	ok = reportSends(load, base) && ok
	if userConns == 0 {
		return ok, nil
	}

	// Signed in: another user's slow requests with their own token.
	token, err := signInAnotherUser(ctx, srv.URL)
	if err != nil {
		return false, err
	}
	routes := []slowRoute{signedInRoute(token)}
	signed, held, err := slowPhase(ctx, srv, user, "\nsigned in, one user's", routes, userConns, interval, burst)
	if err != nil {
		return false, err
	}
	ok = reportSlow(held, routes, mcpBodyDeadline, mcpBodyDeadline+2*time.Second) && ok
	ok = reportGrowth("under one user's slow requests", signed, base, maxUserGrowth) && ok
	return reportSends(signed, base) && ok, nil
}

// slowPhase is a phase of the user's sends while n slow clients spread
// over routes hold on; it prints its line, named what.
func slowPhase(ctx context.Context, srv *demo, user *sender, what string, routes []slowRoute, n int, interval time.Duration, burst bool) (phaseResult, []slowResult, error) {
	var slow []slowResult
	p, err := phase(ctx, srv, user, func(ctx context.Context) {
		slow = runSlowClients(ctx, srv.URL, routes, n, interval, maxPhase, burst)
	})
	if err != nil {
		return p, nil, err
	}
	fmt.Printf("%s, %d slow clients, %s: %s; RSS %s, peak %s\n\n", what, n, p.took.Round(10*time.Millisecond), p.sends, mib(p.rss), mib(p.rss+p.growth))
	return p, slow, nil
}

// reportGrowth prints a phase's peak RSS growth against target, and says
// whether it stayed under.
func reportGrowth(what string, p, base phaseResult, target int64) bool {
	ok := p.growth < target
	fmt.Printf("\nserver RSS growth %s: %s over its start, %s over the baseline's peak (target under %s): %s\n",
		what, mib(p.growth), mib(p.rss+p.growth-base.rss-base.growth), mib(target), verdict(ok))
	return ok
}

// reportSends prints a phase's legitimate sends against the baseline's and
// says whether all of them went.
func reportSends(p, base phaseResult) bool {
	ok := p.sends.failed == 0 && p.sends.ok > 0
	fmt.Printf("the demo user's sends meanwhile: %d succeeded, %d failed: %s\n", p.sends.ok, p.sends.failed, verdict(ok))
	if base.sends.p50 > 0 && p.sends.p50 > 0 {
		fmt.Printf("send latency vs baseline: p50 %.2f×, max %.2f×\n",
			float64(p.sends.p50)/float64(base.sends.p50), float64(p.sends.max)/float64(base.sends.max))
	}
	return ok
}

// signInAnotherUser signs a second user in at base, through drivemail's
// OAuth and the demo's emulated Google, and returns their access token.
func signInAnotherUser(ctx context.Context, base string) (string, error) {
	clientID, err := benchkit.RegisterClient(ctx, base, "slowload")
	if err != nil {
		return "", err
	}
	token, err := benchkit.SignIn(ctx, base, clientID, "slow-user@example.com")
	if err != nil {
		return "", fmt.Errorf("sign in a second user: %w", err)
	}
	return token, nil
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
