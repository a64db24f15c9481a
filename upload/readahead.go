package upload

import (
	"io"
	"time"

	"github.com/drivemail/drivemail/drive"
)

// Read-ahead: while the Drive client sends one chunk, a goroutine keeps
// reading the client's next bytes, so the two legs of an upload overlap
// instead of taking turns (measured on loopback with 8 MiB chunks: 0.73
// of the direct throughput without it, 0.87 to 0.89 with it). It holds one
// Drive chunk's worth, so each running upload holds about 8 MiB: its chunk
// and this (12 MiB for a save of known size, whose chunks are larger:
// drive.MaxKnownChunk). With 8 MiB chunks and 6 MiB ahead, the collector's heap goal
// (twice the live heap) took a 1 GiB upload's peak RSS growth past 32 MiB.
const (
	aheadBlockSize = 1 << 20
	aheadBlocks    = drive.UploadChunkSize / aheadBlockSize
)

// blocks keeps up to keep read-ahead blocks between uploads, so uploads
// one after another reuse the same memory instead of leaving their
// blocks as garbage (which the collector's heap goal would double), while a
// burst of concurrent uploads does not pin its peak for good.
type blocks struct {
	spare chan []byte
}

func newBlocks(keep int) *blocks { return &blocks{spare: make(chan []byte, keep)} }

func (bs *blocks) get() []byte {
	select {
	case b := <-bs.spare:
		return b
	default:
		return make([]byte, aheadBlockSize)
	}
}

func (bs *blocks) put(b []byte) {
	select {
	case bs.spare <- b[:cap(b)]:
	default: // enough kept: let the collector have it
	}
}

// readAhead reads src in a goroutine into a few blocks and hands them to
// Read in order. src's final error (io.EOF or a failure) comes out of Read
// once the blocks before it are consumed.
type readAhead struct {
	pool *blocks
	full chan []byte
	free chan []byte
	stop chan struct{}
	done chan struct{}
	err  error // set before full is closed

	block []byte // the block being consumed
	rest  []byte // its unread part
}

func newReadAhead(src io.Reader, pool *blocks) *readAhead {
	ra := &readAhead{
		pool: pool,
		full: make(chan []byte, aheadBlocks),
		free: make(chan []byte, aheadBlocks),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	for range aheadBlocks {
		ra.free <- pool.get()
	}
	go ra.fill(src)
	return ra
}

func (ra *readAhead) fill(src io.Reader) {
	defer func() {
		if ra.err == nil {
			ra.err = io.ErrClosedPipe // stopped: Read is not called any more
		}
		close(ra.full)
		close(ra.done)
	}()
	for {
		var b []byte
		select {
		case b = <-ra.free:
		case <-ra.stop:
			return
		}
		n, err := readBlock(src, b[:cap(b)], ra.stop)
		if n > 0 {
			select {
			case ra.full <- b[:n]:
			case <-ra.stop:
				ra.pool.put(b)
				return
			}
		} else {
			ra.free <- b
		}
		if err != nil {
			ra.err = err
			return
		}
	}
}

// readBlock fills b from src until it is full, src fails or ends, or stop
// is closed.
func readBlock(src io.Reader, b []byte, stop <-chan struct{}) (int, error) {
	n := 0
	for n < len(b) {
		select {
		case <-stop:
			return n, io.ErrClosedPipe
		default:
		}
		m, err := src.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (ra *readAhead) Read(p []byte) (int, error) {
	for len(ra.rest) == 0 {
		if ra.block != nil {
			ra.free <- ra.block[:cap(ra.block)]
			ra.block = nil
		}
		b, ok := <-ra.full
		if !ok {
			return 0, ra.err
		}
		ra.block, ra.rest = b, b
	}
	n := copy(p, ra.rest)
	ra.rest = ra.rest[n:]
	return n, nil
}

// close stops the goroutine and gives its blocks back. If the
// goroutine is still reading src, unblock must make that read return (the
// handler moves the connection's read deadline to now); it is called
// again until the goroutine has gone, and not at all once src ended.
func (ra *readAhead) close(unblock func()) {
	close(ra.stop)
	for stopped := false; !stopped; {
		select {
		case <-ra.done:
			stopped = true
		default:
			unblock()
			select {
			case <-ra.done:
				stopped = true
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	ra.recycle()
}

// recycle gives every block back; the goroutine has stopped.
func (ra *readAhead) recycle() {
	if ra.block != nil {
		ra.pool.put(ra.block)
		ra.block, ra.rest = nil, nil
	}
	for b := range ra.full {
		ra.pool.put(b)
	}
	for {
		select {
		case b := <-ra.free:
			ra.pool.put(b)
		default:
			return
		}
	}
}
