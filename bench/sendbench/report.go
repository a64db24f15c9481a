package main

import (
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/drivemail/drivemail/gmail"
)

// figures are one server's measurements under one profile, one entry per run.
type figures struct {
	big, ten, small10, small1, many []time.Duration
	// CPU time of the server and the emulator per send, by figure.
	bigCPU, tenCPU, small10CPU, small1CPU []time.Duration
	bigMsg, tenMsg                        string // Gmail ids of the last run's messages
	rss10, rss16                          []int64
	manyFailed                            []int
	cleared                               bool // the peak RSS was reset before each send
}

// The goals docs/operations.md gives for a send.
const (
	goalBig      = 1.15
	goalTen      = 1.2
	goalSmall    = 2.0
	goalRSS10    = 20 << 20
	goalRSS16    = 64 << 20
	mib          = 1 << 20
	figureColumn = 58
)

// row is one line of the table: a figure and its goal, and for each
// server what was measured and whether it met the goal.
type row struct {
	figure, goal string
	cells        []cell
}

type cell struct {
	value string
	ok    bool
}

// rows computes the table from the runs.
func rows(order []string, figs map[string]*figures, b baselines) []row {
	out := []row{
		{figure: "25 MiB in one file: send / max(download, upload)", goal: fmt.Sprintf("<= %.2f", goalBig)},
		{figure: "10 files, 25 MiB: send / max(sum of downloads, upload)", goal: fmt.Sprintf("<= %.1f", goalTen)},
		{figure: "10 small files (50 KiB): send / one file's send", goal: fmt.Sprintf("<= %.0f", goalSmall)},
		{figure: "peak RSS growth of the server, 10-file send", goal: fmt.Sprintf("< %d MiB", goalRSS10>>20)},
		{figure: "16 concurrent 5 MiB sends: all succeed; RSS growth", goal: fmt.Sprintf("< %d MiB", goalRSS16>>20)},
	}
	for _, label := range order {
		f := figs[label]
		big := ratio(median(f.big), max(median(b.bigDown), median(b.bigUp)))
		ten := ratio(median(f.ten), max(median(b.tenDown), median(b.tenUp)))
		small := ratio(median(f.small10), median(f.small1))
		rss10, rss16 := slices.Max(f.rss10), slices.Max(f.rss16)
		failed := 0
		for _, n := range f.manyFailed {
			failed += n
		}
		runs := len(f.manyFailed) * manyCount
		out[0].cells = append(out[0].cells, cell{fmt.Sprintf("%.2f", big), big <= goalBig})
		out[1].cells = append(out[1].cells, cell{fmt.Sprintf("%.2f", ten), ten <= goalTen})
		out[2].cells = append(out[2].cells, cell{fmt.Sprintf("%.2f", small), small <= goalSmall})
		out[3].cells = append(out[3].cells, cell{fmt.Sprintf("%.1f MiB", float64(rss10)/mib), rss10 < goalRSS10})
		out[4].cells = append(out[4].cells, cell{fmt.Sprintf("%d/%d sent, %.1f MiB", runs-failed, runs, float64(rss16)/mib),
			failed == 0 && rss16 < goalRSS16})
	}
	return out
}

// waitsLimit is the least a 25 MiB send can take, whatever its chunks:
// its metadata call and the download's first byte, then a plain upload
// less the round trip that opens its session (a send opens its own while
// it waits for Drive).
func waitsLimit(b baselines) time.Duration {
	return median(b.meta) + median(b.firstByte) + median(b.bigUp) - median(b.open)
}

// chunkLimit is waitsLimit with the upload in drivemail's chunks, each a
// round trip.
func chunkLimit(b baselines) time.Duration {
	return median(b.meta) + median(b.firstByte) + median(b.bigUpChunked) - median(b.open)
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
	head := fmt.Sprintf("| %-*s | %-9s |", figureColumn, "figure", "goal")
	rule := fmt.Sprintf("|%s|%s|", strings.Repeat("-", figureColumn+2), strings.Repeat("-", 11))
	for _, label := range order {
		head += fmt.Sprintf(" %-22s | %-6s |", label, "pass")
		rule += strings.Repeat("-", 24) + "|" + strings.Repeat("-", 8) + "|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, rule)
	for _, r := range rows(order, figs, b) {
		line := fmt.Sprintf("| %-*s | %-9s |", figureColumn, r.figure, r.goal)
		for _, c := range r.cells {
			line += fmt.Sprintf(" %-22s | %-6s |", c.value, verdict(c.ok))
		}
		fmt.Fprintln(w, line)
	}
	sec := func(d time.Duration) string {
		if d < time.Second { // loopback's figures are milliseconds
			return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
		}
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	fmt.Fprintf(w, "\nplain client libraries, same run: 25 MiB download %s, upload of its %.1f MB message %s; "+
		"10 downloads %s in sum, upload of their %.1f MB message %s\n",
		sec(median(b.bigDown)), float64(b.bigSize)/1e6, sec(median(b.bigUp)),
		sec(median(b.tenDown)), float64(b.tenSize)/1e6, sec(median(b.tenUp)))
	big := max(median(b.bigDown), median(b.bigUp))
	fmt.Fprintf(w, "limits the waits set on the 25 MiB figure: a send reads the file's metadata (%s) and has no byte for Gmail before Drive's first (%s), "+
		"while its upload session opens (%s); an upload as fast as the plain one begun at that byte would end at %s: x%.2f; "+
		"in drivemail's %d MiB chunks (plain, %s) at %s: x%.2f\n",
		sec(median(b.meta)), sec(median(b.firstByte)), sec(median(b.open)), sec(waitsLimit(b)), ratio(waitsLimit(b), big),
		gmail.DefaultChunkSize>>20, sec(median(b.bigUpChunked)), sec(chunkLimit(b)), ratio(chunkLimit(b), big))
	cores := runtime.NumCPU()
	for _, label := range order {
		f := figs[label]
		fmt.Fprintf(w, "%s: CPU of the server and the emulator per send: 25 MiB %s, 10 files %s, 10 small %s, one small %s; "+
			"on %d cores no send takes less than its CPU over %d: limits x%.2f, x%.2f, x%.2f (ten small against one small's time)\n",
			label, sec(median(f.bigCPU)), sec(median(f.tenCPU)), sec(median(f.small10CPU)), sec(median(f.small1CPU)), cores, cores,
			ratio(cpuLimit(f.bigCPU, cores), big), ratio(cpuLimit(f.tenCPU, cores), max(median(b.tenDown), median(b.tenUp))),
			ratio(cpuLimit(f.small10CPU, cores), median(f.small1)))
	}
	for _, label := range order {
		f := figs[label]
		chained := median(b.tenDown) + median(b.tenUp)
		fmt.Fprintf(w, "%s: sends of 25 MiB %s, 10 files %s (x%.2f of download-then-upload, %s), 10 small %s, one small %s; 16 concurrent %s\n",
			label, sec(median(f.big)), sec(median(f.ten)), ratio(median(f.ten), chained), sec(chained),
			sec(median(f.small10)), sec(median(f.small1)), sec(median(f.many)))
		if !f.cleared {
			fmt.Fprintf(w, "%s: (the kernel did not let the peak RSS be reset: growth counts from the warm-up)\n", label)
		}
	}
}
