package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/drivemail/drivemail/bench/internal/benchkit"
)

// The kinds of call a user makes.
const (
	kindSearch = iota
	kindSmall
	kindLarge
	numKinds
)

var kindNames = [numKinds]string{"drive_search", "send_email, 50 KiB", "send_email, large"}

// mix is the relative weight of each kind of call.
type mix [numKinds]int

// parseMix reads "search=70,small=25,large=5".
func parseMix(s string) (mix, error) {
	var m mix
	keys := map[string]int{"search": kindSearch, "small": kindSmall, "large": kindLarge}
	for _, item := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		i, known := keys[k]
		n, err := strconv.Atoi(v)
		if !ok || !known || err != nil || n < 0 || n > 1000 {
			return m, fmt.Errorf("-mix %q: want search=N,small=N,large=N with weights 0 to 1000", s)
		}
		m[i] = n
	}
	if m[kindSearch]+m[kindSmall]+m[kindLarge] == 0 {
		return m, fmt.Errorf("-mix %q: every weight is 0", s)
	}
	return m, nil
}

// pick draws a kind by weight.
func (m mix) pick(rng *rand.Rand) int {
	n := rng.IntN(m[kindSearch] + m[kindSmall] + m[kindLarge])
	for k := range numKinds {
		if n < m[k] {
			return k
		}
		n -= m[k]
	}
	return kindSearch
}

// user is one signed-in simulated user.
type user struct {
	email, token string
	small        string // the id of the user's own 50 KiB file
	cs           *mcp.ClientSession
}

// recorder collects every call's latency and outcome.
type recorder struct {
	mu     sync.Mutex
	took   [numKinds][]time.Duration
	errors [numKinds]int
	sample [numKinds]string // one error's text, for the report
}

func (r *recorder) add(kind int, took time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errors[kind]++
		if r.sample[kind] == "" {
			r.sample[kind] = err.Error()
		}
		return
	}
	r.took[kind] = append(r.took[kind], took)
}

// callTimeout bounds one call: far above a large send's time under the
// google profile, so only a stuck call reaches it.
const callTimeout = 3 * time.Minute

// call makes one call of kind as u.
func call(ctx context.Context, u *user, kind int, large []string, rng *rand.Rand) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var took time.Duration
	var err error
	switch kind {
	case kindSearch:
		var res map[string]any
		took, res, err = benchkit.Call(ctx, u.cs, "drive_search", map[string]any{"query": "notes"})
		if err == nil {
			if files, _ := res["files"].([]any); len(files) == 0 {
				err = fmt.Errorf("drive_search found none of the user's files")
			}
		}
	default:
		id := u.small
		if kind == kindLarge {
			id = large[rng.IntN(len(large))]
		}
		took, _, err = benchkit.Call(ctx, u.cs, "send_email", map[string]any{
			"to": []string{"load@example.org"}, "subject": "load", "body_text": "The file.", "attachments": []string{id}})
	}
	return took, err
}

// load runs every user until the deadline, each thinking between calls,
// and returns how long it ran (the last calls finish after the deadline).
func load(ctx context.Context, c config, users []*user, large []string, rec *recorder) time.Duration {
	start := time.Now()
	deadline := start.Add(c.duration)
	var wg sync.WaitGroup
	for i, u := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 14))
			for {
				pause := time.Duration(rng.ExpFloat64() * float64(c.think))
				if pause > 4*c.think {
					pause = 4 * c.think
				}
				if time.Now().Add(pause).After(deadline) {
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(pause):
				}
				kind := c.mix.pick(rng)
				took, err := call(ctx, u, kind, large, rng)
				rec.add(kind, took, err)
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}
