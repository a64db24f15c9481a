package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// Goals: drive_search's p99 under load, as a multiple of its unloaded
// p99; a 50 KiB send's p50 under load; each replica's RSS growth.
const (
	goalSearchP99 = 1.5
	goalSmallP50  = 2 * time.Second
	goalRSSGrowth = 64 << 20
)

// percentile is the nearest-rank p-th percentile (0 < p <= 100) of v.
func percentile(v []time.Duration, p float64) time.Duration {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	rank := int(p/100*float64(len(s))+0.999999999) - 1
	return s[min(max(rank, 0), len(s)-1)]
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

// report prints one setup's figures.
func report(w io.Writer, c config, r *result) {
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	sec := func(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }
	fmt.Fprintf(w, "\n%s: %d users signed in through OAuth in %.1f s; sending capacity: %s\n", r.name, c.users, r.signIn.Seconds(), r.sendSlots)
	fmt.Fprintf(w, "\n| tool | calls | errors | p50 | p99 |\n|---|---|---|---|---|\n")
	calls, errs := 0, 0
	for k := range numKinds {
		n := len(r.rec.took[k]) + r.rec.errors[k]
		calls += n
		errs += r.rec.errors[k]
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s |\n", kindNames[k], n, r.rec.errors[k], sec(percentile(r.rec.took[k], 50)), sec(percentile(r.rec.took[k], 99)))
	}
	fmt.Fprintf(w, "\nthroughput: %d calls in %.1f s = %.1f calls/s\n", calls, r.elapsed.Seconds(), float64(calls)/r.elapsed.Seconds())
	fmt.Fprintf(w, "errors: %d (goal 0) %s\n", errs, verdict(errs == 0))
	for k := range numKinds {
		if r.rec.sample[k] != "" {
			fmt.Fprintf(w, "  first %s error: %.300s\n", kindNames[k], r.rec.sample[k])
		}
	}
	for i, m := range r.memory {
		note := ""
		if !m.cleared {
			note = " (peak not resettable: counts from the start)"
		}
		fmt.Fprintf(w, "replica %d RSS: %.1f MiB before the load, peak %.1f MiB (+%.1f MiB, goal <= %d MiB) %s%s\n", i+1, mib(m.start), mib(m.peak),
			mib(m.peak-m.start), goalRSSGrowth>>20, verdict(m.peak-m.start <= goalRSSGrowth), note)
	}
	alone, loaded := percentile(r.unloaded, 99), percentile(r.rec.took[kindSearch], 99)
	ratio := float64(loaded) / float64(max(alone, 1))
	fmt.Fprintf(w, "drive_search p99 under load %s / unloaded %s (1 user, %d calls, p50 %s) = %.2f (goal <= %.1f) %s\n",
		sec(loaded), sec(alone), len(r.unloaded), sec(percentile(r.unloaded, 50)), ratio, goalSearchP99, verdict(ratio <= goalSearchP99))
	small, smallAlone := percentile(r.rec.took[kindSmall], 50), percentile(r.sendAlone, 50)
	fmt.Fprintf(w, "50 KiB send p50 under load %s (goal <= %s) %s; / unloaded %s (1 user, %d sends) = %.2f\n",
		sec(small), sec(goalSmallP50), verdict(small > 0 && small <= goalSmallP50), sec(smallAlone), len(r.sendAlone), float64(small)/float64(max(smallAlone, 1)))
}
