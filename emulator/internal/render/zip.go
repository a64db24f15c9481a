package render

import (
	"archive/zip"
	"bufio"
	"hash/crc32"
	"io"
	"time"
)

// zipOut writes a zip container entry by entry, each entry streamed.
type zipOut struct {
	zw       *zip.Writer
	modified time.Time
}

func newZip(w io.Writer, modified time.Time) *zipOut {
	if modified.IsZero() || modified.Year() < 1980 {
		modified = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return &zipOut{zw: zip.NewWriter(w), modified: modified.UTC()}
}

// stream adds a deflated entry whose content fn writes.
func (z *zipOut) stream(name string, fn func(io.Writer) error) error {
	ew, err := z.zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: z.modified})
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(ew, 32<<10)
	if err := fn(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// text adds a deflated entry with content s.
func (z *zipOut) text(name, s string) error {
	return z.stream(name, func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	})
}

// stored adds an uncompressed entry with no data descriptor and no extra
// field (so no timestamp), as the "mimetype" first entry of OpenDocument
// and EPUB files must be.
func (z *zipOut) stored(name, s string) error {
	fh := &zip.FileHeader{
		Name:               name,
		Method:             zip.Store,
		CRC32:              crc32.ChecksumIEEE([]byte(s)),
		CompressedSize64:   uint64(len(s)),
		UncompressedSize64: uint64(len(s)),
	}
	w, err := z.zw.CreateRaw(fh)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, s)
	return err
}

func (z *zipOut) close() error { return z.zw.Close() }
