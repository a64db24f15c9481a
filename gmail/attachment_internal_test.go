package gmail

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/internal/stream"
)

// readAnswer decodes an attachments.get answer as OpenAttachment does,
// for an attachment whose metadata gave want bytes.
func readAnswer(body io.Reader, want int64) ([]byte, error) {
	_, cancel := context.WithCancelCause(context.Background())
	r := &attachmentReader{body: io.NopCloser(body), watch: stream.NewWatch(cancel, time.Minute),
		sc: newScanner(body), want: want, size: -1}
	defer r.Close()
	return io.ReadAll(r)
}

func TestAttachmentAnswerDecoding(t *testing.T) {
	long := `"` + strings.Repeat("x", maxOtherLen+1) + `"`
	tests := []struct {
		name string
		body string
		want int64
		out  string
		err  error // nil, ErrCorrupt or io.ErrUnexpectedEOF
	}{
		{"size first", `{"size":3,"data":"YWJj"}`, 3, "abc", nil},
		{"size last", `{"data":"YWJj","size":3}`, 3, "abc", nil},
		{"size as a string", `{"size":"3","data":"YWJj"}`, 3, "abc", nil},
		{"white space", " {\n \"size\" : 3 ,\r\n \"data\" : \"YWJj\" }\n", 3, "abc", nil},
		{"padding", `{"size":1,"data":"YQ=="}`, 1, "a", nil},
		{"escaped padding", `{"size":1,"data":"YQ\u003d\u003d"}`, 1, "a", nil},
		{"standard alphabet", `{"size":2,"data":"+/8="}`, 2, "\xfb\xff", nil},
		{"escaped slash", `{"size":2,"data":"+\/8"}`, 2, "\xfb\xff", nil},
		{"url alphabet", `{"size":2,"data":"-_8"}`, 2, "\xfb\xff", nil},
		{"other members", `{"attachmentId":"ANGjdJ\"x","x":{"a":[1,2,{"b":"c}"}]},"n":null,"t":true,"size":3,"data":"YWJj"}`, 3, "abc", nil},
		{"empty, no data", `{"size":0}`, 0, "", nil},
		{"empty object", `{}`, 0, "", nil},
		{"no data", `{"size":3}`, 3, "", ErrCorrupt},
		{"answer's size differs", `{"size":4,"data":"YWJj"}`, 3, "abc", ErrCorrupt},
		{"metadata's size larger", `{"data":"YWJj"}`, 4, "abc", ErrCorrupt},
		{"metadata's size smaller", `{"data":"YWJj"}`, 2, "abc", ErrCorrupt},
		{"not base64", `{"size":3,"data":"YW!j"}`, 3, "", ErrCorrupt},
		{"data twice", `{"data":"YWJj","data":"YWJj"}`, 3, "abc", ErrCorrupt},
		{"text after", `{"size":3,"data":"YWJj"}x`, 3, "abc", ErrCorrupt},
		{"not an object", `["YWJj"]`, 3, "", ErrCorrupt},
		{"a member too long", `{"x":` + long + `,"data":"YWJj"}`, 3, "", ErrCorrupt},
		{"a non-ASCII escape", `{"data":"YW\u00e9j"}`, 3, "", ErrCorrupt},
		{"cut in data", `{"size":3,"data":"YWJ`, 3, "", io.ErrUnexpectedEOF},
		{"cut after data", `{"size":3,"data":"YWJj"`, 3, "", io.ErrUnexpectedEOF},
		{"cut before data", `{"size":3,`, 3, "", io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte per read: every state meets a buffer boundary.
			got, err := readAnswer(&oneByte{r: strings.NewReader(tt.body)}, tt.want)
			switch {
			case tt.err == nil && err != nil:
				t.Fatalf("error %v", err)
			case tt.err != nil && !errors.Is(err, tt.err):
				t.Fatalf("error %v, want %v", err, tt.err)
			case tt.err == nil && string(got) != tt.out:
				t.Fatalf("got %q, want %q", got, tt.out)
			}
		})
	}
}

// oneByte reads one byte at a time.
type oneByte struct{ r io.Reader }

func (o *oneByte) Read(p []byte) (int, error) { return o.r.Read(p[:min(1, len(p))]) }

// attachmentAnswer generates {"size":N,"data":"…"} for n bytes of a pattern,
// without holding it (two small buffers, reused): what Gmail sends for
// an attachment of n bytes.
type attachmentAnswer struct {
	head, tail []byte
	n, done    int64
	block      [3072]byte
	enc        [4096]byte
	encLen     int
	pos        int
}

func newAnswer(n int64) *attachmentAnswer {
	return &attachmentAnswer{head: []byte(`{"size":` + strconv.FormatInt(n, 10) + `,"data":"`), tail: []byte(`"}`), n: n}
}

func (a *attachmentAnswer) Read(p []byte) (int, error) {
	if len(a.head) > 0 {
		n := copy(p, a.head)
		a.head = a.head[n:]
		return n, nil
	}
	if a.pos == a.encLen && a.done < a.n {
		block := a.block[:min(int64(len(a.block)), a.n-a.done)]
		for i := range block {
			block[i] = byte(a.done + int64(i))
		}
		a.done += int64(len(block))
		a.encLen = base64.RawURLEncoding.EncodedLen(len(block))
		base64.RawURLEncoding.Encode(a.enc[:a.encLen], block)
		a.pos = 0
	}
	if a.pos < a.encLen {
		n := copy(p, a.enc[a.pos:a.encLen])
		a.pos += n
		return n, nil
	}
	if len(a.tail) > 0 {
		n := copy(p, a.tail)
		a.tail = a.tail[n:]
		return n, nil
	}
	return 0, io.EOF
}

// TestAttachmentDecodingHoldsNothingOfTheAttachment decodes a 20 MiB
// answer and counts what the decoder allocated: a few read buffers,
// nothing that grows with the attachment.
func TestAttachmentDecodingHoldsNothingOfTheAttachment(t *testing.T) {
	const size = 20 << 20
	src := newAnswer(size)
	_, cancel := context.WithCancelCause(context.Background())
	r := &attachmentReader{body: io.NopCloser(src), watch: stream.NewWatch(cancel, time.Minute),
		sc: newScanner(src), want: size, size: -1}
	defer r.Close()
	buf := make([]byte, 32<<10)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; n != size || grown > 1<<20 {
		t.Errorf("decoded %d bytes, allocating %d bytes on the way; want %d, and under 1 MiB", n, grown, size)
	}
}

// TestAnswersAreBoundedAtTheEdge: an answer of exactly the limit reads
// whole; one byte more fails with ErrAnswerTooLarge.
func TestAnswersAreBoundedAtTheEdge(t *testing.T) {
	for _, tt := range []struct {
		size int
		err  error
	}{{1000, nil}, {1001, ErrAnswerTooLarge}} {
		b := limitBody(io.NopCloser(strings.NewReader(strings.Repeat("x", tt.size))), 1000)
		got, err := io.ReadAll(b)
		if !errors.Is(err, tt.err) || tt.err == nil && len(got) != tt.size {
			t.Errorf("%d bytes under a limit of 1000: read %d, %v; want %v", tt.size, len(got), err, tt.err)
		}
	}
}
