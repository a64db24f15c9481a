package main

import (
	"strings"
	"testing"
	"time"
)

func ms(n ...float64) []time.Duration {
	var d []time.Duration
	for _, v := range n {
		d = append(d, time.Duration(v*float64(time.Millisecond)))
	}
	return d
}

// TestRowsJudgeAtTheGoals: each figure passes at its goal and misses
// just past it, against the best plain upload (here the one request)
// and the parallel downloads; the old yardstick is printed beside it.
func TestRowsJudgeAtTheGoals(t *testing.T) {
	base := baselines{bigDown: ms(1000), bigUp: ms(2000), bigUpChunked: ms(2500),
		tenDownPar: ms(500), tenDownSum: ms(3000), tenUp: ms(2000), tenUpChunked: ms(2200)}
	at := &figures{big: ms(2300), ten: ms(2300), small10: ms(1050), small1: ms(1000),
		rss10: []int64{goalRSS10}, rss16: []int64{goalRSS16 - 1}, manyFailed: []int{0}}
	past := &figures{big: ms(2301), ten: ms(2301), small10: ms(1051), small1: ms(1000),
		rss10: []int64{goalRSS10 + 1}, rss16: []int64{goalRSS16 - 1}, manyFailed: []int{1}}
	heavy := &figures{big: ms(1), ten: ms(1), small10: ms(1), small1: ms(1),
		rss10: []int64{0}, rss16: []int64{goalRSS16}, manyFailed: []int{0}}
	got := rows([]string{"at", "past", "heavy"}, map[string]*figures{"at": at, "past": past, "heavy": heavy}, base, true)
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
	// The old yardsticks: 16 MiB chunks, downloads one after another.
	if old := got[0].cells[0].old; old != "0.92" {
		t.Errorf("25 MiB against the old yardstick = %s, want 0.92 (2300 / 2500 ms)", old)
	}
	if old := got[1].cells[0].old; old != "0.77" {
		t.Errorf("ten files against the old yardstick = %s, want 0.77 (2300 / 3000 ms)", old)
	}
	// On loopback the small files' goal is 2.
	loop := rows([]string{"x"}, map[string]*figures{"x": {big: ms(1), ten: ms(1), small10: ms(2000), small1: ms(1000),
		rss10: []int64{0}, rss16: []int64{0}, manyFailed: []int{0}}}, base, false)
	if !loop[2].cells[0].ok {
		t.Errorf("ten small files at twice one's time judged past the loopback goal")
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

// TestFloors: a relay waits for the longer of the metadata call and
// Drive's first byte, then uploads as the best plain client does, less
// its session's opening; a CPU limit is the CPU over the cores.
func TestFloors(t *testing.T) {
	b := baselines{meta: ms(230, 240, 231), firstByte: ms(430, 431, 500), bigUp: ms(2880, 2900, 2850), bigUpChunked: ms(3150, 3100, 3200),
		open: ms(100, 101, 99), bigDown: ms(1210), tenUp: ms(2000), tenUpChunked: ms(1900),
		small10Up: ms(640), small1Up: ms(605)}
	if got, want := bigFloor(b), 3211*time.Millisecond; got != want {
		t.Errorf("25 MiB floor = %v, want %v (max(231, 431) + 2880 - 100 ms)", got, want)
	}
	if got, want := tenFloor(b), 2231*time.Millisecond; got != want {
		t.Errorf("ten files' floor = %v, want %v (431 + 1900 - 100 ms)", got, want)
	}
	if got := smallFloor(b); got < 1.0373 || got > 1.0375 {
		t.Errorf("small files' floor = %.4f, want 971/936", got)
	}
	if got, want := cpuLimit(ms(300, 500, 400), 2), 200*time.Millisecond; got != want {
		t.Errorf("CPU limit = %v, want %v (400 ms on 2 cores)", got, want)
	}
}
