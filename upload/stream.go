package upload

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/drivemail/drivemail/internal/stream"
)

// content is the file's bytes on their way to Drive: it counts and hashes
// them, enforces the size limit and what a ticket declared, and only at
// the true end of the file says io.EOF. Any failure (too large, a digest
// that does not match, a client that went away, a trailing part that is
// not allowed) is returned from Read instead of io.EOF, which makes the
// Drive client abandon the upload before its final chunk: nothing is
// created. The first failure is kept for the handler to answer with.
type content struct {
	r        io.Reader
	h        hash.Hash
	n        int64
	max      int64
	wantSize int64  // -1: not declared
	wantSHA  string // "": not declared
	// atEnd runs when the file's bytes end, before io.EOF is passed on
	// (a multipart body checks that nothing but the end follows).
	atEnd  func() error
	failed *Error
	sum    string
}

func newContent(r io.Reader, max, wantSize int64, wantSHA string, atEnd func() error) *content {
	return &content{r: r, h: sha256.New(), max: max, wantSize: wantSize, wantSHA: wantSHA, atEnd: atEnd}
}

func (c *content) Read(p []byte) (int, error) {
	if c.failed != nil {
		return 0, c.failed
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.h.Write(p[:n])
	switch {
	case c.n > c.max:
		return n, c.fail(tooLarge(c.max))
	case c.wantSize >= 0 && c.n > c.wantSize:
		return n, c.fail(refuse(http.StatusUnprocessableEntity, kindSizeMismatch, "The file is larger than the %d bytes declared to request_upload, so nothing was saved. Ask request_upload for a new URL with the right size (or none).", c.wantSize))
	case err == io.EOF:
		return n, c.end()
	case err != nil:
		return n, c.fail(readRefusal(err))
	}
	return n, nil
}

// end runs the checks that need the whole file, then lets io.EOF through.
func (c *content) end() error {
	if c.wantSize >= 0 && c.n != c.wantSize {
		return c.fail(refuse(http.StatusUnprocessableEntity, kindSizeMismatch, "The file has %d bytes, not the %d declared to request_upload, so nothing was saved. Ask request_upload for a new URL with the right size (or none).", c.n, c.wantSize))
	}
	c.sum = hex.EncodeToString(c.h.Sum(nil))
	if c.wantSHA != "" && c.sum != c.wantSHA {
		return c.fail(refuse(http.StatusUnprocessableEntity, kindSHA256Mismatch, "The file's SHA-256 is %s, not the %s declared to request_upload, so nothing was saved. Check you are sending the right file, then ask request_upload for a new URL.", c.sum, c.wantSHA))
	}
	if c.atEnd != nil {
		if err := c.atEnd(); err != nil {
			var e *Error
			if !errors.As(err, &e) {
				e = readRefusal(err)
			}
			return c.fail(e)
		}
	}
	return io.EOF
}

func (c *content) fail(e *Error) error {
	if c.failed == nil {
		c.failed = e
	}
	return c.failed
}

func tooLarge(max int64) *Error {
	return refuse(http.StatusRequestEntityTooLarge, kindTooLarge, "The file is larger than this server's upload limit of %s, so nothing was saved. Send a smaller file, or share a link to it instead.", byteSize(max))
}

// readRefusal explains a request body that failed part way.
func readRefusal(err error) *Error {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return refuse(http.StatusRequestEntityTooLarge, kindTooLarge, "The request is larger than this server accepts, so nothing was saved. Send one file of at most the upload limit.").because(err)
	case errors.Is(err, errBudget):
		return refuse(http.StatusRequestEntityTooLarge, kindFieldsTooLarge, "The form fields before the file are too large, so nothing was saved. Send only the file part and, if needed, short name and folder_id fields.").because(err)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return refuse(http.StatusRequestTimeout, kindTooSlow, "The upload was too slow (no progress for a while), so nothing was saved. Try again on a faster connection.").because(err)
	}
	return refuse(http.StatusBadRequest, kindCutOff, "The upload was cut off before the end of the file, so nothing was saved. Send it again.").because(err)
}

// errBudget: more bytes arrived than the budget for their place allows.
var errBudget = errors.New("request body over budget")

// newBudget caps the bytes read through it at n; the cap is raised
// (Extend) once the file part starts, so the form fields before it stay
// small while the file itself may be large.
func newBudget(r io.Reader, n int64) *stream.Limited {
	return stream.Limit(r, n, errBudget)
}

// paced enforces a minimum rate on a request body: each window must bring
// at least minBytes, or the next read fails with a deadline error. It
// moves the connection's read deadline forward as bytes arrive, so a
// large upload on a good link never times out and a trickle does.
type paced struct {
	r        io.Reader
	rc       *http.ResponseController
	window   time.Duration
	minBytes int64
	got      int64
}

func newPaced(r io.Reader, rc *http.ResponseController, window time.Duration, minBytes int64) *paced {
	p := &paced{r: r, rc: rc, window: window, minBytes: minBytes}
	p.extend()
	return p
}

func (p *paced) extend() {
	// Not every connection supports deadlines (HTTP/2 streams in some
	// setups, test recorders): then the server's own timeouts apply.
	// Deadlines are on the wall clock, whatever clock the service uses.
	_ = p.rc.SetReadDeadline(time.Now().Add(p.window))
}

func (p *paced) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.got += int64(n)
	switch {
	case err == io.EOF:
		// The body is all in. net/http now watches the connection for the
		// client going away; a deadline left here would cancel the request
		// while Drive is still storing the file.
		_ = p.rc.SetReadDeadline(time.Time{})
	case err == nil && p.got >= p.minBytes:
		p.got = 0
		p.extend()
	}
	return n, err
}

// byteSize writes n for people: "1 GiB", "1.5 MiB", "300 KiB", "12 bytes".
func byteSize(n int64) string {
	units := []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}}
	for _, u := range units {
		switch {
		case n >= u.size && n%u.size == 0:
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		case n >= u.size:
			return fmt.Sprintf("%.1f %s", float64(n)/float64(u.size), u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
