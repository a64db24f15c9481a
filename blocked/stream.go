package blocked

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"

	"github.com/drivemail/drivemail/internal/stream"
)

// Inspector checks a file while it streams past: the caller tees the
// download into it (io.TeeReader(body, in)). It reads the file's own
// bytes for a program's signature (see sniffer), whatever its format, and
// for an archive (gzip, tar, tar.gz, zip) its entries: their names, and
// the first bytes of their content. Each Write returns only once all of
// p has been looked at, so a Write returns the *Finding as soon as the
// bytes that show it have passed (plus what a decompressor reads ahead,
// a few KiB): the caller's read fails and the message is abandoned
// before it is finished. Close must be called once the stream ends, or
// is abandoned: it returns the verdict, and an archive whose stream
// ended before its last header is refused as unreadable.
//
// For an archive, an Inspector runs one goroutine that parses the
// stream; Close ends it. Memory is small and fixed (a head of the file,
// the decompressor's window and buffers; for a zip, the end of the
// stream its directory is read from, see MaxStreamDirBytes). Write and
// Close are meant for one goroutine; Close may also be called from
// another to abandon the stream.
type Inspector struct {
	name       string
	format     Format
	lim        Limits
	dirChecked bool // see DirectoryChecked

	chunks chan []byte   // Write → parser
	idle   chan struct{} // parser → Write: the last chunk is used up
	quit   chan struct{} // closed by Close
	done   chan struct{} // closed when the parser has its verdict

	verdict  error // valid once done is closed
	quitOnce sync.Once
	mu       sync.Mutex
	closed   bool
	top      *sniffer // the file's own bytes, under mu
	found    error    // what top found, under mu
}

// InspectOption tunes an Inspector.
type InspectOption func(*Inspector)

// DirectoryChecked says a zip's central directory was checked already
// (CheckZip, by Range): the Inspector then reads only its entries'
// content as it streams, and keeps nothing of its end.
func DirectoryChecked() InspectOption {
	return func(in *Inspector) { in.dirChecked = true }
}

// NewInspector starts inspecting a stream of the given archive format (see FormatOf);
// name is the attachment's name, for the refusal's sentence. For
// NotArchive it looks only at the file's own bytes. A Zip's entries are
// followed as they pass, and its directory is checked when its stream
// ends, from the end of it the Inspector keeps (see MaxStreamDirBytes):
// for a zip that cannot be read by Range first, as CheckZip reads one in
// Drive.
func NewInspector(name string, format Format, lim Limits, opts ...InspectOption) *Inspector {
	in := &Inspector{
		name: name, format: format, lim: lim.withDefaults(),
		chunks: make(chan []byte), idle: make(chan struct{}),
		quit: make(chan struct{}), done: make(chan struct{}),
		top: newSniffer(),
	}
	for _, o := range opts {
		o(in)
	}
	if format == NotArchive {
		close(in.done) // nothing inside to parse
		return in
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
	if in.found == nil && !closed {
		if what := in.top.write(p); what != "" {
			in.found = &Finding{File: in.name, Reason: ReasonContent, Detail: what}
		}
	}
	found := in.found
	in.mu.Unlock()
	if closed {
		return 0, errors.New("blocked: write to a closed Inspector")
	}
	if found != nil {
		return 0, found
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
	if in.found == nil {
		if what := in.top.end(); what != "" {
			in.found = &Finding{File: in.name, Reason: ReasonContent, Detail: what}
		}
	}
	found := in.found
	in.mu.Unlock()
	in.quitOnce.Do(func() { close(in.quit) })
	<-in.done
	if found != nil {
		return found
	}
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
		inflated := stream.Limit(zr, in.lim.MaxInflated, errInflated)
		if in.format == TarGzip || isTarName(inner) || (inner == "" && isTarName(strings.TrimSuffix(strings.ToLower(baseName(in.name)), ".gz"))) {
			return in.tar(inflated, inner)
		}
		// One compressed file: its first bytes, and no more. A stream that
		// cannot be inflated that far is Gmail's to judge.
		if what, err := sniffStream(inflated, make([]byte, 4<<10)); err == nil && what != "" {
			if inner == "" {
				inner = strings.TrimSuffix(baseName(in.name), path.Ext(baseName(in.name)))
			}
			return &Finding{File: in.name, Entry: inner, Reason: ReasonContent, Detail: what}
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

// tar checks every entry header of a tar stream, and the first bytes of
// each regular file's content; the rest of the content is read and
// discarded by archive/tar.
func (in *Inspector) tar(r io.Reader, outer string) error {
	tr := tar.NewReader(r)
	buf := make([]byte, 4<<10)
	for count := 0; ; count++ {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return in.tarBroken(outer, err)
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
		if h.Typeflag != tar.TypeReg {
			continue
		}
		what, err := sniffStream(tr, buf)
		if err != nil {
			return in.tarBroken(outer, err)
		}
		if what != "" {
			return &Finding{File: in.name, Entry: joinEntry(outer, h.Name), Reason: ReasonContent, Detail: what}
		}
	}
}

// tarBroken is the finding for a tar stream that failed: one that
// inflates past the limit, or one that cannot be read.
func (in *Inspector) tarBroken(outer string, err error) error {
	if errors.Is(err, errInflated) {
		return &Finding{File: in.name, Entry: outer, Reason: ReasonTooLarge,
			Detail: fmt.Sprintf("it inflates past %d bytes", in.lim.MaxInflated)}
	}
	return in.unreadable(outer, "damaged or truncated tar")
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
