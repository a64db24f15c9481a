package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	gdrive "google.golang.org/api/drive/v3"
	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/google"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/mimemsg"
)

type childArgs struct {
	mode, base, token, ids string
	size                   int64
	cap                    int
}

// childResult is one scenario's figures, printed as one JSON line.
type childResult struct {
	Mode       string `json:"mode"`
	WallNS     int64  `json:"wall_ns"`
	PeakGrowth int64  `json:"peak_growth"`
	Cleared    bool   `json:"hwm_cleared"`
	SizeBytes  int64  `json:"size_bytes"`
	Sends      int    `json:"sends"`
	Failures   int    `json:"failures"`
}

const chunkSize = 5 << 20

func runChild(ctx context.Context, a childArgs) error {
	ep := google.Endpoints{Base: a.base}
	hc := oauth2.NewClient(ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: a.token, TokenType: "Bearer"}))
	ids := strings.Split(a.ids, ",")
	ds, err := gdrive.NewService(ctx, append([]option.ClientOption{option.WithHTTPClient(hc)}, ep.DriveOptions()...)...)
	if err != nil {
		return err
	}
	gs, err := gm.NewService(ctx, append([]option.ClientOption{option.WithHTTPClient(hc)}, ep.GmailOptions()...)...)
	if err != nil {
		return err
	}
	svc := compose.New(compose.Config{Endpoints: ep, MaxConcurrentSends: a.cap})

	mark, err := markMemory()
	if err != nil {
		return err
	}
	res := childResult{Mode: a.mode, Cleared: mark.cleared}
	start := time.Now()
	switch a.mode {
	case "plain10":
		res.Sends = 1
		err = plain(ctx, ds, gs, ids, a.size)
	case "compose10":
		res.Sends = 1
		var r compose.Result
		r, err = svc.Send(ctx, hc, request(ids), compose.Options{})
		res.SizeBytes = r.SizeBytes
	case "memory10":
		res.Sends = 1
		res.SizeBytes, err = inMemory(ctx, ds, gs, ids)
	case "plain16":
		res.Sends = len(ids)
		res.Failures = fanOut(len(ids), a.cap, func(i int) error { return plain(ctx, ds, gs, ids[i:i+1], a.size) })
	case "compose16":
		res.Sends = len(ids)
		var mu sync.Mutex
		res.Failures = fanOut(len(ids), len(ids), func(i int) error {
			r, err := svc.Send(ctx, hc, request(ids[i:i+1]), compose.Options{})
			mu.Lock()
			res.SizeBytes = max(res.SizeBytes, r.SizeBytes)
			mu.Unlock()
			return err
		})
	default:
		err = fmt.Errorf("unknown scenario %q", a.mode)
	}
	res.WallNS = time.Since(start).Nanoseconds()
	if err != nil {
		return fmt.Errorf("%s: %w", a.mode, err)
	}
	if res.PeakGrowth, err = peakGrowth(mark); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

func request(ids []string) compose.Request {
	req := compose.Request{To: []string{"bench@example.org"}, Subject: "bench", BodyText: "The files."}
	for _, id := range ids {
		req.Attachments = append(req.Attachments, compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(id)}})
	}
	return req
}

// fanOut runs n tasks, at most limit at a time, and counts failures.
func fanOut(n, limit int, task func(i int) error) int {
	sem := make(chan struct{}, limit)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures int
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := task(i); err != nil {
				fmt.Fprintln(os.Stderr, "sendbench: send failed:", err)
				mu.Lock()
				failures++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failures
}

// plain is what the client libraries do without drivemail: download every
// file, then upload a message of the same encoded size.
func plain(ctx context.Context, ds *gdrive.Service, gs *gm.Service, ids []string, size int64) error {
	for _, id := range ids {
		res, err := ds.Files.Get(id).SupportsAllDrives(true).Context(ctx).Download()
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if err != nil {
			return err
		}
	}
	_, err := gs.Users.Messages.Send("me", &gm.Message{}).Context(ctx).
		Media(newSyntheticMessage(size), googleapi.ContentType("message/rfc822"), googleapi.ChunkSize(chunkSize)).Do()
	return err
}

// inMemory is the peer drivemail is not: every download held in memory,
// the whole message built in a buffer, then uploaded.
func inMemory(ctx context.Context, ds *gdrive.Service, gs *gm.Service, ids []string) (int64, error) {
	m := mimemsg.Message{From: "bench@example.com", To: []string{"bench@example.org"}, Subject: "bench", Text: "The files."}
	for i, id := range ids {
		res, err := ds.Files.Get(id).SupportsAllDrives(true).Context(ctx).Download()
		if err != nil {
			return 0, err
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return 0, err
		}
		m.Attachments = append(m.Attachments, mimemsg.Part{Name: fmt.Sprintf("part-%02d.dat", i), Size: int64(len(b)),
			Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }})
	}
	p, err := mimemsg.Prepare(m)
	if err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	if _, err := p.Stream(ctx, &buf); err != nil {
		return 0, err
	}
	n := int64(buf.Len())
	_, err = gs.Users.Messages.Send("me", &gm.Message{}).Context(ctx).
		Media(bytes.NewReader(buf.Bytes()), googleapi.ContentType("message/rfc822"), googleapi.ChunkSize(chunkSize)).Do()
	return n, err
}

// syntheticMessage generates a valid message of exactly size bytes: a
// few headers and a body of 76-character lines.
type syntheticMessage struct {
	head []byte
	left int64
	line []byte
	pos  int
}

func newSyntheticMessage(size int64) *syntheticMessage {
	head := []byte("From: bench@example.com\r\nTo: bench@example.org\r\nSubject: bench\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\n")
	return &syntheticMessage{head: head, left: size - int64(len(head)), line: []byte(strings.Repeat("QUJD", 19) + "\r\n")}
}

func (s *syntheticMessage) Read(p []byte) (int, error) {
	n := 0
	if len(s.head) > 0 {
		n = copy(p, s.head)
		s.head = s.head[n:]
	}
	for n < len(p) && s.left > 0 {
		c := copy(p[n:], s.line[s.pos:])
		if int64(c) > s.left {
			c = int(s.left)
		}
		s.pos = (s.pos + c) % len(s.line)
		s.left -= int64(c)
		n += c
	}
	if n == 0 && s.left <= 0 {
		return 0, io.EOF
	}
	return n, nil
}

var _ = errors.New
var _ http.Client
