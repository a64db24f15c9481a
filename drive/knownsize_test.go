package drive_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator/emutest"
)

// chunkRequests counts the requests that carry a resumable upload's bytes.
type chunkRequests struct {
	base http.RoundTripper
	n    atomic.Int32
}

func (c *chunkRequests) RoundTrip(r *http.Request) (*http.Response, error) {
	if cr := r.Header.Get("Content-Range"); cr != "" && r.ContentLength > 0 {
		c.n.Add(1)
	}
	return c.base.RoundTrip(r)
}

// TestKnownSizeUploadsInFewerChunks: a file whose size is known goes in
// the fewest chunks of at most drive.MaxKnownChunk, at least two, up to
// drive.MaxKnownSize; past it, or of unknown size, in chunks of
// drive.UploadChunkSize. Drive stores the bytes either way.
func TestKnownSizeUploadsInFewerChunks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		size   int
		known  bool
		chunks int32
	}{
		{"20 MiB, size known: three of 6.7 MiB", 20 << 20, true, 3},
		{"just past a chunk, size known: two", drive.UploadChunkSize + 1, true, 2},
		{"at the edge: four of 8 MiB", drive.MaxKnownSize, true, 4},
		{"past the edge: chunks of 4 MiB", drive.MaxKnownSize + 1, true, drive.MaxKnownSize/drive.UploadChunkSize + 1},
		{"20 MiB, size unknown: chunks of 4 MiB", 20 << 20, false, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &env{Env: emutest.Start(t)}
			hc := e.Client(uploader, emutest.ScopeDriveFile)
			cr := &chunkRequests{base: hc.Transport}
			hc.Transport = cr
			dc, err := drive.New(context.Background(), hc, e.Endpoints)
			if err != nil {
				t.Fatal(err)
			}
			data := pattern(tc.size)
			nf := drive.NewFile{Name: "scan.bin", MimeType: "application/octet-stream"}
			if tc.known {
				nf.Size = int64(tc.size)
			}
			f, err := dc.Upload(context.Background(), nf, bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Content(f.ID); !bytes.Equal(got, data) {
				t.Errorf("stored %d bytes that differ from the %d sent", len(got), len(data))
			}
			if n := cr.n.Load(); n != tc.chunks {
				t.Errorf("%d chunk requests, want %d", n, tc.chunks)
			}
		})
	}
}

// TestKnownSizeUploadThatFailsCreatesNothing: a reader that fails at
// its very end, every byte given (a digest found wrong), leaves no file
// in larger chunks too.
func TestKnownSizeUploadThatFailsCreatesNothing(t *testing.T) {
	errDigest := errors.New("digest mismatch")
	for _, size := range []int{drive.UploadChunkSize + 1, 20 << 20} {
		e := newUploadEnv(t)
		r := &failingReader{r: bytes.NewReader(pattern(size)), err: errDigest}
		_, err := e.dc.Upload(context.Background(), drive.NewFile{Name: "x.bin", Size: int64(size)}, r)
		if !errors.Is(err, errDigest) {
			t.Errorf("%d bytes: err = %v, want the reader's error in the chain", size, err)
		}
		if n := e.binaryFiles(); n != 0 {
			t.Errorf("%d bytes: %d files created after the reader failed", size, n)
		}
	}
}
