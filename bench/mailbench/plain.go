package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"time"

	gdrive "google.golang.org/api/drive/v3"
	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"

	"github.com/drivemail/drivemail/bench/internal/benchkit"
)

// plain is the Google client libraries used straight, as benchUser.
type plain struct {
	drive *gdrive.Service
	gmail *gm.Service
}

func newPlain(ctx context.Context, emulator string) (*plain, error) {
	ds, gs, _, err := benchkit.PlainServices(ctx, emulator, benchUser)
	if err != nil {
		return nil, err
	}
	return &plain{drive: ds, gmail: gs}, nil
}

// measure runs each baseline once: the attachment fetched as gmail/v1
// gives it, a message as large as the forward sent, and the attachment's
// bytes uploaded into Drive.
func (p *plain) measure(ctx context.Context, msgID string, sentSize int64, f *figures) error {
	m, err := p.gmail.Users.Messages.Get("me", msgID).Context(ctx).Do()
	if err != nil {
		return err
	}
	attID := ""
	for _, part := range m.Payload.Parts {
		if part.Filename == attName && part.Body != nil {
			attID = part.Body.AttachmentId
		}
	}
	if attID == "" {
		return fmt.Errorf("message %s has no %s", msgID, attName)
	}
	start := time.Now()
	body, err := p.gmail.Users.Messages.Attachments.Get("me", msgID, attID).Context(ctx).Do()
	if err != nil {
		return err
	}
	data, err := base64.URLEncoding.DecodeString(body.Data)
	if err != nil {
		return err
	}
	get := time.Since(start)
	if len(data) != attSize {
		return fmt.Errorf("attachments.get gave %d bytes, want %d", len(data), attSize)
	}

	// Each upload in one request (googleapi.ChunkSize(0)) and in the
	// libraries' default 16 MiB chunks: a competent user picks the faster.
	var send, sendChunked, upload, uploadChunked time.Duration
	for _, w := range []struct {
		send, upload *time.Duration
		chunk        int
	}{{&send, &upload, 0}, {&sendChunked, &uploadChunked, googleapi.DefaultUploadChunkSize}} {
		start = time.Now()
		if _, err := p.gmail.Users.Messages.Send("me", &gm.Message{}).Context(ctx).
			Media(benchkit.NewSyntheticMessage(sentSize, "archive@example.org"), googleapi.ChunkSize(w.chunk), googleapi.ContentType("message/rfc822")).Do(); err != nil {
			return fmt.Errorf("messages.send: %w", err)
		}
		*w.send = time.Since(start)
		start = time.Now()
		if _, err := p.drive.Files.Create(&gdrive.File{Name: attName, MimeType: "application/octet-stream"}).
			Media(bytes.NewReader(data), googleapi.ChunkSize(w.chunk), googleapi.ContentType("application/octet-stream")).Context(ctx).Do(); err != nil {
			return fmt.Errorf("files.create: %w", err)
		}
		*w.upload = time.Since(start)
	}
	f.get = append(f.get, get)
	f.send, f.sendChunked = append(f.send, send), append(f.sendChunked, sendChunked)
	f.upload, f.uploadChunked = append(f.upload, upload), append(f.uploadChunked, uploadChunked)
	return nil
}
