package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	gdrive "google.golang.org/api/drive/v3"
	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"

	"github.com/drivemail/drivemail/bench/internal/benchkit"
)

// plain is the Google client libraries used straight, as benchUser: the
// baselines, and the bench's own file uploads.
type plain struct {
	drive    *gdrive.Service
	gmail    *gm.Service
	hc       *http.Client
	emulator string
}

func newPlain(ctx context.Context, emulator string) (*plain, error) {
	ds, gs, hc, err := benchkit.PlainServices(ctx, emulator, benchUser)
	if err != nil {
		return nil, err
	}
	return &plain{drive: ds, gmail: gs, hc: hc, emulator: emulator}, nil
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

// download reads a file's content to the end, as drive/v3 gives it, and
// says how long that took and how long its first byte did.
func (p *plain) download(ctx context.Context, id string) (took, firstByte time.Duration, err error) {
	start := time.Now()
	res, err := p.drive.Files.Get(id).SupportsAllDrives(true).Context(ctx).Download()
	if err != nil {
		return 0, 0, err
	}
	defer res.Body.Close()
	firstByte = time.Since(start)
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return 0, 0, err
	}
	return time.Since(start), firstByte, nil
}

// metadata reads a file's metadata, as a send does before it downloads.
func (p *plain) metadata(ctx context.Context, id string) (time.Duration, error) {
	start := time.Now()
	_, err := p.drive.Files.Get(id).SupportsAllDrives(true).Fields("id,name,mimeType,size,md5Checksum").Context(ctx).Do()
	return time.Since(start), err
}

// uploads are the plain upload of one message, timed each way a
// competent user of gmail/v1 would pick from: in one request
// (googleapi.ChunkSize(0), a multipart upload) and in the library's
// default 16 MiB chunks (resumable).
type uploads struct {
	one, chunked time.Duration
	size         int64
}

// best is the faster of the two: the plain upload a send is held to.
func (u uploads) best() time.Duration { return min(u.one, u.chunked) }

// upload sends the message Gmail holds as id again, byte for byte, in
// one request and in 16 MiB chunks: the same bytes for Gmail to receive,
// store and parse as drivemail's send gave it. Reading the message back
// is not timed.
func (p *plain) upload(ctx context.Context, id string) (uploads, error) {
	m, err := p.gmail.Users.Messages.Get("me", id).Format("raw").Context(ctx).Do()
	if err != nil {
		return uploads{}, fmt.Errorf("read message %s back: %w", id, err)
	}
	raw, err := base64.URLEncoding.DecodeString(m.Raw)
	if err != nil {
		return uploads{}, fmt.Errorf("message %s: %w", id, err)
	}
	m = nil
	u := uploads{size: int64(len(raw))}
	for _, w := range []struct {
		took  *time.Duration
		chunk int
	}{{&u.one, 0}, {&u.chunked, googleapi.DefaultUploadChunkSize}} {
		start := time.Now()
		_, err = p.gmail.Users.Messages.Send("me", &gm.Message{}).Context(ctx).
			Media(bytes.NewReader(raw), googleapi.ChunkSize(w.chunk), googleapi.ContentType("message/rfc822")).Do()
		if err != nil {
			return uploads{}, err
		}
		*w.took = time.Since(start)
	}
	return u, nil
}

// parallelDownloads reads the files at once, each to its end, and says
// how long the last took: the plain client that fetches several files
// for one message.
func (p *plain) parallelDownloads(ctx context.Context, ids []string) (time.Duration, error) {
	start := time.Now()
	errs := make(chan error, len(ids))
	for _, id := range ids {
		go func() {
			_, _, err := p.download(ctx, id)
			errs <- err
		}()
	}
	var first error
	for range ids {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return time.Since(start), first
}

// openSession times the request that opens a Gmail upload session (then
// cancels the session): a send opens its own while it waits for Drive,
// so a plain upload's includes one round trip a send does not wait for.
func (p *plain) openSession(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.emulator+"/upload/gmail/v1/users/me/messages/send?uploadType=resumable", strings.NewReader("{}"))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	req.Header.Set("X-Upload-Content-Type", "message/rfc822")
	res, err := p.hc.Do(req)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	took := time.Since(start)
	if res.StatusCode != http.StatusOK || res.Header.Get("Location") == "" {
		return 0, fmt.Errorf("open an upload session: HTTP %d", res.StatusCode)
	}
	if req, err = http.NewRequestWithContext(ctx, http.MethodDelete, res.Header.Get("Location"), nil); err != nil {
		return 0, err
	}
	if res, err = p.hc.Do(req); err != nil {
		return 0, err
	}
	res.Body.Close()
	return took, nil
}

// baselines are the plain figures of every run. meta and firstByte are
// what any send waits before it has a byte for Gmail: the metadata call
// and the download's first byte, which a send may overlap; open is the
// request that opens an upload session (a send opens its own meanwhile).
// Each upload is in one request (one) and in 16 MiB chunks (chunked).
type baselines struct {
	bigDown, tenDownSum, tenDownPar          []time.Duration
	bigUp, bigUpChunked, tenUp, tenUpChunked []time.Duration
	small10Up, small1Up                      []time.Duration
	meta, firstByte, open                    []time.Duration
	bigSize, tenSize                         int64
}

// sent are the Gmail ids of the messages a server sent in one run, which
// the plain uploads send again.
type sent struct{ big, ten, small10, small1 string }

// measure runs each baseline once; the uploads are of the messages
// drivemail sent.
func (p *plain) measure(ctx context.Context, files driveFiles, msgs sent, b *baselines) error {
	m, err := p.metadata(ctx, files.big)
	if err != nil {
		return fmt.Errorf("metadata of 25 MiB: %w", err)
	}
	d, first, err := p.download(ctx, files.big)
	if err != nil {
		return fmt.Errorf("download 25 MiB: %w", err)
	}
	big, err := p.upload(ctx, msgs.big)
	if err != nil {
		return fmt.Errorf("upload the 25 MiB message: %w", err)
	}
	o, err := p.openSession(ctx)
	if err != nil {
		return err
	}
	var sum time.Duration
	for _, id := range files.ten {
		t, _, err := p.download(ctx, id)
		if err != nil {
			return fmt.Errorf("download one of 10: %w", err)
		}
		sum += t
	}
	par, err := p.parallelDownloads(ctx, files.ten)
	if err != nil {
		return fmt.Errorf("download 10 at once: %w", err)
	}
	ten, err := p.upload(ctx, msgs.ten)
	if err != nil {
		return fmt.Errorf("upload the 10-file message: %w", err)
	}
	s10, err := p.upload(ctx, msgs.small10)
	if err != nil {
		return fmt.Errorf("upload the 10-small-file message: %w", err)
	}
	s1, err := p.upload(ctx, msgs.small1)
	if err != nil {
		return fmt.Errorf("upload the small message: %w", err)
	}
	b.bigDown, b.bigUp, b.bigUpChunked = append(b.bigDown, d), append(b.bigUp, big.one), append(b.bigUpChunked, big.chunked)
	b.meta, b.firstByte, b.open = append(b.meta, m), append(b.firstByte, first), append(b.open, o)
	b.tenDownSum, b.tenDownPar = append(b.tenDownSum, sum), append(b.tenDownPar, par)
	b.tenUp, b.tenUpChunked = append(b.tenUp, ten.one), append(b.tenUpChunked, ten.chunked)
	b.small10Up, b.small1Up = append(b.small10Up, s10.best()), append(b.small1Up, s1.best())
	b.bigSize, b.tenSize = big.size, ten.size
	return nil
}
