package drive

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
)

// ErrCorrupt: a download's bytes do not match the checksum Drive announced.
var ErrCorrupt = errors.New("download does not match Drive's checksum")

// Download opens a binary file's content. The stream is checked against
// the metadata: ending before f.Size returns ErrTruncated (never a bare
// io.EOF), running past it or failing the MD5 check returns an error too,
// so a caller never mistakes a cut download for a whole one. Drive
// keeping the caller waiting past the idle timeout, for the answer or
// for more bytes, is ErrStalled.
func (c *Client) Download(ctx context.Context, f File) (io.ReadCloser, error) {
	const op = "files.get media"
	if f.Native() {
		return nil, &Error{Op: op, Err: ErrNotDownloadable}
	}
	if !f.CanDownload {
		return nil, &Error{Op: op, Err: ErrNotDownloadable}
	}
	wctx, w := c.watch(ctx)
	call := c.files.Get(f.ID).SupportsAllDrives(true).Context(wctx)
	setResourceKey(call.Header(), f.ID, f.ResourceKey)
	res, err := call.Download()
	w.Pause()
	if err != nil {
		return nil, c.stallFail(w, op, err)
	}
	return newCheckedBody(watchBody(res.Body, w, op), f.Size, f.MD5), nil
}

// checkedBody enforces a download's announced size and MD5.
type checkedBody struct {
	rc   io.ReadCloser
	want int64
	got  int64
	md5  string
	h    hash.Hash
}

func newCheckedBody(rc io.ReadCloser, size int64, md5hex string) *checkedBody {
	b := &checkedBody{rc: rc, want: size, md5: strings.ToLower(md5hex)}
	if b.md5 != "" {
		b.h = md5.New()
	}
	return b
}

func (b *checkedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.got += int64(n)
	if b.h != nil {
		b.h.Write(p[:n])
	}
	if b.got > b.want {
		return n, &Error{Op: "files.get media", Err: fmt.Errorf("got more than the %d bytes announced: %w", b.want, ErrCorrupt)}
	}
	if err == io.EOF {
		if b.got < b.want {
			return n, &Error{Op: "files.get media", Err: fmt.Errorf("%d of %d bytes: %w", b.got, b.want, ErrTruncated)}
		}
		if b.h != nil && hex.EncodeToString(b.h.Sum(nil)) != b.md5 {
			return n, &Error{Op: "files.get media", Err: ErrCorrupt}
		}
	}
	return n, err
}

func (b *checkedBody) Close() error { return b.rc.Close() }
