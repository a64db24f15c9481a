package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/google"
)

const (
	benchUser  = "bench@example.com"
	tenFiles   = 10
	tenEach    = 26_214_400 / tenFiles // 10 files totalling exactly 25 MiB
	manySends  = 16
	manyEach   = 5 << 20
	targetRSS  = 20 << 20
	targetTime = 1.3
)

func runParent(ctx context.Context, drivemail string, reps, capN int) error {
	base, stop, err := startEmulator(ctx, drivemail)
	if err != nil {
		return err
	}
	defer stop()
	token, err := newUser(ctx, base)
	if err != nil {
		return err
	}
	ep := google.Endpoints{Base: base}
	hc := oauth2.NewClient(ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token, TokenType: "Bearer"}))
	dc, err := drive.New(ctx, hc, ep)
	if err != nil {
		return err
	}
	ten, err := uploadFiles(ctx, dc, "ten", tenFiles, tenEach)
	if err != nil {
		return err
	}
	many, err := uploadFiles(ctx, dc, "many", manySends, manyEach)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	run := func(mode string, ids []string, size int64) (childResult, error) {
		return runScenario(ctx, self, mode, base, token, ids, size, capN)
	}

	// Warm the emulator's caches and learn the encoded sizes the plain
	// baselines must match.
	warm10, err := run("compose10", ten, 0)
	if err != nil {
		return err
	}
	warm16, err := run("compose16", many, 0)
	if err != nil {
		return err
	}
	var c10, p10, c16, p16 []childResult
	for r := 0; r < reps; r++ {
		for _, s := range []struct {
			mode string
			ids  []string
			size int64
			out  *[]childResult
		}{
			{"plain10", ten, warm10.SizeBytes, &p10},
			{"compose10", ten, 0, &c10},
			{"plain16", many, warm16.SizeBytes / 1, &p16},
			{"compose16", many, 0, &c16},
		} {
			res, err := run(s.mode, s.ids, s.size)
			if err != nil {
				return err
			}
			*s.out = append(*s.out, res)
		}
	}
	mem10, err := run("memory10", ten, 0)
	if err != nil {
		return err
	}
	// The same 16 sends through a single slot: memory follows the cap.
	one, err := runScenario(ctx, self, "compose16", base, token, many, 0, 1)
	if err != nil {
		return err
	}
	report(os.Stdout, reps, capN, warm10.SizeBytes, warm16.SizeBytes, p10, c10, mem10, p16, c16, one)
	return nil
}

// startEmulator runs `drivemail emulator` on a free loopback port and
// returns its origin once it listens.
func startEmulator(ctx context.Context, drivemail string) (string, func(), error) {
	cmd := exec.CommandContext(ctx, drivemail, "emulator", "--addr", "127.0.0.1:0")
	cmd.Stderr = io.Discard
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start %s emulator: %w", drivemail, err)
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "listening on ") {
				lines <- strings.TrimPrefix(l, "listening on ")
			}
		}
	}()
	select {
	case base := <-lines:
		return base, stop, nil
	case <-time.After(30 * time.Second):
		stop()
		return "", nil, fmt.Errorf("the emulator did not say where it listens within 30 s")
	}
}

// newUser registers the bench user and mints a token that can upload,
// read Drive and send mail.
func newUser(ctx context.Context, base string) (string, error) {
	body, _ := json.Marshal(map[string]any{"email": benchUser, "scopes": []string{
		"https://www.googleapis.com/auth/drive",
		"https://www.googleapis.com/auth/gmail.send",
		"https://www.googleapis.com/auth/gmail.readonly",
	}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/_emulator/users", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<16)).Decode(&out); err != nil || out.AccessToken == "" {
		return "", fmt.Errorf("register the bench user: HTTP %d", res.StatusCode)
	}
	return out.AccessToken, nil
}

// uploadFiles puts n files of size random bytes into Drive.
func uploadFiles(ctx context.Context, dc *drive.Client, prefix string, n int, size int64) ([]string, error) {
	ids := make([]string, 0, n)
	rng := rand.NewChaCha8([32]byte{byte(n)})
	for i := 0; i < n; i++ {
		f, err := dc.Upload(ctx, drive.NewFile{Name: fmt.Sprintf("%s-%02d.dat", prefix, i), MimeType: "application/octet-stream"},
			io.LimitReader(rng, size))
		if err != nil {
			return nil, fmt.Errorf("upload bench file: %w", err)
		}
		if f.Size != size && f.Size != 0 {
			return nil, fmt.Errorf("uploaded %d bytes, Drive says %d", size, f.Size)
		}
		ids = append(ids, f.ID)
	}
	return ids, nil
}

func runScenario(ctx context.Context, self, mode, base, token string, ids []string, size int64, capN int) (childResult, error) {
	cmd := exec.CommandContext(ctx, self, "-child", mode, "-base", base, "-token", token,
		"-ids", strings.Join(ids, ","), "-size", fmt.Sprint(size), "-cap", fmt.Sprint(capN))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return childResult{}, fmt.Errorf("scenario %s: %w\n%s", mode, err, stderr.String())
	}
	var res childResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return childResult{}, fmt.Errorf("scenario %s: %w", mode, err)
	}
	if res.Failures > 0 {
		return res, fmt.Errorf("scenario %s: %d of %d sends failed\n%s", mode, res.Failures, res.Sends, stderr.String())
	}
	return res, nil
}

func median(rs []childResult, f func(childResult) int64) int64 {
	v := make([]int64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	return v[len(v)/2]
}

func wall(r childResult) int64 { return r.WallNS }
func peak(r childResult) int64 { return r.PeakGrowth }

func report(w io.Writer, reps, capN int, size10, size16 int64, p10, c10 []childResult, mem childResult, p16, c16 []childResult, one childResult) {
	mb := func(n int64) string { return fmt.Sprintf("%6.1f MiB", float64(n)/(1<<20)) }
	sec := func(n int64) string { return fmt.Sprintf("%6.2f s", float64(n)/1e9) }
	verdict := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "MISSED"
	}
	fmt.Fprintf(w, "send benchmark: emulator in a separate process; medians of %d runs; peak RSS growth of the sending process\n", reps)
	if !c10[0].Cleared {
		fmt.Fprintln(w, "(note: /proc/self/clear_refs not writable; peak RSS counts from process start)")
	}

	pw, cw := median(p10, wall), median(c10, wall)
	pr, cr := median(p10, peak), median(c10, peak)
	ratio := float64(cw) / float64(pw)
	fmt.Fprintf(w, "\n10 files, 25 MiB (26,214,400 bytes) of attachments -> %.1f MB message\n", float64(size10)/1e6)
	fmt.Fprintf(w, "  plain client libraries (download all, then upload)  wall %s  peak RSS +%s  (baseline)\n", sec(pw), mb(pr))
	fmt.Fprintf(w, "  drivemail compose (one streaming pass)              wall %s  peak RSS +%s  time x%.2f (target <= %.1f: %s)  RSS x%.2f (target < 20 MiB: %s)\n",
		sec(cw), mb(cr), ratio, targetTime, verdict(ratio <= targetTime), float64(cr)/float64(max(pr, 1)), verdict(cr < targetRSS))
	fmt.Fprintf(w, "  peer building the message in memory                 wall %s  peak RSS +%s  time x%.2f  RSS x%.2f\n",
		sec(mem.WallNS), mb(mem.PeakGrowth), float64(mem.WallNS)/float64(pw), float64(mem.PeakGrowth)/float64(max(pr, 1)))

	pw, cw = median(p16, wall), median(c16, wall)
	pr, cr = median(p16, peak), median(c16, peak)
	ratio = float64(cw) / float64(pw)
	fmt.Fprintf(w, "\n16 concurrent sends of one 5 MiB file (%.1f MB messages), MaxConcurrentSends %d\n", float64(size16)/1e6, capN)
	fmt.Fprintf(w, "  plain client libraries (%d at a time)                wall %s  peak RSS +%s  (baseline)\n", capN, sec(pw), mb(pr))
	fmt.Fprintf(w, "  drivemail compose (16 submitted at once)            wall %s  peak RSS +%s  time x%.2f  RSS x%.2f  failures 0 of %d\n",
		sec(cw), mb(cr), ratio, float64(cr)/float64(max(pr, 1)), manySends)
	fmt.Fprintf(w, "  drivemail compose, MaxConcurrentSends 1 (one run)   wall %s  peak RSS +%s  time x%.2f  RSS x%.2f  failures 0 of %d\n",
		sec(one.WallNS), mb(one.PeakGrowth), float64(one.WallNS)/float64(pw), float64(one.PeakGrowth)/float64(max(pr, 1)), manySends)
}
