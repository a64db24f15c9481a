package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/drivemail/drivemail/bench/internal/benchkit"
	"github.com/drivemail/drivemail/compose"
)

// The seeded Drive: each user owns one small file named notes-NNN.dat;
// the library account owns the large files, shared with every user.
const (
	library    = "library@example.com"
	largeFiles = 4
	smallSize  = 50 << 10
	signInners = 8 // sign-ins at once
	// warmSearches are made before the unloaded ones are timed.
	warmSearches = 5
)

// result is what one setup measured.
type result struct {
	name      string
	unloaded  []time.Duration // drive_search alone
	sendAlone []time.Duration // 50 KiB sends alone
	rec       *recorder
	elapsed   time.Duration
	memory    []replicaMemory
	signIn    time.Duration
	sendSlots string
}

type replicaMemory struct {
	start, peak int64
	cleared     bool
}

func run(ctx context.Context, c config, out io.Writer) error {
	dir, err := os.MkdirTemp("", "loadbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	emu, err := benchkit.StartEmulator(ctx, c.drivemail)
	if err != nil {
		return err
	}
	defer emu.Stop()
	wan, err := benchkit.SetWAN(ctx, emu.URL, c.wan)
	if err != nil {
		return err
	}
	if _, err := benchkit.SetWAN(ctx, emu.URL, "loopback"); err != nil {
		return err
	}
	users, large, err := seed(ctx, c, emu.URL)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "load benchmark: %d users for %v under WAN profile %s; think %v mean; mix %d%% drive_search, %d%% sends of 50 KiB, %d%% sends of %.1f MiB\n",
		c.users, c.duration, wan, c.think, percent(c.mix, kindSearch), percent(c.mix, kindSmall), percent(c.mix, kindLarge), float64(c.largeSize)/(1<<20))
	for _, n := range c.replicas {
		res, err := runSetup(ctx, c, emu.URL, n, dir, users, large)
		if err != nil {
			return fmt.Errorf("%s replica(s): %w", n, err)
		}
		report(out, c, res)
	}
	return nil
}

func percent(m mix, k int) int {
	return 100 * m[k] / (m[kindSearch] + m[kindSmall] + m[kindLarge])
}

// seed registers the users at the emulator and gives them their files.
func seed(ctx context.Context, c config, emulator string) ([]*user, []string, error) {
	users := make([]*user, c.users)
	shared := make([]string, c.users)
	for i := range users {
		users[i] = &user{email: fmt.Sprintf("user%03d@example.com", i)}
		shared[i] = users[i].email
	}
	rng := mrand.NewChaCha8([32]byte{4})
	var large []string
	for i := range largeFiles {
		id, err := benchkit.PutFile(ctx, emulator, map[string]any{"owner": library, "name": fmt.Sprintf("large-%d.dat", i),
			"mime_type": "application/octet-stream", "shared_with": shared}, io.LimitReader(rng, c.largeSize))
		if err != nil {
			return nil, nil, err
		}
		large = append(large, id)
	}
	for i, u := range users {
		id, err := benchkit.PutFile(ctx, emulator, map[string]any{"owner": u.email, "name": fmt.Sprintf("notes-%03d.dat", i),
			"mime_type": "application/octet-stream"}, io.LimitReader(rng, smallSize))
		if err != nil {
			return nil, nil, err
		}
		u.small = id
	}
	return users, large, nil
}

// runSetup starts n replicas on a fresh store, signs every user in,
// measures drive_search alone, then runs the load.
func runSetup(ctx context.Context, c config, emulator, n, dir string, users []*user, large []string) (*result, error) {
	res := &result{rec: &recorder{}}
	store := "sqlite:" + filepath.Join(dir, "load.db")
	res.name = "1 replica, SQLite"
	if n == "2" {
		pg, drop, err := freshSchema(ctx, c.postgres)
		if err != nil {
			return nil, err
		}
		defer drop()
		store, res.name = pg, "2 replicas sharing PostgreSQL"
	}
	count := 1
	if n == "2" {
		count = 2
	}
	replicas, err := startReplicas(ctx, c, emulator, store, count)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, r := range replicas {
			r.Stop()
		}
	}()
	urls := make([]string, len(replicas))
	for i, r := range replicas {
		urls[i] = r.URL
	}
	res.sendSlots = sendingFlags(c)

	start := time.Now()
	if err := signIn(ctx, urls[0], users); err != nil {
		return nil, err
	}
	res.signIn = time.Since(start)
	rt := benchkit.Transport(2 * len(users))
	for _, u := range users {
		cs, err := benchkit.Connect(ctx, rt, u.token, urls...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u.email, err)
		}
		u.cs = cs
	}
	defer func() {
		for _, u := range users {
			_ = u.cs.Close()
		}
	}()

	if _, err := benchkit.SetWAN(ctx, emulator, c.wan); err != nil {
		return nil, err
	}
	defer benchkit.SetWAN(context.WithoutCancel(ctx), emulator, "loopback")
	// The first calls open connections and fill caches; they are not what
	// a user alone sees afterwards.
	for range warmSearches {
		if _, err := call(ctx, users[0], kindSearch, large, nil); err != nil {
			return nil, fmt.Errorf("warm-up drive_search: %w", err)
		}
	}
	for range c.searches {
		took, err := call(ctx, users[0], kindSearch, large, nil)
		if err != nil {
			return nil, fmt.Errorf("unloaded drive_search: %w", err)
		}
		res.unloaded = append(res.unloaded, took)
	}
	for range c.sends {
		took, err := call(ctx, users[0], kindSmall, large, nil)
		if err != nil {
			return nil, fmt.Errorf("unloaded 50 KiB send: %w", err)
		}
		res.sendAlone = append(res.sendAlone, took)
	}

	marks := make([]benchkit.PeakMark, len(replicas))
	for i, r := range replicas {
		if marks[i], err = benchkit.MarkPeak(r.Pid()); err != nil {
			return nil, err
		}
	}
	res.elapsed = load(ctx, c, users, large, res.rec)
	for i, r := range replicas {
		_, hwm, err := benchkit.Memory(r.Pid())
		if err != nil {
			return nil, err
		}
		res.memory = append(res.memory, replicaMemory{start: marks[i].RSS(), peak: hwm, cleared: marks[i].Cleared})
	}
	return res, ctx.Err()
}

// startReplicas starts count servers on one store and secret, all with
// the first one's origin as their public base URL, as behind a load
// balancer: a token any of them issued is good at all of them.
func startReplicas(ctx context.Context, c config, emulator, store string, count int) ([]*benchkit.Proc, error) {
	addrs := make([]string, count)
	for i := range addrs {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		addrs[i] = ln.Addr().String()
		ln.Close()
	}
	secret := benchkit.NewSecret()
	args := []string{"--base-url", "http://" + addrs[0]}
	if c.maxSends > 0 {
		// drivemail serve refuses a per-user cap above the total; below
		// the default cap, the total is the cap.
		args = append(args, "--max-concurrent-sends", fmt.Sprint(c.maxSends),
			"--max-sends-per-user", fmt.Sprint(min(c.maxSends, compose.DefaultMaxSendsPerUser)))
	}
	if c.sendMemory != "" {
		args = append(args, "--send-memory", c.sendMemory)
	}
	var procs []*benchkit.Proc
	for _, addr := range addrs {
		p, err := benchkit.StartServer(ctx, benchkit.Server{Binary: c.drivemail, Google: emulator, Store: store, Secret: secret,
			Addr: addr, Args: args})
		if err != nil {
			for _, q := range procs {
				q.Stop()
			}
			return nil, err
		}
		// Each prints the public base URL it answers to; the bench reaches
		// each at its own address, as a load balancer would.
		p.URL = "http://" + addr
		procs = append(procs, p)
	}
	return procs, nil
}

// sendingFlags says what each replica was told of its sending capacity.
func sendingFlags(c config) string {
	var set []string
	if c.maxSends > 0 {
		set = append(set, fmt.Sprintf("--max-concurrent-sends %d", c.maxSends))
	}
	if c.sendMemory != "" {
		set = append(set, "--send-memory "+c.sendMemory)
	}
	if len(set) == 0 {
		return "the server's defaults"
	}
	return strings.Join(set, ", ")
}

// signIn signs every user in at base, a few at once.
func signIn(ctx context.Context, base string, users []*user) error {
	clientID, err := benchkit.RegisterClient(ctx, base, "loadbench")
	if err != nil {
		return err
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan *user)
	for range signInners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range next {
				tok, err := benchkit.SignIn(ctx, base, clientID, u.email)
				mu.Lock()
				if err != nil && first == nil {
					first = fmt.Errorf("sign in %s: %w", u.email, err)
				}
				u.token = tok
				mu.Unlock()
			}
		}()
	}
	for _, u := range users {
		next <- u
	}
	close(next)
	wg.Wait()
	return first
}

// freshSchema makes a schema of its own on the loopback PostgreSQL and
// returns a URL that selects it (search_path), and a function that drops it.
func freshSchema(ctx context.Context, given string) (string, func(), error) {
	candidates := []string{"postgres://root@127.0.0.1:5432/test?sslmode=disable", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"}
	if given != "" {
		candidates = []string{given}
	}
	var conn *pgx.Conn
	var base string
	var last error
	for _, c := range candidates {
		if err := loopbackURL(c); err != nil {
			return "", nil, err
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, last = pgx.Connect(cctx, c)
		cancel()
		if last == nil {
			base = c
			break
		}
	}
	if conn == nil {
		return "", nil, fmt.Errorf("the 2-replica setup needs PostgreSQL on 127.0.0.1:5432 (or -postgres URL): %w", last)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "loadbench_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", nil, fmt.Errorf("create schema: %w", err)
	}
	drop := func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(dctx, base)
		if err != nil {
			fmt.Fprintf(os.Stderr, "loadbench: drop schema %s: %v\n", schema, err)
			return
		}
		defer c.Close(dctx)
		if _, err := c.Exec(dctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			fmt.Fprintf(os.Stderr, "loadbench: drop schema %s: %v\n", schema, err)
		}
	}
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}

// loopbackURL refuses a database that is not on this machine's loopback.
func loopbackURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("-postgres: %w", err)
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return errors.New("-postgres: the bench reaches only loopback; give a URL on 127.0.0.1")
	}
	return nil
}
