package blocked_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/drivemail/drivemail/blocked"
)

// CheckZip reads a zip's directory through an io.ReaderAt, so a caller can
// back it with a few HTTP Range requests and refuse the archive before any
// download. Here the zip is in memory, and a counter shows how little of it
// was read.
func ExampleCheckZip() {
	archive := newZip(
		file{"report.pdf", "%PDF-1.7 …"},
		file{"tools/setup.exe", "MZ…"},
	)
	ra := &countingReaderAt{r: bytes.NewReader(archive)}
	err := blocked.CheckZip(context.Background(), ra, int64(len(archive)), "q3.zip", blocked.Limits{})

	var f *blocked.Finding
	if errors.As(err, &f) {
		fmt.Printf("entry %s, extension %s\n", f.Entry, f.Ext)
		fmt.Println(err)
	}
	fmt.Printf("%d read of %d bytes\n", ra.reads, len(archive))
	// Output:
	// entry tools/setup.exe, extension exe
	// "q3.zip" contains "tools/setup.exe"; Gmail blocks .exe files, even inside archives.
	// 1 read of 285 bytes
}

// A zip with nothing blocked in it passes.
func ExampleCheckZip_clean() {
	archive := newZip(file{"report.pdf", "%PDF-1.7 …"}, file{"data.csv", "a,b\n"})
	err := blocked.CheckZip(context.Background(), bytes.NewReader(archive), int64(len(archive)), "q3.zip", blocked.Limits{})
	fmt.Println(err)
	// Output: <nil>
}

// file is one entry of a zip newZip builds.
type file struct{ name, body string }

// newZip builds a zip in memory.
func newZip(files ...file) []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, e := range files {
		f, err := w.Create(e.name)
		if err != nil {
			panic(err)
		}
		if _, err := io.WriteString(f, e.body); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// countingReaderAt counts the reads CheckZip makes.
type countingReaderAt struct {
	r     io.ReaderAt
	reads int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}
