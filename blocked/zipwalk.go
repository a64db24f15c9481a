package blocked

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"io"

	"github.com/drivemail/drivemail/internal/stream"
)

// Zip records met while following a zip front to back (APPNOTE.TXT
// 4.3.7, 4.3.9).
const (
	sigDataDescriptor = 0x08074b50
	flagDescriptor    = 0x0008 // sizes and CRC follow the data
	methodDeflate     = 8
)

// errWalkEnd stops a zip walk that can follow the stream no further.
var errWalkEnd = errors.New("zip stream not followed further")

// walkZip follows a zip as it streams past, by its local headers, and
// reads the first bytes of each entry's content (see sniffer): stored
// entries as they are, deflated ones inflated. It returns a *Finding for
// the first entry that is a program by its content, and nil once it
// reaches the central directory, or a place it cannot follow: past a
// stored entry of unknown length (whose start it still reads), a method
// or encryption it cannot read through, a record it does not expect, MaxEntries entries,
// or MaxInflated bytes inflated in all. Names and encryption are the
// central directory's to judge (CheckZip); this walk adds only what the
// directory cannot show. Every byte it reads is r's, so a caller that
// tees r keeps the whole stream.
func (in *Inspector) walkZip(r io.Reader) error {
	w := &zipWalk{br: bufio.NewReaderSize(r, 4<<10), left: in.lim.MaxInflated, buf: make([]byte, 4<<10)}
	for range in.lim.MaxEntries {
		name, what, err := w.entry()
		if err != nil {
			return nil
		}
		if what != "" {
			return &Finding{File: in.name, Entry: name, Reason: ReasonContent, Detail: what}
		}
	}
	return nil
}

// zipWalk is the state of one walkZip.
type zipWalk struct {
	br    *bufio.Reader
	fr    io.ReadCloser // the inflater, reused from entry to entry
	sized *bufio.Reader // the inflater's source for an entry of known size, reused
	left  int64         // bytes that may still be inflated
	buf   []byte
}

// localEntry is what a local header says of its entry.
type localEntry struct {
	entry     // name, method, encryption, compressed size
	flags     uint16
	sizeKnown bool
}

// entry reads one entry: its header, as much content as the sniffer
// needs, the rest skipped, and its data descriptor. It returns the
// entry's name and what its content is; errWalkEnd (or a read error)
// where the walk stops.
func (w *zipWalk) entry() (string, string, error) {
	e, err := w.header()
	if err != nil {
		return "", "", err
	}
	var what string
	switch {
	case e.encrypted || e.method != methodStored && e.method != methodDeflate:
		if !e.sizeKnown {
			return "", "", errWalkEnd
		}
		err = w.skip(int64(e.compSize))
	case e.method == methodStored && !e.sizeKnown:
		// Its start can be read, but not where it ends: the walk stops
		// after it.
		if what, err = sniffStream(w.br, w.buf); err == nil && what == "" {
			err = errWalkEnd
		}
	case e.method == methodStored:
		what, err = w.stored(int64(e.compSize))
	default:
		what, err = w.deflated(e)
	}
	if err != nil || what != "" {
		return e.name, what, err
	}
	if e.flags&flagDescriptor != 0 {
		err = w.descriptor()
	}
	return e.name, "", err
}

// header reads a local file header, or ends the walk at any other
// record (the central directory first of all).
func (w *zipWalk) header() (localEntry, error) {
	var h [localHeaderLen]byte
	if _, err := io.ReadFull(w.br, h[:]); err != nil {
		return localEntry{}, err
	}
	if binary.LittleEndian.Uint32(h[:]) != sigLocalHeader {
		return localEntry{}, errWalkEnd
	}
	e := localEntry{flags: binary.LittleEndian.Uint16(h[6:])}
	e.method = binary.LittleEndian.Uint16(h[8:])
	e.compSize = uint64(binary.LittleEndian.Uint32(h[18:]))
	e.encrypted = e.flags&(flagEncrypted|flagStrongEncrypted) != 0
	nameLen := int(binary.LittleEndian.Uint16(h[26:]))
	rest := make([]byte, nameLen+int(binary.LittleEndian.Uint16(h[28:])))
	if _, err := io.ReadFull(w.br, rest); err != nil {
		return localEntry{}, err
	}
	e.name = decodeName(rest[:nameLen], e.flags&flagUTF8 != 0)
	// The zip64 sizes, in the order the central directory has them.
	parseExtra(&e.entry, rest[nameLen:], binary.LittleEndian.Uint32(h[22:]) == 0xFFFFFFFF)
	// With a data descriptor the header's sizes are usually zero; a
	// writer that knew them may still have set them.
	e.sizeKnown = e.flags&flagDescriptor == 0 || e.compSize != 0
	if e.compSize > 1<<62 {
		return localEntry{}, errWalkEnd
	}
	return e, nil
}

// stored sniffs a stored entry of n bytes and skips the rest of it.
func (w *zipWalk) stored(n int64) (string, error) {
	lr := io.LimitReader(w.br, n)
	what, err := sniffStream(lr, w.buf)
	if err != nil || what != "" {
		return what, err
	}
	return "", w.skip(lr.(*io.LimitedReader).N)
}

// deflated sniffs a deflated entry. Of one whose compressed size is
// known, the rest is skipped without inflating; of one that ends with a
// data descriptor, the whole is inflated to find its end (the inflater
// reads no byte past it, as bufio.Reader is an io.ByteReader).
func (w *zipWalk) deflated(e localEntry) (string, error) {
	var src io.Reader = w.br
	var lr *io.LimitedReader
	if e.sizeKnown {
		lr = &io.LimitedReader{R: w.br, N: int64(e.compSize)}
		if w.sized == nil {
			w.sized = bufio.NewReaderSize(lr, 4<<10) // flate would wrap it anyway
		} else {
			w.sized.Reset(lr)
		}
		src = w.sized
	}
	if w.fr == nil {
		w.fr = flate.NewReader(src)
	} else if err := w.fr.(flate.Resetter).Reset(src, nil); err != nil {
		return "", err
	}
	inflated := stream.Limit(w.fr, w.left, errInflated)
	what, err := sniffStream(inflated, w.buf)
	if err == nil && what == "" && !e.sizeKnown {
		_, err = io.CopyBuffer(io.Discard, inflated, w.buf)
	}
	w.left = inflated.Left()
	if err != nil || what != "" {
		return what, err
	}
	if lr != nil {
		return "", w.skip(lr.N)
	}
	return "", nil
}

// skip discards n bytes of the stream.
func (w *zipWalk) skip(n int64) error {
	got, err := io.CopyN(io.Discard, w.br, n)
	if got < n && err == nil {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// descriptor skips a data descriptor: an optional signature, the CRC,
// and the sizes, of 4 or 8 bytes each. Which, the record does not say;
// the next record's signature does.
func (w *zipWalk) descriptor() error {
	if sig, err := w.br.Peek(4); err == nil && binary.LittleEndian.Uint32(sig) == sigDataDescriptor {
		_, _ = w.br.Discard(4)
	}
	for _, n := range []int{12, 20} {
		next, err := w.br.Peek(n + 4)
		if len(next) >= n+4 && (bytes.Equal(next[n:n+4], []byte("PK\x03\x04")) || bytes.Equal(next[n:n+4], []byte("PK\x01\x02"))) {
			_, _ = w.br.Discard(n)
			return nil
		}
		if err != nil && n == 20 {
			return err
		}
	}
	return errWalkEnd
}
