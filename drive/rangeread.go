package drive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// RangeReader reads parts of a binary file with HTTP Range requests, so an
// archive's directory can be checked without downloading the archive. It
// is an io.ReaderAt with a budget: at most maxReads requests and maxBytes
// bytes in all, after which ReadAt fails with ErrRangeBudget.
type RangeReader struct {
	c    *Client
	ctx  context.Context
	f    File
	mu   sync.Mutex
	left int
	room int64
}

// RangeReader returns a budgeted io.ReaderAt over f's content. The
// context is kept for the reads, as io.ReaderAt has no place for one.
func (c *Client) RangeReader(ctx context.Context, f File, maxReads int, maxBytes int64) *RangeReader {
	return &RangeReader{c: c, ctx: ctx, f: f, left: maxReads, room: maxBytes}
}

// Size is the file's size, which io.ReaderAt users need with it.
func (r *RangeReader) Size() int64 { return r.f.Size }

// ReadAt reads len(p) bytes at off with one Range request.
func (r *RangeReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("drive range read: negative offset")
	}
	if off >= r.f.Size {
		return 0, io.EOF
	}
	want := int64(len(p))
	if rest := r.f.Size - off; want > rest {
		want = rest
	}
	if want == 0 {
		return 0, nil
	}
	if err := r.spend(want); err != nil {
		return 0, err
	}
	if r.f.Native() || !r.f.CanDownload {
		return 0, &Error{Op: "files.get range", Err: ErrNotDownloadable}
	}
	const op = "files.get range"
	wctx, w := r.c.watch(r.ctx)
	call := r.c.files.Get(r.f.ID).SupportsAllDrives(true).Context(wctx)
	setResourceKey(call.Header(), r.f.ID, r.f.ResourceKey)
	call.Header().Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+want-1))
	res, err := call.Download()
	w.Pause()
	if err != nil {
		return 0, r.c.stallFail(w, op, err)
	}
	body := watchBody(res.Body, w, op)
	defer body.Close()
	if res.StatusCode != 206 && !(res.StatusCode == 200 && off == 0 && want == r.f.Size) {
		// A 200 means the Range was ignored: the body is the whole file,
		// which this reader must not pull.
		return 0, &Error{Op: op, Code: res.StatusCode, Err: fmt.Errorf("range not honoured")}
	}
	n, err := io.ReadFull(body, p[:want])
	if errors.Is(err, ErrStalled) {
		return n, err
	}
	if err != nil {
		return n, &Error{Op: op, Err: fmt.Errorf("%d of %d bytes: %w", n, want, ErrTruncated)}
	}
	if int64(n) < int64(len(p)) {
		return n, io.EOF
	}
	return n, nil
}

func (r *RangeReader) spend(n int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.left <= 0 || n > r.room {
		return &Error{Op: "files.get range", Err: ErrRangeBudget}
	}
	r.left--
	r.room -= n
	return nil
}
