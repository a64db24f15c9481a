// Command fairbench shows that a quiet user's sends are not held up by
// noisy users' slow ones. Against an in-process emulator under a WAN
// profile (-wan, Google's latency and bandwidth), four noisy users each
// fire several large sends at once, each of several files, and their
// Gmail upload requests are each held -delay more (their slow link),
// while a fifth, quiet user sends small messages a few at a time. The
// same quiet load runs twice, each phase on a fresh emulator and
// compose.Service with the server's sending defaults:
//
//	alone   the quiet user's sends, no one else sending (the baseline)
//	noisy   the same beside the four noisy users
//
// and prints, for each, how long the quiet sends waited for their turn
// (from compose's queued_ms) and took end to end, and what became of the
// noisy users' sends; then the quiet sends' p99 beside the noisy users
// against alone (goal: under 2 s).
// Everything runs on loopback and ends within -timeout.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/account/accounttest"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/internal/identity"
)

const quietUser = "quiet@example.com"

// goalQuietP99 is the bound on the quiet user's p99 beside the noisy users.
const goalQuietP99 = 2 * time.Second

var scopes = []string{drivesvc.ScopeDriveReadonly, "https://www.googleapis.com/auth/gmail.send"}

type params struct {
	wan          string
	delay        time.Duration
	noisy        int
	noisySends   int
	noisyFiles   int
	noisyFileMiB int
	small        int
	smallBytes   int
	smallConc    int
	memory       int64
	sends        int
	perUser      int
	queue        time.Duration
}

func main() {
	var p params
	flag.StringVar(&p.wan, "wan", "google", "the emulator's WAN profile (a spec as drivemail emulator --wan takes it)")
	flag.DurationVar(&p.delay, "delay", time.Second, "added wait on each Gmail upload request of a noisy user")
	flag.IntVar(&p.noisy, "noisy", 4, "noisy users")
	flag.IntVar(&p.noisySends, "noisy-sends", 5, "sends each noisy user fires at once")
	flag.IntVar(&p.noisyFiles, "noisy-files", 3, "files in each noisy send")
	flag.IntVar(&p.noisyFileMiB, "noisy-file-mib", 4, "size of each of those files, MiB")
	flag.IntVar(&p.small, "small", 20, "small sends of the quiet user")
	flag.IntVar(&p.smallBytes, "small-bytes", 50<<10, "size of each small send's attachment, bytes")
	flag.IntVar(&p.smallConc, "small-concurrency", 2, "small sends in flight at once")
	flag.Int64Var(&p.memory, "send-memory", compose.DefaultSendMemory, "--send-memory, bytes")
	flag.IntVar(&p.sends, "max-sends", compose.DefaultMaxConcurrentSends, "--max-concurrent-sends")
	flag.IntVar(&p.perUser, "per-user", compose.DefaultMaxSendsPerUser, "--max-sends-per-user")
	flag.DurationVar(&p.queue, "queue", compose.DefaultSendQueueTimeout, "--send-queue-timeout")
	timeout := flag.Duration("timeout", 10*time.Minute, "the whole run's limit")
	flag.Parse()
	if err := p.check(); err != nil {
		fmt.Fprintln(os.Stderr, "fairbench:", err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := run(ctx, p); err != nil {
		fmt.Fprintln(os.Stderr, "fairbench:", err)
		os.Exit(1)
	}
}

func (p params) check() error {
	switch {
	case p.perUser > p.sends:
		// drivemail serve refuses it too: no user could reach the cap.
		return fmt.Errorf("-per-user %d is above -max-sends %d: use %d or less", p.perUser, p.sends, p.sends)
	case p.noisy < 0 || p.noisy > 50 || p.noisySends < 1 || p.noisySends > 50:
		return errors.New("-noisy and -noisy-sends: use 0 to 50 users, 1 to 50 sends each")
	case p.noisyFiles < 1 || p.noisyFiles > compose.MaxFiles || p.noisyFileMiB < 1 || p.noisyFiles*p.noisyFileMiB > 25:
		return fmt.Errorf("-noisy-files and -noisy-file-mib: 1 to %d files, 25 MiB in all at most (Gmail's limit)", compose.MaxFiles)
	case p.small < 1 || p.small > 1000 || p.smallConc < 1 || p.smallBytes < 1 || p.smallBytes > 25<<20:
		return errors.New("-small, -small-concurrency, -small-bytes: 1 to 1000 sends, 1 or more at once, 1 byte to 25 MiB")
	}
	return nil
}

func run(ctx context.Context, p params) error {
	wan, err := emulator.ParseWAN(p.wan)
	if err != nil {
		return err
	}
	fmt.Printf("WAN %s; %d noisy users each firing %d sends of %d × %d MiB at once, their Gmail upload requests held %v more; "+
		"a quiet user's %d sends of %d bytes, %d at a time; --send-memory %.1f MiB, --max-concurrent-sends %d, --max-sends-per-user %d, --send-queue-timeout %v\n",
		wan.Spec(), p.noisy, p.noisySends, p.noisyFiles, p.noisyFileMiB, p.delay, p.small, p.smallBytes, p.smallConc,
		float64(p.memory)/(1<<20), p.sends, p.perUser, p.queue)
	fmt.Printf("%-26s %26s %22s %32s %8s\n", "", "quiet waited p50/p99/max", "quiet took p50/p99", "noisy sent/user_busy/server_busy/other", "wall")
	var p99 []time.Duration
	for _, noisy := range []int{0, p.noisy} {
		name := "quiet user alone"
		if noisy > 0 {
			name = fmt.Sprintf("beside %d noisy users", noisy)
		}
		f, err := runPhase(ctx, p, wan, noisy)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Printf("%-26s %8s %8s %8s %11s %10s %20d/%d/%d/%d %8s\n", name,
			round(pct(f.quietWait, 50)), round(pct(f.quietWait, 99)), round(pct(f.quietWait, 100)),
			round(pct(f.quietTook, 50)), round(pct(f.quietTook, 99)), f.noisySent, f.noisyUserBusy, f.noisyServerBusy, f.noisyOther, round(f.wall))
		if f.quietFailed > 0 {
			return fmt.Errorf("%s: %d quiet sends failed", name, f.quietFailed)
		}
		p99 = append(p99, pct(f.quietTook, 99))
	}
	verdict := "ok"
	if p99[1] >= goalQuietP99 {
		verdict = "MISSED"
	}
	fmt.Printf("quiet sends' p99 beside the noisy users: %v (goal < %v) %s; %.2f× their p99 alone, %v\n",
		round(p99[1]), goalQuietP99, verdict, float64(p99[1])/float64(max(p99[0], time.Millisecond)), round(p99[0]))
	return nil
}

type figures struct {
	quietWait, quietTook                                  []time.Duration
	quietFailed                                           int
	noisySent, noisyUserBusy, noisyServerBusy, noisyOther int
	wall                                                  time.Duration
}

// runPhase runs the quiet user's load, beside noisy users if any, on a
// fresh emulator and compose.Service.
func runPhase(ctx context.Context, p params, wan emulator.WANProfile, noisy int) (figures, error) {
	var f figures
	emu, err := emulator.New(emulator.Config{WAN: wan})
	if err != nil {
		return f, err
	}
	defer emu.Close()
	slow := &slowUsers{delay: p.delay, tokens: map[string]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return f, err
	}
	srv := &http.Server{Handler: slow.wrap(emu.Handler()), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	endpoints := google.Endpoints{Base: "http://" + ln.Addr().String()}

	quietToken := emu.AccessToken(quietUser, scopes...)
	quietFile, err := putRandom(emu, quietUser, "note.bin", p.smallBytes)
	if err != nil {
		return f, err
	}
	type noisyUser struct{ email, token string }
	var users []noisyUser
	var noisyFiles [][]string
	for i := range noisy {
		u := noisyUser{email: fmt.Sprintf("noisy%d@example.com", i)}
		u.token = emu.AccessToken(u.email, scopes...)
		slow.tokens["Bearer "+u.token] = true
		var files []string
		for j := range p.noisyFiles {
			id, err := putRandom(emu, u.email, fmt.Sprintf("large-%d.bin", j), p.noisyFileMiB<<20)
			if err != nil {
				return f, err
			}
			files = append(files, id)
		}
		users = append(users, u)
		noisyFiles = append(noisyFiles, files)
	}

	logs := &outcomes{}
	svc := compose.New(compose.Config{SendMemory: p.memory, MaxConcurrentSends: p.sends, MaxSendsPerUser: p.perUser,
		SendQueueTimeout: p.queue, Logger: slog.New(logs)})
	send := func(user, token string, fileIDs []string) error {
		hc := oauth2.NewClient(ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token, TokenType: "Bearer"}))
		acct := accounttest.Over(identity.User{ID: user, Email: user}, hc, account.Options{Endpoints: endpoints})
		var atts []compose.Attachment
		for _, id := range fileIDs {
			atts = append(atts, compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(id)}})
		}
		_, err := svc.Send(ctx, acct, compose.Request{To: []string{"zoe@example.org"}, Subject: "fairbench", BodyText: "hi", Attachments: atts}, compose.Options{})
		return err
	}

	start := time.Now()
	var wg sync.WaitGroup
	for i, u := range users {
		for range p.noisySends {
			wg.Go(func() { _ = send(u.email, u.token, noisyFiles[i]) })
		}
	}
	// The quiet user starts once every noisy user has a send at Gmail.
	if err := slow.await(ctx, noisy); err != nil {
		return f, err
	}
	var mu sync.Mutex
	sem := make(chan struct{}, p.smallConc)
	for range p.small {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			t0 := time.Now()
			err := send(quietUser, quietToken, []string{quietFile})
			mu.Lock()
			defer mu.Unlock()
			f.quietTook = append(f.quietTook, time.Since(t0))
			if err != nil {
				f.quietFailed++
			}
		})
	}
	wg.Wait()
	f.wall = time.Since(start)
	if err := ctx.Err(); err != nil {
		return f, err
	}
	for _, o := range logs.all() {
		switch {
		case o.user == quietUser:
			f.quietWait = append(f.quietWait, o.queued)
		case o.sent:
			f.noisySent++
		case o.refusal == "user_busy":
			f.noisyUserBusy++
		case o.refusal == "server_busy":
			f.noisyServerBusy++
		default:
			f.noisyOther++
		}
	}
	return f, nil
}

func putRandom(emu *emulator.Emulator, owner, name string, n int) (string, error) {
	b := make([]byte, n)
	rand.Read(b)
	emu.AddUser(owner)
	file, err := emu.Drive().PutFile(owner, drivesvc.FileSpec{Name: name, Content: b})
	return file.ID, err
}

// slowUsers holds each Gmail upload request of the noisy users (by their
// tokens) for delay before the emulator sees it, as their slow link
// would, and counts the users who have opened an upload session, to
// start the quiet user once every noisy one is sending.
type slowUsers struct {
	delay  time.Duration
	tokens map[string]bool // set before the first request, read only after

	mu      sync.Mutex
	opened  map[string]bool
	nOpened atomic.Int64
}

func (s *slowUsers) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if strings.HasPrefix(r.URL.Path, "/upload/gmail/") && s.tokens[auth] {
			if r.URL.Query().Get("upload_id") == "" {
				s.sessionOpened(auth)
			}
			t := time.NewTimer(s.delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *slowUsers) sessionOpened(auth string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opened == nil {
		s.opened = map[string]bool{}
	}
	if !s.opened[auth] {
		s.opened[auth] = true
		s.nOpened.Add(1)
	}
}

func (s *slowUsers) await(ctx context.Context, users int) error {
	for s.nOpened.Load() < int64(users) {
		select {
		case <-ctx.Done():
			return errors.New("the noisy users' sends never reached Gmail")
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// outcome is one send's log line: whose, whether it went, its refusal
// kind, and how long it waited for its turn.
type outcome struct {
	user, refusal string
	sent          bool
	queued        time.Duration
}

// outcomes is a slog.Handler that keeps compose's per-send lines.
type outcomes struct {
	mu   sync.Mutex
	list []outcome
}

func (o *outcomes) Enabled(context.Context, slog.Level) bool { return true }
func (o *outcomes) WithAttrs([]slog.Attr) slog.Handler       { return o }
func (o *outcomes) WithGroup(string) slog.Handler            { return o }

func (o *outcomes) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "message sent" && r.Message != "send refused" && r.Message != "send failed" {
		return nil
	}
	out := outcome{sent: r.Message == "message sent"}
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "user":
			out.user = a.Value.String()
		case "refusal":
			out.refusal = a.Value.String()
		case "queued_ms":
			out.queued = time.Duration(a.Value.Int64()) * time.Millisecond
		}
		return true
	})
	o.mu.Lock()
	o.list = append(o.list, out)
	o.mu.Unlock()
	return nil
}

func (o *outcomes) all() []outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.list)
}

// pct is the q-th percentile (nearest rank) of ds; 100 is the maximum.
func pct(ds []time.Duration, q int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (q*len(s)+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}

func round(d time.Duration) time.Duration { return d.Round(10 * time.Millisecond) }
