package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/oauth2"
	gdrive "google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/bench/internal/benchkit"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/internal/google"
)

// The user the emulator's auto-approve signs in (emulator.DemoUser).
const benchUser = "demo@example.com"

// The targets docs/operations.md states for an upload.
const (
	maxGrowth = 32 << 20
	minRatio  = 0.8
)

func run(ctx context.Context, drivemail string, size int64, reps int) error {
	dir, err := os.MkdirTemp("", "uploadbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	emu, err := benchkit.Start(ctx, drivemail, "emulator", "--addr", "127.0.0.1:0", "--auto-approve")
	if err != nil {
		return err
	}
	defer emu.Stop()
	srv, err := benchkit.StartServer(ctx, benchkit.Server{Binary: drivemail, Google: emu.URL,
		Store: "sqlite:" + filepath.Join(dir, "bench.db"), Secret: benchkit.NewSecret(),
		Args: []string{"--max-upload-bytes", strconv.FormatInt(size, 10)}})
	if err != nil {
		return err
	}
	defer srv.Stop()

	clientID, err := benchkit.RegisterClient(ctx, srv.URL, "uploadbench")
	if err != nil {
		return err
	}
	token, err := benchkit.SignIn(ctx, srv.URL, clientID, "")
	if err != nil {
		return fmt.Errorf("sign in to drivemail: %w", err)
	}
	gtoken, err := benchkit.GoogleToken(ctx, emu.URL, benchUser, "https://www.googleapis.com/auth/drive")
	if err != nil {
		return err
	}
	hc := oauth2.NewClient(ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: gtoken}))
	endpoints := google.Endpoints{Base: emu.URL}
	dc, err := drive.New(ctx, hc, endpoints)
	if err != nil {
		return err
	}
	lib, err := gdrive.NewService(ctx, append([]option.ClientOption{option.WithHTTPClient(hc)}, endpoints.DriveOptions()...)...)
	if err != nil {
		return err
	}
	want, err := digest(size)
	if err != nil {
		return err
	}

	// Warm up both paths (the server makes its uploads folder here).
	if _, err := throughServer(ctx, srv.URL, token, dc, 1<<20, ""); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	if _, err := direct(ctx, dc, 1<<20); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	pid := srv.Pid()
	cleared := benchkit.ResetPeak(pid)
	before, _, err := benchkit.Memory(pid)
	if err != nil {
		return err
	}
	var best struct{ library, direct, server time.Duration }
	for i := 0; i < reps; i++ {
		l, err := library(ctx, lib, dc, size)
		if err != nil {
			return fmt.Errorf("library upload: %w", err)
		}
		d, err := direct(ctx, dc, size)
		if err != nil {
			return fmt.Errorf("direct upload: %w", err)
		}
		sc0, _ := benchkit.CPUTime(pid)
		ec0, _ := benchkit.CPUTime(emu.Pid())
		s, err := throughServer(ctx, srv.URL, token, dc, size, want)
		if err != nil {
			return fmt.Errorf("upload through drivemail: %w", err)
		}
		sc1, _ := benchkit.CPUTime(pid)
		ec1, _ := benchkit.CPUTime(emu.Pid())
		fmt.Printf("  run %d: library %.2f s, drive.Client %.2f s, through drivemail %.2f s (CPU: server %.2f s, emulator %.2f s)\n",
			i+1, l.Seconds(), d.Seconds(), s.Seconds(), (sc1 - sc0).Seconds(), (ec1 - ec0).Seconds())
		best.library = fastest(best.library, l)
		best.direct = fastest(best.direct, d)
		best.server = fastest(best.server, s)
	}
	_, peak, err := benchkit.Memory(pid)
	if err != nil {
		return err
	}
	report(os.Stdout, size, reps, best.library, best.direct, best.server, before, peak, cleared)
	return nil
}

func fastest(best, t time.Duration) time.Duration {
	if best == 0 || t < best {
		return t
	}
	return best
}

func report(w io.Writer, size int64, reps int, l, d, s time.Duration, before, peak int64, cleared bool) {
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	rate := func(t time.Duration) float64 { return mib(size) / t.Seconds() }
	verdict := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "MISSED"
	}
	ratio := l.Seconds() / s.Seconds()
	growth := peak - before
	fmt.Fprintf(w, "upload: %.0f MiB, best of %d\n", mib(size), reps)
	fmt.Fprintf(w, "  straight to the emulator, drive/v3 defaults (16 MiB chunks): %6.2f s  %6.1f MiB/s\n", l.Seconds(), rate(l))
	fmt.Fprintf(w, "  straight to the emulator, drive.Client (%d MiB chunks):        %6.2f s  %6.1f MiB/s\n", drive.UploadChunkSize>>20, d.Seconds(), rate(d))
	fmt.Fprintf(w, "  through drivemail serve (POST /upload):                      %6.2f s  %6.1f MiB/s\n", s.Seconds(), rate(s))
	fmt.Fprintf(w, "  throughput ratio to drive/v3 defaults: %.2f (target >= %.1f) %s; to drive.Client: %.2f\n",
		ratio, minRatio, verdict(ratio >= minRatio), d.Seconds()/s.Seconds())
	note := ""
	if !cleared {
		note = ", high-water mark not resettable: measured from the RSS before"
	}
	fmt.Fprintf(w, "  server peak RSS growth: %.1f MiB (target < %d MiB) %s  [RSS before %.1f MiB, peak %.1f MiB%s]\n",
		mib(growth), maxGrowth>>20, verdict(growth < maxGrowth), mib(before), mib(peak), note)
}

// payload yields size bytes: one random MiB, repeated. Cheap to make, so
// the bench measures the upload paths, not the data source.
type payload struct {
	block []byte
	left  int64
	off   int
}

var block = func() []byte {
	b := make([]byte, 1<<20)
	r := rand.NewChaCha8([32]byte{6})
	_, _ = r.Read(b)
	return b
}()

func newPayload(size int64) *payload { return &payload{block: block, left: size} }

func (p *payload) Read(b []byte) (int, error) {
	if p.left == 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	n := copy(b, p.block[p.off:])
	p.off = (p.off + n) % len(p.block)
	p.left -= int64(n)
	return n, nil
}

func digest(size int64) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, newPayload(size)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// library uploads size bytes with the plain drive/v3 client and its
// default media options, then deletes the file.
func library(ctx context.Context, lib *gdrive.Service, dc *drive.Client, size int64) (time.Duration, error) {
	start := time.Now()
	f, err := lib.Files.Create(&gdrive.File{Name: "library.bin"}).Fields("id,size").
		Media(newPayload(size), googleapi.ContentType("application/octet-stream")).Context(ctx).Do()
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	if f.Size != size {
		//lint:ignore ST1005 "Drive" is a name, not a capitalized word
		return 0, fmt.Errorf("Drive stored %d bytes of %d", f.Size, size)
	}
	return took, dc.DeleteFile(ctx, f.Id)
}

// direct uploads size bytes with drive.Client (the server's own Drive
// code, so the same chunk size), then deletes the file.
func direct(ctx context.Context, dc *drive.Client, size int64) (time.Duration, error) {
	start := time.Now()
	f, err := dc.Upload(ctx, drive.NewFile{Name: "direct.bin", MimeType: "application/octet-stream"}, newPayload(size))
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	if f.Size != size {
		//lint:ignore ST1005 "Drive" is a name, not a capitalized word
		return 0, fmt.Errorf("Drive stored %d bytes of %d", f.Size, size)
	}
	return took, dc.DeleteFile(ctx, f.ID)
}

// throughServer POSTs size bytes to /upload, checks the answer (and the
// digest when want is set), then deletes the file.
func throughServer(ctx context.Context, base, token string, dc *drive.Client, size int64, want string) (time.Duration, error) {
	start := time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/upload?name=bench.bin", newPayload(size))
	req.ContentLength = size
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	took := time.Since(start)
	if resp.StatusCode != http.StatusCreated {
		return 0, fmt.Errorf("HTTP %d: %s", resp.StatusCode, body)
	}
	var r struct {
		FileID string `json:"file_id"`
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, err
	}
	if r.Size != size || (want != "" && r.SHA256 != want) {
		return 0, fmt.Errorf("stored %d bytes with sha256 %s, want %s bytes with %s", r.Size, r.SHA256, strconv.FormatInt(size, 10), want)
	}
	return took, dc.DeleteFile(ctx, r.FileID)
}
