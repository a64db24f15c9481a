package main

import (
	"strings"
	"testing"
	"time"
)

func TestRowsJudgeAtTheGoals(t *testing.T) {
	ms := func(n float64) []time.Duration { return []time.Duration{time.Duration(n * float64(time.Millisecond))} }
	base := baselines{bigDown: ms(1000), bigUp: ms(2000), tenDown: ms(3000), tenUp: ms(1000)}
	at := &figures{big: ms(2300), ten: ms(3600), small10: ms(2000), small1: ms(1000),
		rss10: []int64{goalRSS10 - 1}, rss16: []int64{goalRSS16 - 1}, manyFailed: []int{0}}
	past := &figures{big: ms(2301), ten: ms(3601), small10: ms(2001), small1: ms(1000),
		rss10: []int64{goalRSS10}, rss16: []int64{goalRSS16 - 1}, manyFailed: []int{1}}
	heavy := &figures{big: ms(1), ten: ms(1), small10: ms(1), small1: ms(1),
		rss10: []int64{0}, rss16: []int64{goalRSS16}, manyFailed: []int{0}}
	got := rows([]string{"at", "past", "heavy"}, map[string]*figures{"at": at, "past": past, "heavy": heavy}, base)
	want := [][]bool{{true, false, true}, {true, false, true}, {true, false, true}, {true, false, true}, {true, false, false}}
	for i, r := range got {
		for j, c := range r.cells {
			if c.ok != want[i][j] {
				t.Errorf("%s, column %d: %s judged %v; want %v", r.figure, j, c.value, c.ok, want[i][j])
			}
		}
	}
	if v := got[4].cells[1].value; !strings.HasPrefix(v, "15/16 sent") {
		t.Errorf("a failed concurrent send shows as %q", v)
	}
}

func TestMedian(t *testing.T) {
	if m := median([]time.Duration{5, 1, 3}); m != 3 {
		t.Errorf("median of 5, 1, 3 = %v", m)
	}
	if m := median(nil); m != 0 {
		t.Errorf("median of nothing = %v", m)
	}
}

// TestLimits: the 25 MiB figure's limits are the metadata call, the
// download's first byte and the plain upload (whole, or in drivemail's
// chunks) less its session's opening, one after the other; a CPU limit
// is the CPU over the cores.
func TestLimits(t *testing.T) {
	ms := func(n ...float64) []time.Duration {
		var d []time.Duration
		for _, v := range n {
			d = append(d, time.Duration(v*float64(time.Millisecond)))
		}
		return d
	}
	b := baselines{meta: ms(230, 240, 231), firstByte: ms(430, 431, 500), bigUp: ms(3330, 3300, 3400), bigUpChunked: ms(3700, 3800, 3750),
		open: ms(100, 101, 99), bigDown: ms(1210)}
	if got, want := waitsLimit(b), 3892*time.Millisecond; got != want {
		t.Errorf("waits' limit = %v, want %v (231 + 431 + 3330 - 100 ms)", got, want)
	}
	if got, want := chunkLimit(b), 4312*time.Millisecond; got != want {
		t.Errorf("chunks' limit = %v, want %v (231 + 431 + 3750 - 100 ms)", got, want)
	}
	if got, want := cpuLimit(ms(300, 500, 400), 2), 200*time.Millisecond; got != want {
		t.Errorf("CPU limit = %v, want %v (400 ms on 2 cores)", got, want)
	}
}
