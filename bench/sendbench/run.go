package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/drivemail/drivemail/bench/internal/benchkit"
)

type config struct {
	drivemail, before string
	profiles          []string
	reps              int
}

// The user, and the files each figure sends.
const (
	benchUser  = "bench@example.com"
	bigSize    = 26_214_400 // 25 MiB, Gmail's limit of attached bytes
	tenCount   = 10
	tenEach    = bigSize / tenCount
	smallCount = 10
	smallEach  = 50 << 10
	manyCount  = 16
	manyEach   = 5 << 20
)

// driveFiles are the Drive ids of the bench's files.
type driveFiles struct {
	big              string
	ten, small, many []string
}

// target is one drivemail server under test, signed in as benchUser.
type target struct {
	label  string
	spec   benchkit.Server
	rt     http.RoundTripper
	proc   *benchkit.Proc
	emuPid int // the emulator's process, whose CPU a send uses too
	token  string
	cs     *mcp.ClientSession
}

func run(ctx context.Context, c config, out io.Writer) error {
	dir, err := os.MkdirTemp("", "sendbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	emu, err := benchkit.StartEmulator(ctx, c.drivemail)
	if err != nil {
		return err
	}
	defer emu.Stop()
	p, err := newPlain(ctx, emu.URL)
	if err != nil {
		return err
	}
	files, err := p.uploadFiles(ctx)
	if err != nil {
		return err
	}

	rt := benchkit.Transport(4 * manyCount)
	targets := []*target{{label: "measured", spec: benchkit.Server{Binary: c.drivemail}, emuPid: emu.Pid()}}
	if c.before != "" {
		targets = []*target{{label: "before", spec: benchkit.Server{Binary: c.before}, emuPid: emu.Pid()}, {label: "after", spec: benchkit.Server{Binary: c.drivemail}, emuPid: emu.Pid()}}
	}
	for _, t := range targets {
		t.rt = rt
		t.spec.Google, t.spec.Secret = emu.URL, benchkit.NewSecret()
		t.spec.Store = "sqlite:" + filepath.Join(dir, t.label+".db")
		if err := t.signIn(ctx); err != nil {
			return fmt.Errorf("%s (%s): %w", t.label, t.spec.Binary, err)
		}
		defer t.stop()
	}

	header(out, c, targets)
	for _, prof := range c.profiles {
		spec, err := benchkit.SetWAN(ctx, emu.URL, prof)
		if err != nil {
			return err
		}
		figs := map[string]*figures{}
		var base baselines
		for rep := 0; rep < c.reps; rep++ {
			for _, t := range targets {
				if figs[t.label] == nil {
					figs[t.label] = &figures{}
				}
				if err := t.measure(ctx, emu.URL, files, figs[t.label]); err != nil {
					return fmt.Errorf("%s, profile %s: %w", t.label, spec, err)
				}
			}
			f := figs[targets[len(targets)-1].label]
			if err := p.measure(ctx, files, f.msgs, &base); err != nil {
				return fmt.Errorf("baselines, profile %s: %w", spec, err)
			}
		}
		table(out, spec, targets, figs, base)
	}
	return nil
}

// signIn starts the server and signs benchUser in through its OAuth flow.
func (t *target) signIn(ctx context.Context) error {
	proc, err := benchkit.StartServer(ctx, t.spec)
	if err != nil {
		return err
	}
	t.proc = proc
	t.spec.Addr = strings.TrimPrefix(proc.URL, "http://")
	clientID, err := benchkit.RegisterClient(ctx, proc.URL, "sendbench")
	if err != nil {
		return err
	}
	if t.token, err = benchkit.SignIn(ctx, proc.URL, clientID, benchUser); err != nil {
		return fmt.Errorf("sign in: %w", err)
	}
	return t.connect(ctx)
}

func (t *target) connect(ctx context.Context) error {
	cs, err := benchkit.Connect(ctx, t.rt, t.token, t.proc.URL)
	t.cs = cs
	return err
}

func (t *target) stop() {
	if t.cs != nil {
		_ = t.cs.Close()
		t.cs = nil
	}
	if t.proc != nil {
		t.proc.Stop()
		t.proc = nil
	}
}

// restart gives a fresh server process (the store keeps the sign-in),
// warmed by one small send, so a peak RSS growth is the send's alone.
func (t *target) restart(ctx context.Context, warm string) error {
	t.stop()
	proc, err := benchkit.StartServer(ctx, t.spec)
	if err != nil {
		return err
	}
	t.proc = proc
	if err := t.connect(ctx); err != nil {
		return err
	}
	_, _, err = send(ctx, t.cs, []string{warm})
	return err
}

// send sends one message with the files attached and returns how long it
// took and Gmail's id of the message.
func send(ctx context.Context, cs *mcp.ClientSession, ids []string) (time.Duration, string, error) {
	took, res, err := benchkit.Call(ctx, cs, "send_email", map[string]any{
		"to": []string{"bench@example.org"}, "subject": "bench", "body_text": "The files.", "attachments": ids})
	if err != nil {
		return took, "", err
	}
	id, _ := res["id"].(string)
	if id == "" {
		return took, "", errors.New("send_email answered no id")
	}
	return took, id, nil
}

// measure runs each figure once against t.
func (t *target) measure(ctx context.Context, emulator string, files driveFiles, f *figures) error {
	took, msg, cpu, err := t.timedSend(ctx, []string{files.big})
	if err != nil {
		return fmt.Errorf("25 MiB send: %w", err)
	}
	f.big, f.msgs.big, f.bigCPU = append(f.big, took), msg, append(f.bigCPU, cpu)

	if err := t.restart(ctx, files.small[0]); err != nil {
		return err
	}
	mark, err := benchkit.MarkPeak(t.proc.Pid())
	if err != nil {
		return err
	}
	took, msg, cpu, err = t.timedSend(ctx, files.ten)
	if err != nil {
		return fmt.Errorf("10-file send: %w", err)
	}
	growth, err := mark.Growth()
	if err != nil {
		return err
	}
	f.ten, f.msgs.ten, f.rss10, f.cleared = append(f.ten, took), msg, append(f.rss10, growth), mark.Cleared
	f.tenCPU = append(f.tenCPU, cpu)

	if took, f.msgs.small10, cpu, err = t.timedSend(ctx, files.small); err != nil {
		return fmt.Errorf("10 small files: %w", err)
	}
	f.small10, f.small10CPU = append(f.small10, took), append(f.small10CPU, cpu)
	if took, f.msgs.small1, cpu, err = t.timedSend(ctx, files.small[:1]); err != nil {
		return fmt.Errorf("one small file: %w", err)
	}
	f.small1, f.small1CPU = append(f.small1, took), append(f.small1CPU, cpu)
	return t.concurrent(ctx, emulator, files, f)
}

// CPU readings come from /proc in 10 ms ticks: a send shorter than
// cpuSpan is sent again, untimed, until the sends span it (at most
// cpuSends in all), and the CPU is divided among them.
const (
	cpuSpan  = 300 * time.Millisecond
	cpuSends = 50
)

// timedSend sends ids once, timed, and returns the CPU time the server
// and the emulator used per send.
func (t *target) timedSend(ctx context.Context, ids []string) (time.Duration, string, time.Duration, error) {
	before, err := t.cpu()
	if err != nil {
		return 0, "", 0, err
	}
	took, msg, err := send(ctx, t.cs, ids)
	if err != nil {
		return took, msg, 0, err
	}
	n, span := 1, took
	for ; span < cpuSpan && n < cpuSends; n++ {
		d, _, err := send(ctx, t.cs, ids)
		if err != nil {
			return took, msg, 0, err
		}
		span += d
	}
	after, err := t.cpu()
	return took, msg, (after - before) / time.Duration(n), err
}

// cpu is the CPU time the server and the emulator have used so far.
func (t *target) cpu() (time.Duration, error) {
	s, err := benchkit.CPUTime(t.proc.Pid())
	if err != nil {
		return 0, err
	}
	e, err := benchkit.CPUTime(t.emuPid)
	return s + e, err
}

// concurrent sends the 16 files at once, each in its own message from
// its own MCP session, on a fresh server.
func (t *target) concurrent(ctx context.Context, emulator string, files driveFiles, f *figures) error {
	if err := t.restart(ctx, files.small[0]); err != nil {
		return err
	}
	sessions := make([]*mcp.ClientSession, manyCount)
	for i := range sessions {
		cs, err := benchkit.Connect(ctx, t.rt, t.token, t.proc.URL)
		if err != nil {
			return err
		}
		defer cs.Close()
		sessions[i] = cs
	}
	sent0, err := benchkit.MessagesSent(ctx, emulator)
	if err != nil {
		return err
	}
	mark, err := benchkit.MarkPeak(t.proc.Pid())
	if err != nil {
		return err
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures []error
	)
	start := time.Now()
	for i, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := send(ctx, cs, files.many[i:i+1]); err != nil {
				mu.Lock()
				failures = append(failures, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	growth, err := mark.Growth()
	if err != nil {
		return err
	}
	sent1, err := benchkit.MessagesSent(ctx, emulator)
	if err != nil {
		return err
	}
	f.many, f.rss16 = append(f.many, took), append(f.rss16, growth)
	f.manyFailed = append(f.manyFailed, max(len(failures), manyCount-int(sent1-sent0)))
	for _, err := range failures {
		fmt.Fprintf(os.Stderr, "sendbench: %s: one of %d concurrent sends failed: %v\n", t.label, manyCount, err)
	}
	return nil
}
