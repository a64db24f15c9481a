package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"golang.org/x/oauth2"
	gdrive "google.golang.org/api/drive/v3"
	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/bench/internal/benchkit"
	"github.com/drivemail/drivemail/internal/google"
)

// plain is the Google client libraries used straight, as benchUser: the
// baselines, and the bench's own file uploads.
type plain struct {
	drive *gdrive.Service
	gmail *gm.Service
}

func newPlain(ctx context.Context, emulator string) (*plain, error) {
	tok, err := benchkit.GoogleToken(ctx, emulator, benchUser,
		"https://www.googleapis.com/auth/drive", "https://www.googleapis.com/auth/gmail.send")
	if err != nil {
		return nil, err
	}
	hc := oauth2.NewClient(ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok, TokenType: "Bearer"}))
	ep := google.Endpoints{Base: emulator}
	ds, err := gdrive.NewService(ctx, append([]option.ClientOption{option.WithHTTPClient(hc)}, ep.DriveOptions()...)...)
	if err != nil {
		return nil, err
	}
	gs, err := gm.NewService(ctx, append([]option.ClientOption{option.WithHTTPClient(hc)}, ep.GmailOptions()...)...)
	if err != nil {
		return nil, err
	}
	return &plain{drive: ds, gmail: gs}, nil
}

// uploadFiles puts the bench's files into benchUser's Drive: random
// bytes, so nothing compresses.
func (p *plain) uploadFiles(ctx context.Context) (driveFiles, error) {
	var f driveFiles
	var err error
	rng := rand.NewChaCha8([32]byte{14})
	up := func(prefix string, n int, size int64) ([]string, error) {
		ids := make([]string, 0, n)
		for i := 0; i < n && err == nil; i++ {
			var file *gdrive.File
			file, err = p.drive.Files.Create(&gdrive.File{Name: fmt.Sprintf("%s-%02d.dat", prefix, i), MimeType: "application/octet-stream"}).
				Fields("id,size").Media(io.LimitReader(rng, size), googleapi.ContentType("application/octet-stream")).Context(ctx).Do()
			if err == nil && file.Size != size {
				err = fmt.Errorf("uploaded %d bytes, Drive holds %d", size, file.Size)
			}
			if err == nil {
				ids = append(ids, file.Id)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("upload the bench's %s files: %w", prefix, err)
		}
		return ids, nil
	}
	big, err := up("big", 1, bigSize)
	if err != nil {
		return f, err
	}
	f.big = big[0]
	if f.ten, err = up("ten", tenCount, tenEach); err != nil {
		return f, err
	}
	if f.small, err = up("small", smallCount, smallEach); err != nil {
		return f, err
	}
	f.many, err = up("many", manyCount, manyEach)
	return f, err
}

// download reads a file's content to the end, as drive/v3 gives it.
func (p *plain) download(ctx context.Context, id string) (time.Duration, error) {
	start := time.Now()
	res, err := p.drive.Files.Get(id).SupportsAllDrives(true).Context(ctx).Download()
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// upload sends a message of size bytes with gmail/v1's default media
// options (16 MiB chunks).
func (p *plain) upload(ctx context.Context, size int64) (time.Duration, error) {
	start := time.Now()
	_, err := p.gmail.Users.Messages.Send("me", &gm.Message{}).Context(ctx).
		Media(benchkit.NewSyntheticMessage(size, "bench@example.org"), googleapi.ContentType("message/rfc822")).Do()
	return time.Since(start), err
}

// baselines are the plain figures of every run.
type baselines struct {
	bigDown, bigUp, tenDown, tenUp []time.Duration
	bigSize, tenSize               int64
}

// measure runs each baseline once; the uploads are as large as the
// messages drivemail sent.
func (p *plain) measure(ctx context.Context, files driveFiles, bigSize, tenSize int64, b *baselines) error {
	d, err := p.download(ctx, files.big)
	if err != nil {
		return fmt.Errorf("download 25 MiB: %w", err)
	}
	u, err := p.upload(ctx, bigSize)
	if err != nil {
		return fmt.Errorf("upload %d bytes: %w", bigSize, err)
	}
	var sum time.Duration
	for _, id := range files.ten {
		t, err := p.download(ctx, id)
		if err != nil {
			return fmt.Errorf("download one of 10: %w", err)
		}
		sum += t
	}
	tu, err := p.upload(ctx, tenSize)
	if err != nil {
		return fmt.Errorf("upload %d bytes: %w", tenSize, err)
	}
	b.bigDown, b.bigUp = append(b.bigDown, d), append(b.bigUp, u)
	b.tenDown, b.tenUp = append(b.tenDown, sum), append(b.tenUp, tu)
	b.bigSize, b.tenSize = bigSize, tenSize
	return nil
}
