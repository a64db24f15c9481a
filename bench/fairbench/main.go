// Command fairbench shows that one user's slow sends do not starve
// another's (issue 11 §2). Against an in-process emulator whose Gmail
// answers every upload request after a delay, one user fires many large
// sends at once while another sends small messages a few at a time. It
// runs the same load twice, each phase on a fresh emulator:
//
//	shared    the send slots as one pool with no per-user cap and no
//	          bound on the wait (drivemail before the per-user cap)
//	per-user  the caps as configured (--max-sends-per-user, --send-queue-timeout)
//
// and prints, for each, how long the small user's sends waited for a
// slot (from compose's queued_ms), their end-to-end time (which includes
// Gmail's delay), and what became of the large user's sends; then the
// small sends' p99 wait of the second phase against the first's.
// Everything runs on loopback and ends within -timeout.
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
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

const (
	bigUser   = "big@example.com"
	smallUser = "small@example.com"
)

var scopes = []string{drivesvc.ScopeDriveReadonly, "https://www.googleapis.com/auth/gmail.send"}

type params struct {
	delay      time.Duration
	large      int
	largeMiB   int
	small      int
	smallBytes int
	smallConc  int
	slots      int
	perUser    int
	queue      time.Duration
}

func main() {
	var p params
	flag.DurationVar(&p.delay, "delay", 2*time.Second, "Gmail's delay on every upload request (an emulator fault)")
	flag.IntVar(&p.large, "large", 20, "large sends the first user fires at once")
	flag.IntVar(&p.largeMiB, "large-mib", 12, "size of each large send's attachment, MiB")
	flag.IntVar(&p.small, "small", 20, "small sends of the second user")
	flag.IntVar(&p.smallBytes, "small-bytes", 278, "size of each small send's attachment, bytes")
	flag.IntVar(&p.smallConc, "small-concurrency", 2, "small sends in flight at once")
	flag.IntVar(&p.slots, "slots", compose.DefaultMaxConcurrentSends, "--max-concurrent-sends")
	flag.IntVar(&p.perUser, "per-user", compose.DefaultMaxSendsPerUser, "--max-sends-per-user of the second phase")
	flag.DurationVar(&p.queue, "queue", compose.DefaultSendQueueTimeout, "--send-queue-timeout of the second phase")
	timeout := flag.Duration("timeout", 10*time.Minute, "the whole run's limit")
	flag.Parse()
	if p.perUser > p.slots {
		// drivemail serve refuses it too: no user could reach the cap.
		fmt.Fprintf(os.Stderr, "fairbench: -per-user %d is above -slots %d: use %d or less\n", p.perUser, p.slots, p.slots)
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

func run(ctx context.Context, p params) error {
	fmt.Printf("Gmail delay %v on every upload request; %d sends of %d MiB fired at once by one user; %d sends of %d bytes by another, %d at a time; %d send slots\n",
		p.delay, p.large, p.largeMiB, p.small, p.smallBytes, p.smallConc, p.slots)
	phases := []struct {
		name    string
		perUser int
		queue   time.Duration
	}{
		{"shared pool (no per-user cap)", p.slots, time.Hour},
		{fmt.Sprintf("per-user cap %d, queue timeout %v", p.perUser, p.queue), p.perUser, p.queue},
	}
	fmt.Printf("%-40s %27s %12s %26s %8s\n", "", "small sends' wait p50/p99/max", "small p99", "large sent/user_busy/other", "wall")
	var p99 []time.Duration
	for _, ph := range phases {
		f, err := runPhase(ctx, p, ph.perUser, ph.queue)
		if err != nil {
			return fmt.Errorf("%s: %w", ph.name, err)
		}
		fmt.Printf("%-40s %9s %8s %8s %12s %12d/%d/%d %8s\n", ph.name,
			round(pct(f.smallWait, 50)), round(pct(f.smallWait, 99)), round(pct(f.smallWait, 100)),
			round(pct(f.smallTook, 99)), f.largeSent, f.largeBusy, f.largeOther, round(f.wall))
		if f.smallFailed > 0 {
			return fmt.Errorf("%s: %d small sends failed", ph.name, f.smallFailed)
		}
		p99 = append(p99, pct(f.smallWait, 99))
	}
	fmt.Printf("small sends' p99 wait with the per-user cap: %v (goal < 1s), %.3f× the shared pool's %v\n",
		round(p99[1]), float64(p99[1])/float64(max(p99[0], time.Millisecond)), round(p99[0]))
	return nil
}

type figures struct {
	smallWait, smallTook             []time.Duration
	smallFailed                      int
	largeSent, largeBusy, largeOther int
	wall                             time.Duration
}

// runPhase runs the load once on a fresh emulator and compose.Service.
func runPhase(ctx context.Context, p params, perUser int, queue time.Duration) (figures, error) {
	var f figures
	emu, err := emulator.New(emulator.Config{})
	if err != nil {
		return f, err
	}
	defer emu.Close()
	bigToken, smallToken := emu.AccessToken(bigUser, scopes...), emu.AccessToken(smallUser, scopes...)
	arrivals := &gmailArrivals{token: "Bearer " + bigToken}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return f, err
	}
	srv := &http.Server{Handler: arrivals.wrap(emu.Handler()), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	endpoints := google.Endpoints{Base: "http://" + ln.Addr().String()}

	bigFile, err := putRandom(emu, bigUser, "large.bin", p.largeMiB<<20)
	if err != nil {
		return f, err
	}
	smallFile, err := putRandom(emu, smallUser, "note.bin", p.smallBytes)
	if err != nil {
		return f, err
	}
	var delay emulator.Fault
	if err := json.Unmarshal(fmt.Appendf(nil, `{"path_prefix":"/upload/gmail/","times":1000000,"delay":%q}`, p.delay), &delay); err != nil {
		return f, err
	}
	if err := emu.InjectFault(delay); err != nil {
		return f, err
	}

	logs := &outcomes{}
	svc := compose.New(compose.Config{MaxConcurrentSends: p.slots, MaxSendsPerUser: perUser,
		SendQueueTimeout: queue, Logger: slog.New(logs)})
	send := func(user, token, fileID string) error {
		hc := oauth2.NewClient(ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token, TokenType: "Bearer"}))
		acct := accounttest.Over(identity.User{ID: user, Email: user}, hc, account.Options{Endpoints: endpoints})
		_, err := svc.Send(ctx, acct, compose.Request{To: []string{"zoe@example.org"}, Subject: "fairbench", BodyText: "hi",
			Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(fileID)}}}}, compose.Options{})
		return err
	}

	start := time.Now()
	var wg sync.WaitGroup
	for range p.large {
		wg.Go(func() { send(bigUser, bigToken, bigFile) })
	}
	// The small user starts once the large user holds every slot it can.
	if err := arrivals.await(ctx, min(perUser, p.slots, p.large)); err != nil {
		return f, err
	}
	var mu sync.Mutex
	sem := make(chan struct{}, p.smallConc)
	for range p.small {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			t0 := time.Now()
			err := send(smallUser, smallToken, smallFile)
			mu.Lock()
			defer mu.Unlock()
			f.smallTook = append(f.smallTook, time.Since(t0))
			if err != nil {
				f.smallFailed++
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
		case o.user == smallUser:
			f.smallWait = append(f.smallWait, o.queued)
		case o.sent:
			f.largeSent++
		case o.refusal == "user_busy":
			f.largeBusy++
		default:
			f.largeOther++
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

// gmailArrivals counts the large user's Gmail upload requests as they
// arrive (before the delay), to start the small user once the large one
// holds its slots.
type gmailArrivals struct {
	token string
	n     atomic.Int64
}

func (a *gmailArrivals) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/upload/gmail/") && r.URL.Query().Get("upload_id") == "" && r.Header.Get("Authorization") == a.token {
			a.n.Add(1) // a session opening: one send at Gmail
		}
		next.ServeHTTP(w, r)
	})
}

func (a *gmailArrivals) await(ctx context.Context, n int) error {
	for a.n.Load() < int64(n) {
		select {
		case <-ctx.Done():
			return errors.New("the large sends never reached Gmail")
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// outcome is one send's log line: whose, whether it went, its refusal
// kind, and how long it waited for its slots.
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
