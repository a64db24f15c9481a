package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/drivemail/drivemail/bench/internal/benchkit"
)

type config struct {
	drivemail, profile string
	reps               int
}

// The user, and the attachment every figure moves.
const (
	benchUser = "bench@example.com"
	attName   = "survey-scans.bin"
	attSize   = 20 << 20
	goalRatio = 1.3
	goalRSS   = 20 << 20
	mib       = 1 << 20
)

// figures are the runs' measurements.
type figures struct {
	forward, save, get, send, upload []time.Duration
	rssForward, rssSave              []int64
	sentSize                         int64
	cleared                          bool
}

func run(ctx context.Context, c config, out io.Writer) (bool, error) {
	dir, err := os.MkdirTemp("", "mailbench")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	emu, err := benchkit.StartEmulator(ctx, c.drivemail)
	if err != nil {
		return false, err
	}
	defer emu.Stop()
	if err := deliver(ctx, emu.URL); err != nil {
		return false, err
	}
	p, err := newPlain(ctx, emu.URL)
	if err != nil {
		return false, err
	}
	spec := benchkit.Server{Binary: c.drivemail, Google: emu.URL, Secret: benchkit.NewSecret(),
		Store: "sqlite:" + filepath.Join(dir, "mail.db"), Args: []string{"--read-mail"}}
	s := &server{spec: spec}
	if err := s.signIn(ctx); err != nil {
		return false, err
	}
	defer s.stop()
	msgID, err := s.find(ctx)
	if err != nil {
		return false, err
	}
	profile, err := benchkit.SetWAN(ctx, emu.URL, c.profile)
	if err != nil {
		return false, err
	}
	var f figures
	for rep := 0; rep < c.reps; rep++ {
		if err := s.measure(ctx, msgID, &f); err != nil {
			return false, err
		}
		if err := p.measure(ctx, msgID, f.sentSize, &f); err != nil {
			return false, fmt.Errorf("baselines: %w", err)
		}
	}
	return report(out, c, profile, f), nil
}

// deliver puts a message with a 20 MiB attachment of random bytes (so
// nothing compresses) into the bench user's inbox, streamed.
func deliver(ctx context.Context, emulator string) error {
	pr, pw := io.Pipe()
	go func() {
		head := "From: Surveyor <survey@example.org>\r\nTo: " + benchUser + "\r\nSubject: Survey scans\r\nMessage-ID: <survey@example.org>\r\n" +
			"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nThe scans.\r\n" +
			"--B\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"" + attName + "\"\r\nContent-Transfer-Encoding: base64\r\n\r\n"
		_, err := io.WriteString(pw, head)
		if err == nil {
			err = writeBase64Lines(pw, io.LimitReader(rand.NewChaCha8([32]byte{15}), attSize))
		}
		if err == nil {
			_, err = io.WriteString(pw, "\r\n--B--\r\n")
		}
		pw.CloseWithError(err)
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, emulator+"/_emulator/gmail/inbox?user="+benchUser, pr)
	req.Header.Set("Content-Type", "message/rfc822")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("deliver the bench message: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("deliver the bench message: %s", resp.Status)
	}
	return nil
}

// writeBase64Lines writes r as base64 in lines of 76 characters.
func writeBase64Lines(w io.Writer, r io.Reader) error {
	buf := make([]byte, 57*1024)
	line := make([]byte, base64.StdEncoding.EncodedLen(len(buf))+2*1024)
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			enc := base64.StdEncoding.EncodeToString(buf[:n])
			line = line[:0]
			for len(enc) > 76 {
				line = append(append(line, enc[:76]...), '\r', '\n')
				enc = enc[76:]
			}
			line = append(append(line, enc...), '\r', '\n')
			if _, werr := w.Write(line); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// server is the drivemail serve under test, signed in as benchUser.
type server struct {
	spec  benchkit.Server
	proc  *benchkit.Proc
	token string
	cs    *mcp.ClientSession
}

func (s *server) signIn(ctx context.Context) error {
	proc, err := benchkit.StartServer(ctx, s.spec)
	if err != nil {
		return err
	}
	s.proc = proc
	s.spec.Addr = strings.TrimPrefix(proc.URL, "http://")
	clientID, err := benchkit.RegisterClient(ctx, proc.URL, "mailbench")
	if err != nil {
		return err
	}
	if s.token, err = benchkit.SignIn(ctx, proc.URL, clientID, benchUser); err != nil {
		return fmt.Errorf("sign in: %w", err)
	}
	s.cs, err = benchkit.Connect(ctx, benchkit.Transport(4), s.token, proc.URL)
	return err
}

func (s *server) stop() {
	if s.cs != nil {
		_ = s.cs.Close()
		s.cs = nil
	}
	if s.proc != nil {
		s.proc.Stop()
		s.proc = nil
	}
}

// restart gives a fresh server process (the store keeps the sign-in),
// warmed by a search, so a peak RSS growth is the call's alone.
func (s *server) restart(ctx context.Context) error {
	s.stop()
	proc, err := benchkit.StartServer(ctx, s.spec)
	if err != nil {
		return err
	}
	s.proc = proc
	if s.cs, err = benchkit.Connect(ctx, benchkit.Transport(4), s.token, proc.URL); err != nil {
		return err
	}
	_, err = s.find(ctx)
	return err
}

// find is the bench message's id, through search_mail.
func (s *server) find(ctx context.Context) (string, error) {
	_, res, err := benchkit.Call(ctx, s.cs, "search_mail", map[string]any{"query": "in:inbox filename:" + attName})
	if err != nil {
		return "", err
	}
	msgs, _ := res["messages"].([]any)
	if len(msgs) != 1 {
		return "", fmt.Errorf("search_mail found %d messages, want the bench's one: %v", len(msgs), res)
	}
	id, _ := msgs[0].(map[string]any)["id"].(string)
	return id, nil
}

// measure forwards the message and saves its attachment, each on a fresh
// server with its peak RSS growth.
func (s *server) measure(ctx context.Context, msgID string, f *figures) error {
	if err := s.restart(ctx); err != nil {
		return err
	}
	mark, err := benchkit.MarkPeak(s.proc.Pid())
	if err != nil {
		return err
	}
	took, res, err := benchkit.Call(ctx, s.cs, "send_email", map[string]any{"forward": msgID, "to": "archive@example.org", "body_text": "The scans."})
	if err != nil {
		return fmt.Errorf("forward: %w", err)
	}
	growth, err := mark.Growth()
	if err != nil {
		return err
	}
	size, _ := res["size_bytes"].(float64)
	attached, _ := res["attached"].([]any)
	if size <= attSize || len(attached) != 1 || attached[0].(map[string]any)["bytes"].(float64) != attSize {
		return fmt.Errorf("forward sent %v bytes with %v, want the %d-byte attachment", size, attached, attSize)
	}
	f.forward, f.rssForward, f.sentSize, f.cleared = append(f.forward, took), append(f.rssForward, growth), int64(size), mark.Cleared

	if err := s.restart(ctx); err != nil {
		return err
	}
	if mark, err = benchkit.MarkPeak(s.proc.Pid()); err != nil {
		return err
	}
	took, res, err = benchkit.Call(ctx, s.cs, "save_to_drive", map[string]any{"message_id": msgID, "attachment": attName})
	if err != nil {
		return fmt.Errorf("save_to_drive: %w", err)
	}
	if growth, err = mark.Growth(); err != nil {
		return err
	}
	if saved, _ := res["size"].(float64); saved != attSize {
		return fmt.Errorf("save_to_drive saved %v bytes, want %d", saved, attSize)
	}
	f.save, f.rssSave = append(f.save, took), append(f.rssSave, growth)
	return nil
}

func median(v []time.Duration) time.Duration {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// report prints the figures and says whether each met its goal.
func report(w io.Writer, c config, profile string, f figures) bool {
	fw := ratio(median(f.forward), median(f.get)+median(f.send))
	sv := ratio(median(f.save), median(f.get)+median(f.upload))
	rf, rs := slices.Max(f.rssForward), slices.Max(f.rssSave)
	rows := []struct {
		figure, goal, value string
		ok                  bool
	}{
		{"forward 20 MiB Gmail attachment: time / (get + send)", fmt.Sprintf("<= %.1f", goalRatio), fmt.Sprintf("%.2f", fw), fw <= goalRatio},
		{"forward: peak RSS growth of the server", fmt.Sprintf("< %d MiB", goalRSS>>20), fmt.Sprintf("%.1f MiB", float64(rf)/mib), rf < goalRSS},
		{"save_to_drive 20 MiB: time / (get + Drive upload)", fmt.Sprintf("<= %.1f", goalRatio), fmt.Sprintf("%.2f", sv), sv <= goalRatio},
		{"save_to_drive: peak RSS growth of the server", fmt.Sprintf("< %d MiB", goalRSS>>20), fmt.Sprintf("%.1f MiB", float64(rs)/mib), rs < goalRSS},
	}
	fmt.Fprintf(w, "mail benchmark: drivemail serve --read-mail against drivemail emulator (%s), separate processes; WAN profile %s; medians of %d runs, RSS the worst run\n\n",
		c.drivemail, profile, c.reps)
	fmt.Fprintf(w, "| %-54s | %-9s | %-9s | %-6s |\n|%s|%s|%s|%s|\n", "figure", "goal", "measured", "pass",
		strings.Repeat("-", 56), strings.Repeat("-", 11), strings.Repeat("-", 11), strings.Repeat("-", 8))
	all := true
	for _, r := range rows {
		v := "ok"
		if !r.ok {
			v, all = "MISSED", false
		}
		fmt.Fprintf(w, "| %-54s | %-9s | %-9s | %-6s |\n", r.figure, r.goal, r.value, v)
	}
	fmt.Fprintf(w, "\ntimes: forward %s (message %.1f MiB), save_to_drive %s; plain attachments.get %s, messages.send %s, Drive files.create %s\n",
		median(f.forward).Round(time.Millisecond), float64(f.sentSize)/mib, median(f.save).Round(time.Millisecond),
		median(f.get).Round(time.Millisecond), median(f.send).Round(time.Millisecond), median(f.upload).Round(time.Millisecond))
	if !f.cleared {
		fmt.Fprintln(w, "note: the kernel did not let the peak RSS be reset; growth counts from each server's start")
	}
	return all
}
