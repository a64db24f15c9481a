package compose_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/internal/identity"
)

// oneRequestWire counts Drive downloads and breaks the first Gmail
// upload request with a body after cut bytes, as a connection that
// fails in the middle of the one request.
type oneRequestWire struct {
	base      http.RoundTripper
	cut       int64 // 0: no break
	downloads atomic.Int32
	puts      atomic.Int32
}

func (w *oneRequestWire) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Query().Get("alt") == "media" {
		w.downloads.Add(1)
	}
	if r.Method == http.MethodPut && r.ContentLength > 0 && w.puts.Add(1) == 1 && w.cut > 0 {
		r = r.Clone(r.Context())
		r.Body = &brokenAfter{ReadCloser: r.Body, left: w.cut}
	}
	return w.base.RoundTrip(r)
}

type brokenAfter struct {
	io.ReadCloser
	left int64
}

func (b *brokenAfter) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errors.New("connection broke")
	}
	n, err := b.ReadCloser.Read(p[:min(int64(len(p)), b.left)])
	b.left -= int64(n)
	return n, err
}

// TestOneRequestFailureMidway: a Drive file's message, its length known,
// goes to Gmail in one request. Broken in the middle, it is resumed from
// the bytes kept in memory when Gmail holds enough of them (Drive read
// once); when Gmail holds none of it, it begins again on a new session
// from Drive (read twice). Either way exactly one whole message goes.
func TestOneRequestFailureMidway(t *testing.T) {
	const path = "/upload/gmail/v1/users/me/messages/send"
	for _, tt := range []struct {
		name      string
		cut       int64
		faults    []emulator.Fault
		downloads int32
	}{
		{name: "broken: resumed from the ring", cut: 6 << 20, downloads: 1},
		{name: "answered 503 with nothing kept: restarted from Drive", faults: []emulator.Fault{
			{Method: "PUT", PathPrefix: path, Status: 503},
		}, downloads: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, compose.Config{})
			f, data := e.putBytes("scan.pdf", 8<<20) // 11 MB encoded: past one chunk
			e.Inject(tt.faults...)
			w := &oneRequestWire{base: e.hc.Transport, cut: tt.cut}
			before := e.Emu.Stats()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := e.svc.Send(ctx, e.as(identity.User{}, &http.Client{Transport: w}), attach("one request", f), compose.Options{})
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			after := e.Emu.Stats()
			if n := after.MessagesSent - before.MessagesSent; n != 1 {
				t.Errorf("%d messages sent, want 1", n)
			}
			if got := w.downloads.Load(); got != tt.downloads {
				t.Errorf("Drive downloaded the file %d times, want %d", got, tt.downloads)
			}
			_, root := goParse(t, e.Message(user, res.ID))
			if l := root.leaves(); len(l) != 2 || shaHex(l[1].Body) != shaHex(data) {
				t.Errorf("the attachment does not match Drive's bytes")
			}
		})
	}
}
