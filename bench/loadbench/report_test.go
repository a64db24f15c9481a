package main

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	v := make([]time.Duration, 100)
	for i := range v {
		v[i] = time.Duration(100 - i) // 100 down to 1
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 50}, {99, 99}, {100, 100}, {1, 1}, {0.5, 1}} {
		if got := percentile(v, tc.p); got != tc.want {
			t.Errorf("p%v of 1..100 = %v, want %v", tc.p, got, tc.want)
		}
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("p99 of one value = %v", got)
	}
	if got := percentile(nil, 99); got != 0 {
		t.Errorf("p99 of none = %v", got)
	}
}

func TestParseMix(t *testing.T) {
	m, err := parseMix("search=70,small=25,large=5")
	if err != nil || m != (mix{70, 25, 5}) {
		t.Fatalf("parseMix = %v, %v", m, err)
	}
	for _, bad := range []string{"search=0,small=0,large=0", "search=-1", "photos=3", "search=1001", "search"} {
		if _, err := parseMix(bad); err == nil {
			t.Errorf("parseMix(%q) accepted", bad)
		}
	}
	if _, err := parseMix("search=1000"); err != nil {
		t.Errorf("the heaviest weight was refused: %v", err)
	}
}

func TestMixPicksByWeight(t *testing.T) {
	m := mix{70, 25, 5}
	rng := rand.New(rand.NewPCG(1, 2))
	var n [numKinds]int
	for range 100000 {
		n[m.pick(rng)]++
	}
	for k, want := range []int{70000, 25000, 5000} {
		if d := n[k] - want; d < -1500 || d > 1500 {
			t.Errorf("%s drawn %d times of 100000; want about %d", kindNames[k], n[k], want)
		}
	}
	if n := (mix{0, 0, 1}).pick(rng); n != kindLarge {
		t.Errorf("a mix of large sends only drew %s", kindNames[n])
	}
}

func TestConfigBounds(t *testing.T) {
	ok := config{users: maxUsers, duration: maxDuration, searches: 1, sends: 1000, largeSize: 25 << 20, maxSends: 1000, replicas: []string{"1", "2"}}
	if err := ok.check(); err != nil {
		t.Fatalf("the largest run was refused: %v", err)
	}
	for name, change := range map[string]func(*config){
		"users":     func(c *config) { c.users = maxUsers + 1 },
		"no users":  func(c *config) { c.users = 0 },
		"duration":  func(c *config) { c.duration = maxDuration + time.Nanosecond },
		"large":     func(c *config) { c.largeSize = 25<<20 + 1 },
		"replicas":  func(c *config) { c.replicas = []string{"3"} },
		"sends":     func(c *config) { c.sends = 1001 },
		"max-sends": func(c *config) { c.maxSends = -1 },
	} {
		c := ok
		change(&c)
		if err := c.check(); err == nil || !strings.Contains(err.Error(), "-") {
			t.Errorf("%s past its bound: %v", name, err)
		}
	}
}

func TestLoopbackOnly(t *testing.T) {
	for url, ok := range map[string]bool{
		"postgres://root@127.0.0.1:5432/test": true, "postgres://root@localhost/test": true, "postgres://u@[::1]:5432/x": true,
		"postgres://root@db.example.com/test": false, "postgres://root@10.0.0.5/test": false,
	} {
		if err := loopbackURL(url); (err == nil) != ok {
			t.Errorf("loopbackURL(%q) = %v", url, err)
		}
	}
}
