package main

import (
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// figures are one server's measurements under one profile, one entry per run.
type figures struct {
	big, ten, small10, small1, many []time.Duration
	// CPU time of the server and the emulator per send, by figure.
	bigCPU, tenCPU, small10CPU, small1CPU []time.Duration
	msgs                                  sent // Gmail ids of the last run's messages
	rss10, rss16                          []int64
	manyFailed                            []int
	cleared                               bool // the peak RSS was reset before each send
}

// The goals docs/operations.md gives for a send. The ten small files'
// goal is the tighter one on a WAN profile, where the link and not the
// CPU sets the time.
const (
	goalBig           = 1.15
	goalTen           = 1.15
	goalSmallWAN      = 1.05
	goalSmallLoopback = 2.0
	goalRSS10         = 12 << 20
	goalRSS16         = 64 << 20
	mib               = 1 << 20
	figureColumn      = 58
)

// row is one line of the table: a figure, its goal, the floor no send
// can pass, and for each server what was measured, whether it met the
// goal, and the figure against the yardstick of old.
type row struct {
	figure, goal, floor string
	cells               []cell
}

type cell struct {
	value, old string
	ok         bool
}

// rows computes the table from the runs; wan says the profile shapes
// the link (the small files' goal is then 1.05, not 2).
func rows(order []string, figs map[string]*figures, b baselines, wan bool) []row {
	goalSmall := goalSmallLoopback
	if wan {
		goalSmall = goalSmallWAN
	}
	bigBase, tenBase := bigYardstick(b), tenYardstick(b)
	// The floors are the link's: on loopback the CPU bounds the figures
	// (the CPU limits below the table), so none is printed.
	floor := func(f float64) string {
		if !wan {
			return "-"
		}
		return fmt.Sprintf("%.2f", f)
	}
	out := []row{
		{figure: "25 MiB in one file: send / max(download, best upload)", goal: fmt.Sprintf("<= %.2f", goalBig),
			floor: floor(ratio(bigFloor(b), bigBase))},
		{figure: "10 files, 25 MiB: send / max(parallel downloads, best upload)", goal: fmt.Sprintf("<= %.2f", goalTen),
			floor: floor(ratio(tenFloor(b), tenBase))},
		{figure: "10 small files (50 KiB): send / one file's send", goal: fmt.Sprintf("<= %.2f", goalSmall),
			floor: floor(smallFloor(b))},
		{figure: "peak RSS growth of the server, 10-file send", goal: fmt.Sprintf("<= %d MiB", goalRSS10>>20), floor: "-"},
		{figure: "16 concurrent 5 MiB sends: all succeed; RSS growth", goal: fmt.Sprintf("< %d MiB", goalRSS16>>20), floor: "-"},
	}
	for _, label := range order {
		f := figs[label]
		big := ratio(median(f.big), bigBase)
		ten := ratio(median(f.ten), tenBase)
		small := ratio(median(f.small10), median(f.small1))
		rss10, rss16 := slices.Max(f.rss10), slices.Max(f.rss16)
		failed := 0
		for _, n := range f.manyFailed {
			failed += n
		}
		runs := len(f.manyFailed) * manyCount
		out[0].cells = append(out[0].cells, cell{fmt.Sprintf("%.2f", big),
			fmt.Sprintf("%.2f", ratio(median(f.big), max(median(b.bigDown), median(b.bigUpChunked)))), big <= goalBig})
		out[1].cells = append(out[1].cells, cell{fmt.Sprintf("%.2f", ten),
			fmt.Sprintf("%.2f", ratio(median(f.ten), max(median(b.tenDownSum), median(b.tenUpChunked)))), ten <= goalTen})
		out[2].cells = append(out[2].cells, cell{fmt.Sprintf("%.2f", small), "-", small <= goalSmall})
		out[3].cells = append(out[3].cells, cell{fmt.Sprintf("%.1f MiB", float64(rss10)/mib), "-", rss10 <= goalRSS10})
		out[4].cells = append(out[4].cells, cell{fmt.Sprintf("%d/%d sent, %.1f MiB", runs-failed, runs, float64(rss16)/mib), "-",
			failed == 0 && rss16 < goalRSS16})
	}
	return out
}

// bigYardstick is what the 25 MiB send is held to: the plain download or
// the best plain upload of its message, whichever is longer.
func bigYardstick(b baselines) time.Duration {
	return max(median(b.bigDown), min(median(b.bigUp), median(b.bigUpChunked)))
}

// tenYardstick is the same for ten files: their plain downloads at once,
// or the best plain upload of the message.
func tenYardstick(b baselines) time.Duration {
	return max(median(b.tenDownPar), min(median(b.tenUp), median(b.tenUpChunked)))
}

// relayFloor is the least a send whose upload is as fast as the best
// plain one can take: a relay has no byte for Gmail before the file's
// metadata and Drive's first byte, which it may wait for at once
// (max), then uploads as the plain client does, less the round trip that
// opens a session (a send opens its own meanwhile).
func relayFloor(b baselines, up time.Duration) time.Duration {
	return max(median(b.meta), median(b.firstByte)) + up - median(b.open)
}

func bigFloor(b baselines) time.Duration {
	return relayFloor(b, min(median(b.bigUp), median(b.bigUpChunked)))
}

func tenFloor(b baselines) time.Duration {
	return relayFloor(b, min(median(b.tenUp), median(b.tenUpChunked)))
}

// smallFloor is the ten small files' floor: ten files' relay against
// one's, each upload its best plain one.
func smallFloor(b baselines) float64 {
	return ratio(relayFloor(b, median(b.small10Up)), relayFloor(b, median(b.small1Up)))
}

// cpuLimit is the least a send that used cpu (server and emulator) can
// take on cores.
func cpuLimit(cpu []time.Duration, cores int) time.Duration {
	return median(cpu) / time.Duration(max(cores, 1))
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func median(v []time.Duration) time.Duration {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

// header says what runs against what.
func header(w io.Writer, c config, targets []*target) {
	fmt.Fprintf(w, "send benchmark: drivemail serve against drivemail emulator (%s), separate processes; medians of %d runs, RSS the worst run\n", c.drivemail, c.reps)
	for _, t := range targets {
		v, err := exec.Command(t.spec.Binary, "version").Output()
		if err != nil {
			v = []byte("version unknown")
		}
		fmt.Fprintf(w, "  %-9s %s (%s)\n", t.label+":", t.spec.Binary, strings.TrimSpace(string(v)))
	}
}

// table prints one profile's figures, then the times behind them.
func table(w io.Writer, spec string, targets []*target, figs map[string]*figures, b baselines) {
	order := make([]string, len(targets))
	for i, t := range targets {
		order[i] = t.label
	}
	fmt.Fprintf(w, "\nWAN profile %s\n\n", spec)
	head := fmt.Sprintf("| %-*s | %-9s | %-5s |", figureColumn+4, "figure", "goal", "floor")
	rule := fmt.Sprintf("|%s|%s|%s|", strings.Repeat("-", figureColumn+6), strings.Repeat("-", 11), strings.Repeat("-", 7))
	for _, label := range order {
		head += fmt.Sprintf(" %-22s | %-6s | %-9s |", label, "pass", "old yard.")
		rule += strings.Repeat("-", 24) + "|" + strings.Repeat("-", 8) + "|" + strings.Repeat("-", 11) + "|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, rule)
	for _, r := range rows(order, figs, b, spec != "loopback") {
		line := fmt.Sprintf("| %-*s | %-9s | %-5s |", figureColumn+4, r.figure, r.goal, r.floor)
		for _, c := range r.cells {
			line += fmt.Sprintf(" %-22s | %-6s | %-9s |", c.value, verdict(c.ok), c.old)
		}
		fmt.Fprintln(w, line)
	}
	sec := func(d time.Duration) string {
		if d < time.Second { // loopback's figures are milliseconds
			return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
		}
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	fmt.Fprintf(w, "\nyardsticks: the plain client a competent user would write, same run: the upload in one request or in gmail/v1's 16 MiB chunks, "+
		"whichever is faster, and a message's files downloaded at once; \"old yard.\" is the figure against the old yardstick (16 MiB chunks, downloads one after another)\n")
	fmt.Fprintf(w, "plain client libraries: 25 MiB download %s; its %.1f MB message up in one request %s, in 16 MiB chunks %s; "+
		"10 downloads %s at once, %s one after another; their %.1f MB message up in one request %s, in 16 MiB chunks %s; "+
		"10 small files' message %s, one small file's %s\n",
		sec(median(b.bigDown)), float64(b.bigSize)/1e6, sec(median(b.bigUp)), sec(median(b.bigUpChunked)),
		sec(median(b.tenDownPar)), sec(median(b.tenDownSum)), float64(b.tenSize)/1e6, sec(median(b.tenUp)), sec(median(b.tenUpChunked)),
		sec(median(b.small10Up)), sec(median(b.small1Up)))
	fmt.Fprintf(w, "floors: a relay has no byte for Gmail before the file's metadata (%s) and Drive's first byte (%s), which it may await together, "+
		"and opens its upload session meanwhile (%s); with an upload as fast as the best plain one begun then, 25 MiB ends at %s, ten files at %s; "+
		"a relay that asks for the download only once the metadata is checked, as drivemail does, no sooner than %s (x%.2f) and %s (x%.2f)\n",
		sec(median(b.meta)), sec(median(b.firstByte)), sec(median(b.open)), sec(bigFloor(b)), sec(tenFloor(b)),
		sec(bigFloor(b)+median(b.meta)), ratio(bigFloor(b)+median(b.meta), bigYardstick(b)),
		sec(tenFloor(b)+median(b.meta)), ratio(tenFloor(b)+median(b.meta), tenYardstick(b)))
	cores := runtime.NumCPU()
	for _, label := range order {
		f := figs[label]
		fmt.Fprintf(w, "%s: CPU of the server and the emulator per send: 25 MiB %s, 10 files %s, 10 small %s, one small %s; "+
			"on %d cores no send takes less than its CPU over %d: limits x%.2f, x%.2f, x%.2f (ten small against one small's time)\n",
			label, sec(median(f.bigCPU)), sec(median(f.tenCPU)), sec(median(f.small10CPU)), sec(median(f.small1CPU)), cores, cores,
			ratio(cpuLimit(f.bigCPU, cores), bigYardstick(b)), ratio(cpuLimit(f.tenCPU, cores), tenYardstick(b)),
			ratio(cpuLimit(f.small10CPU, cores), median(f.small1)))
	}
	for _, label := range order {
		f := figs[label]
		fmt.Fprintf(w, "%s: sends of 25 MiB %s, 10 files %s, 10 small %s, one small %s; 16 concurrent %s\n",
			label, sec(median(f.big)), sec(median(f.ten)), sec(median(f.small10)), sec(median(f.small1)), sec(median(f.many)))
		if !f.cleared {
			fmt.Fprintf(w, "%s: (the kernel did not let the peak RSS be reset: growth counts from the warm-up)\n", label)
		}
	}
}
