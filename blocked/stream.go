package blocked

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/drivemail/drivemail/internal/stream"
)

// Inspector checks a gzip, tar or tar.gz archive while it streams past:
// the caller tees the download into it (io.TeeReader(body, in)). Each
// Write returns only once the parser has taken in all of p, so a Write
// returns the *Finding as soon as the bytes that complete a blocked
// entry's header have passed (plus what the decompressor reads ahead, a
// few KiB): the caller's read fails and the message is abandoned before
// it is finished. Close must be called once the stream ends, or is
// abandoned: it returns the verdict, and an archive whose stream ended
// before its last header is refused as unreadable.
//
// An Inspector runs one goroutine that parses the stream; Close ends it.
// Memory is small and fixed (the decompressor's window and buffers).
// Write and Close are meant for one goroutine; Close may also be called
// from another to abandon the stream.
type Inspector struct {
	name   string
	format Format
	lim    Limits

	chunks chan []byte   // Write → parser
	idle   chan struct{} // parser → Write: the last chunk is used up
	quit   chan struct{} // closed by Close
	done   chan struct{} // closed when the parser has its verdict

	verdict  error // valid once done is closed
	quitOnce sync.Once
	mu       sync.Mutex
	closed   bool
}

// NewInspector starts inspecting a stream of the given archive format (see FormatOf);
// name is the attachment's name, for the refusal's sentence. For
// NotArchive it accepts every byte and finds nothing. A Zip is checked
// when its stream ends, from the end of it the Inspector keeps (see
// MaxStreamDirBytes): for a zip that cannot be read by Range first, as
// CheckZip reads one in Drive.
func NewInspector(name string, format Format, lim Limits) *Inspector {
	in := &Inspector{
		name: name, format: format, lim: lim.withDefaults(),
		chunks: make(chan []byte), idle: make(chan struct{}),
		quit: make(chan struct{}), done: make(chan struct{}),
	}
	go func() {
		in.verdict = in.parse(&chunkReader{in: in})
		close(in.done)
	}()
	return in
}

// Write passes p to the parser and waits until it has used p up. It
// returns the refusal once one is known; after a verdict of "nothing
// blocked" it accepts bytes without looking.
func (in *Inspector) Write(p []byte) (int, error) {
	in.mu.Lock()
	closed := in.closed
	in.mu.Unlock()
	if closed {
		return 0, errors.New("blocked: write to a closed Inspector")
	}
	if len(p) == 0 {
		return 0, nil
	}
	select {
	case in.chunks <- p:
		select {
		case <-in.idle:
			return len(p), nil
		case <-in.done:
		}
	case <-in.done:
	}
	// The parser has finished, so it no longer reads p.
	if in.verdict != nil {
		return 0, in.verdict
	}
	return len(p), nil
}

// Close ends the stream and returns the verdict: nil, a *Finding, or an
// internal error. It is safe to call more than once.
func (in *Inspector) Close() error {
	in.mu.Lock()
	in.closed = true
	in.mu.Unlock()
	in.quitOnce.Do(func() { close(in.quit) })
	<-in.done
	return in.verdict
}

// chunkReader is the parser's end: it reads the chunks Write hands over
// and says when one is used up. Quit reads as the end of the stream.
type chunkReader struct {
	in      *Inspector
	cur     []byte
	started bool
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.cur) == 0 {
		if r.started {
			select {
			case r.in.idle <- struct{}{}:
			case <-r.in.quit:
				return 0, io.EOF
			}
		}
		r.started = true
		select {
		case r.cur = <-r.in.chunks:
		case <-r.in.quit:
			return 0, io.EOF
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// parse reads the whole stream, or as much as the verdict needs.
func (in *Inspector) parse(r io.Reader) error {
	switch in.format {
	case Tar:
		return in.tar(r, "")
	case Gzip, TarGzip:
		// compress/gzip reads names of up to 511 bytes; a longer one (no
		// file system allows it) makes the header unreadable.
		zr, err := gzip.NewReader(r)
		if err != nil {
			return in.unreadable("", "not a gzip stream")
		}
		inner := zr.Name
		if inner != "" {
			if ext := Ext(inner); ext != "" {
				return &Finding{File: in.name, Entry: inner, Ext: ext, Reason: ReasonExtension}
			}
		}
		if in.format == TarGzip || isTarName(inner) || (inner == "" && isTarName(strings.TrimSuffix(strings.ToLower(baseName(in.name)), ".gz"))) {
			return in.tar(stream.Limit(zr, in.lim.MaxInflated, errInflated), inner)
		}
		return nil
	case Zip:
		return in.zipStream(r)
	default:
		return nil
	}
}

func isTarName(name string) bool {
	return strings.HasSuffix(strings.ToLower(trimEnd(name)), ".tar")
}

// errInflated stops a gzip stream that inflates past Limits.MaxInflated.
var errInflated = errors.New("inflated size over the limit")

// tar checks every entry header of a tar stream; the content between
// headers is read and discarded by archive/tar.
func (in *Inspector) tar(r io.Reader, outer string) error {
	tr := tar.NewReader(r)
	for count := 0; ; count++ {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if errors.Is(err, errInflated) {
			return &Finding{File: in.name, Entry: outer, Reason: ReasonTooLarge,
				Detail: fmt.Sprintf("it inflates past %d bytes", in.lim.MaxInflated)}
		}
		if err != nil {
			return in.unreadable(outer, "damaged or truncated tar")
		}
		if count >= in.lim.MaxEntries {
			return &Finding{File: in.name, Entry: outer, Reason: ReasonTooLarge,
				Detail: fmt.Sprintf("more than %d entries", in.lim.MaxEntries)}
		}
		if h.Typeflag == tar.TypeDir {
			continue
		}
		if ext := Ext(h.Name); ext != "" {
			return &Finding{File: in.name, Entry: joinEntry(outer, h.Name), Ext: ext, Reason: ReasonExtension}
		}
	}
}

func (in *Inspector) unreadable(entry, detail string) error {
	return &Finding{File: in.name, Entry: entry, Reason: ReasonUnreadable, Detail: detail}
}

func joinEntry(outer, name string) string {
	if outer == "" {
		return name
	}
	return outer + "/" + name
}

// gzipHeadLen is how much of a gzip file CheckGzipAt reads: the fixed
// header, and an original file name of any sensible length.
const gzipHeadLen = 1024

// CheckGzipAt reads the first KiB of a gzip file through ra (one read)
// and refuses it if the original file name in its header (FNAME) is
// blocked, before any download. A header it cannot finish reading in
// that KiB is left to the Inspector. It returns nil, a *Finding, or an
// error of ra.
func CheckGzipAt(ctx context.Context, ra io.ReaderAt, size int64, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	head := make([]byte, min(size, gzipHeadLen))
	if err := readFullAt(ra, head, 0); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return &Finding{File: name, Reason: ReasonUnreadable, Detail: "truncated"}
		}
		return fmt.Errorf("checking gzip %q: %w", name, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(head))
	if err != nil {
		if size <= gzipHeadLen || head[0] != 0x1f || head[1] != 0x8b {
			return &Finding{File: name, Reason: ReasonUnreadable, Detail: "not a gzip stream"}
		}
		return nil // a header longer than head: the Inspector will see it
	}
	if ext := Ext(zr.Name); ext != "" {
		return &Finding{File: name, Entry: zr.Name, Ext: ext, Reason: ReasonExtension}
	}
	return nil
}
