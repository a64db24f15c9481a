package drive

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/drivemail/drivemail/google"
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
	w := c.watch(ctx)
	call := c.files.Get(f.ID).SupportsAllDrives(true).Context(w.ctx)
	setResourceKey(call.Header(), f.ID, f.ResourceKey)
	res, err := call.Download()
	w.pause()
	if err != nil {
		return nil, w.fail(op, err)
	}
	return newCheckedBody(watchBody(res.Body, w, op), f.Size, f.MD5), nil
}

// Export opens a native file rendered as mimeType. With tab set (csv or
// tsv of a spreadsheet) it reads the spreadsheet's export link with that
// tab's gid, since files.export only renders the first tab. Past
// files.export's 10 MB cap it falls back to f.ExportLinks[mimeType], which
// has no cap. The size of an export is unknown until it ends.
func (c *Client) Export(ctx context.Context, f File, mimeType string, tab *Sheet) (io.ReadCloser, error) {
	if !f.CanDownload {
		return nil, &Error{Op: "files.export", Err: ErrNotDownloadable}
	}
	if tab != nil {
		return c.exportLink(ctx, f, mimeType, tab)
	}
	w := c.watch(ctx)
	call := c.files.Export(f.ID, mimeType).Context(w.ctx)
	setResourceKey(call.Header(), f.ID, f.ResourceKey)
	res, err := call.Download()
	w.pause()
	if err == nil {
		return watchBody(res.Body, w, "files.export"), nil
	}
	err = w.fail("files.export", err)
	if !errors.Is(err, ErrExportTooLarge) {
		return nil, err
	}
	return c.exportLink(ctx, f, mimeType, nil)
}

// exportLink GETs f.ExportLinks[mimeType] (with gid for a tab) with the
// user's credentials, after checking the link points at Google (or the
// emulator) so the token never goes elsewhere.
func (c *Client) exportLink(ctx context.Context, f File, mimeType string, tab *Sheet) (io.ReadCloser, error) {
	const op = "export link"
	raw, ok := f.ExportLinks[mimeType]
	if !ok {
		return nil, &Error{Op: op, Err: fmt.Errorf("no export link for %s: %w", mimeType, ErrNotDownloadable)}
	}
	u, err := c.checkExportLink(raw)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	if tab != nil {
		q := u.Query()
		q.Set("gid", strconv.FormatInt(tab.ID, 10))
		u.RawQuery = q.Encode()
	}
	w := c.watch(ctx)
	req, err := http.NewRequestWithContext(w.ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		w.stop()
		return nil, &Error{Op: op, Err: google.WithoutURL(err)}
	}
	setResourceKey(req.Header, f.ID, f.ResourceKey)
	res, err := c.http.Do(req)
	w.pause()
	if err != nil {
		stalled := w.stalled()
		w.stop()
		switch {
		case stalled:
			return nil, w.err(op)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		return nil, &Error{Op: op, Err: google.WithoutURL(err)}
	}
	if res.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		res.Body.Close()
		w.stop()
		return nil, statusErr(op, res.StatusCode)
	}
	return watchBody(res.Body, w, op), nil
}

// checkExportLink refuses a link the user's token may not go to
// (google.Endpoints.TokenAllowed, which the user's transport enforces
// again on every redirect hop).
func (c *Client) checkExportLink(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, ErrBadExportLink
	}
	if err := c.endpoints.TokenAllowed(u); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadExportLink, err)
	}
	return u, nil
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
