package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	gmailapi "google.golang.org/api/gmail/v1"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/bench/internal/benchkit"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/internal/google"
)

const email = "bench@example.com"

var scopes = []string{
	"https://www.googleapis.com/auth/drive",
	"https://www.googleapis.com/auth/gmail.send",
	"https://www.googleapis.com/auth/gmail.readonly",
}

// content is the deterministic stream of a file: n bytes from seed.
func content(seed uint64, n int64) io.Reader {
	return io.LimitReader(&prng{r: rand.New(rand.NewPCG(seed, seed))}, n)
}

type prng struct{ r *rand.Rand }

func (p *prng) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = byte(p.r.Uint32())
	}
	return len(b), nil
}

func digest(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

func run(ctx context.Context, drivemail string, mib int, out io.Writer) error {
	size := int64(mib) << 20
	emu, err := benchkit.StartEmulator(ctx, drivemail)
	if err != nil {
		return err
	}
	defer emu.Stop()
	token, err := benchkit.GoogleToken(ctx, emu.URL, email, scopes...)
	if err != nil {
		return err
	}
	endpoints, err := google.Parse(emu.URL)
	if err != nil {
		return err
	}
	hc := oauth2.NewClient(ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}))

	// The baseline's Drive file, and the client file's host.
	dc, err := drive.New(ctx, hc, endpoints)
	if err != nil {
		return err
	}
	df, err := dc.Upload(ctx, drive.NewFile{Name: "bench.bin", MimeType: "application/octet-stream"}, content(1, size))
	if err != nil {
		return fmt.Errorf("seed the Drive file: %w", err)
	}
	host := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		_, _ = io.Copy(w, content(2, size))
	}))
	defer host.Close()
	want := map[string]string{}
	if want["drive"], err = digest(content(1, size)); err != nil {
		return err
	}
	if want["client"], err = digest(content(2, size)); err != nil {
		return err
	}
	port := host.URL[strings.LastIndex(host.URL, ":")+1:]
	j := job{Emulator: emu.URL, Token: token, Email: email,
		CAPEM:     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: host.Certificate().Raw}),
		FileURL:   "https://files.example.com:" + port + "/file-bench?se=2030&sig=bench",
		DriveFile: df.ID}
	figures, err := runSender(ctx, j)
	if err != nil {
		return err
	}
	gm, err := gmailapi.NewService(ctx, append(endpoints.GmailOptions(), option.WithHTTPClient(hc))...)
	if err != nil {
		return err
	}
	byName := map[string]figure{}
	for _, f := range figures {
		if f.Err != "" {
			return fmt.Errorf("%s send: %s", f.Name, f.Err)
		}
		got, err := attachmentDigest(ctx, gm, f.MessageID)
		if err != nil {
			return fmt.Errorf("%s send: read it back: %w", f.Name, err)
		}
		if got != want[f.Name] {
			return fmt.Errorf("%s send: the attachment Gmail has is not the file served (sha256 %s, want %s)", f.Name, got, want[f.Name])
		}
		byName[f.Name] = f
	}
	c, d := byName["client"], byName["drive"]
	fmt.Fprintf(out, "%d MiB into one message, the sender in its own process (bytes read back from Gmail and checked: both match)\n", mib)
	fmt.Fprintf(out, "  %-26s %8s %14s\n", "", "time", "peak RSS +")
	fmt.Fprintf(out, "  %-26s %8s %11.1f MiB\n", "Drive file (baseline)", d.Took.Round(10*time.Millisecond), float64(d.Growth)/(1<<20))
	fmt.Fprintf(out, "  %-26s %8s %11.1f MiB   goal < 20 MiB: %s\n", "client file (files arg)", c.Took.Round(10*time.Millisecond), float64(c.Growth)/(1<<20), verdict(c.Growth < 20<<20))
	fmt.Fprintf(out, "  client / Drive time: %.2f\n", float64(c.Took)/float64(d.Took))
	if !c.Cleared {
		fmt.Fprintln(out, "  (the kernel would not reset the high-water mark: growth counts from the child's start)")
	}
	return nil
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}

// runSender runs this binary as the child with the job on its stdin.
func runSender(ctx context.Context, j job) ([]figure, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(j)
	cmd := exec.CommandContext(ctx, self, "-child")
	cmd.Stdin = bytes.NewReader(b)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("sender: %w", err)
	}
	var figures []figure
	dec := json.NewDecoder(bytes.NewReader(stdout))
	for dec.More() {
		var f figure
		if err := dec.Decode(&f); err != nil {
			return nil, err
		}
		figures = append(figures, f)
	}
	if len(figures) != 2 {
		return nil, fmt.Errorf("sender reported %d sends, want 2", len(figures))
	}
	return figures, nil
}

// attachmentDigest is the sha256 of the one attachment of a sent message.
func attachmentDigest(ctx context.Context, gm *gmailapi.Service, id string) (string, error) {
	m, err := gm.Users.Messages.Get("me", id).Format("raw").Context(ctx).Do()
	if err != nil {
		return "", err
	}
	raw, err := base64.URLEncoding.DecodeString(m.Raw)
	if err != nil {
		return "", err
	}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return "", err
	}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return "", err
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if err != nil {
			return "", errors.New("no attachment part")
		}
		if strings.HasPrefix(p.Header.Get("Content-Disposition"), "attachment") {
			return digest(base64.NewDecoder(base64.StdEncoding, &noCRLF{r: p}))
		}
	}
}

// noCRLF drops the line breaks of a base64 body.
type noCRLF struct{ r io.Reader }

func (n *noCRLF) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	j := 0
	for _, c := range p[:k] {
		if c != '\r' && c != '\n' {
			p[j] = c
			j++
		}
	}
	return j, err
}
