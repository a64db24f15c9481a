package mimemsg

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-message"
)

// goMessageBase64 is what go-message writes for data as a base64 body.
func goMessageBase64(t testing.TB, w io.Writer, data []byte, chunk int) {
	var h message.Header
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Transfer-Encoding", "base64")
	var head bytes.Buffer // the header, then the body
	mw, err := message.CreateWriter(&head, h)
	if err != nil {
		t.Fatal(err)
	}
	writeChunks(t, mw, data, chunk)
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	_, rest, _ := bytes.Cut(head.Bytes(), []byte("\r\n\r\n"))
	if _, err := w.Write(rest); err != nil {
		t.Fatal(err)
	}
}

func writeChunks(t testing.TB, w io.Writer, data []byte, chunk int) {
	for rest := data; len(rest) > 0; {
		k := min(chunk, len(rest))
		if _, err := w.Write(rest[:k]); err != nil {
			t.Fatal(err)
		}
		rest = rest[k:]
	}
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// TestBase64LinesAreGoMessages: the encoder writes exactly what go-message
// wrote for a base64 body (76-character lines joined by CRLF, none after
// the last), whatever the sizes of the writes, at each edge of a line and
// of the encoder's block.
func TestBase64LinesAreGoMessages(t *testing.T) {
	block := blockLines * lineBytes
	sizes := []int{0, 1, 2, 3, lineBytes - 1, lineBytes, lineBytes + 1, 2*lineBytes - 1, 2 * lineBytes, 2*lineBytes + 1, block - 1, block, block + 1, 3*block + 5, 100_000}
	for _, n := range sizes {
		for _, chunk := range []int{1, 7, lineBytes, lineBytes + 1, 4096, 32 << 10, n + 1} {
			t.Run(fmt.Sprintf("%d bytes in writes of %d", n, chunk), func(t *testing.T) {
				if chunk == 1 && n > 10_000 {
					t.Skip("slow and covered by the other write sizes")
				}
				data := pattern(n)
				var want, got bytes.Buffer
				goMessageBase64(t, &want, data, max(chunk, 1))
				b := &base64Lines{w: &got}
				writeChunks(t, b, data, max(chunk, 1))
				if err := b.Close(); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Fatalf("%d bytes differ from go-message's %d", got.Len(), want.Len())
				}
				for i, line := range strings.Split(got.String(), "\r\n") {
					if len(line) > lineChars {
						t.Fatalf("line %d has %d characters", i, len(line))
					}
				}
				back, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(got.String(), "\r\n", ""))
				if err != nil || !bytes.Equal(back, data) {
					t.Fatalf("decodes to %d bytes (%v), want the %d written", len(back), err, n)
				}
			})
		}
	}
}

// BenchmarkBase64Part: a 25 MiB attachment's base64 part, written as
// Stream writes it (32 KiB reads into a 64 KiB buffered writer), by
// go-message's encoder and by base64Lines; it reports each one's time
// and their ratio (go-message / base64Lines).
func BenchmarkBase64Part(b *testing.B) {
	const size = 25 << 20
	data := pattern(size)
	run := func(mk func(w io.Writer) io.WriteCloser) time.Duration {
		start := time.Now()
		bw := bufio.NewWriterSize(io.Discard, outBufSize)
		w := mk(bw)
		writeChunks(b, w, data, copyBufSize)
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		if err := bw.Flush(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	goMessage := func(w io.Writer) io.WriteCloser {
		var h message.Header
		h.Set("Content-Transfer-Encoding", "base64")
		mw, err := message.CreateWriter(w, h)
		if err != nil {
			b.Fatal(err)
		}
		return mw
	}
	ours := func(w io.Writer) io.WriteCloser { return &base64Lines{w: w} }
	b.SetBytes(size)
	var theirs, mine time.Duration
	for i := 0; i < b.N; i++ {
		theirs += run(goMessage)
		mine += run(ours)
	}
	b.ReportMetric(float64(theirs.Milliseconds())/float64(b.N), "go-message-ms/op")
	b.ReportMetric(float64(mine.Milliseconds())/float64(b.N), "mimemsg-ms/op")
	b.ReportMetric(float64(theirs)/float64(mine), "go-message/mimemsg")
}
