package gmail_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/gmail"
)

// TestSessionOpensBeforeTheFirstByte: the upload session is opened while
// the writer still waits for its first byte (as a send waits for Drive's),
// not once a first chunk is in hand, so the two waits overlap.
func TestSessionOpensBeforeTheFirstByte(t *testing.T) {
	e := newEnv(t)
	opened := make(chan struct{})
	var once sync.Once
	base := e.Client(user, emutest.ScopeGmailSend).Transport
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		res, err := base.RoundTrip(r)
		if err == nil && r.Method == http.MethodPost && res.Header.Get("Location") != "" {
			once.Do(func() { close(opened) })
		}
		return res, err
	})}
	gc, err := gmail.New(context.Background(), hc, e.Endpoints, chunk)
	if err != nil {
		t.Fatal(err)
	}
	write, msg := message(3 * chunk)
	sent, err := gc.Send(context.Background(), "", func(ctx context.Context, w io.Writer) error {
		select {
		case <-opened:
		case <-time.After(10 * time.Second):
			return errors.New("the session was not opened before the first byte")
		}
		return write(ctx, w)
	}, gmail.ExpectedSize(int64(len(msg))))
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got := e.Message(user, sent.ID); string(got) != string(msg) {
		t.Errorf("stored %d bytes, wrote %d", len(got), len(msg))
	}
}

// failingBody is a request body that fails after n bytes, as a
// connection that breaks part-way through a chunk.
type failingBody struct {
	r io.Reader
	n int
}

func (b *failingBody) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, errors.New("connection broke")
	}
	k, err := b.r.Read(p[:min(len(p), b.n)])
	b.n -= k
	return k, err
}

func (b *failingBody) Close() error { return nil }

// breakChunk breaks the body of the nth chunk request (from 1) after
// cut bytes.
func breakChunk(base http.RoundTripper, nth int32, cut int) http.RoundTripper {
	var puts atomic.Int32
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPut && r.ContentLength > 0 && puts.Add(1) == nth {
			r = r.Clone(r.Context())
			r.Body = &failingBody{r: r.Body, n: cut}
		}
		return base.RoundTrip(r)
	})
}

// TestChunkFaults: each failure of a chunk is followed by a status query
// and the upload goes on from what Gmail holds, so the message goes once
// and whole; a failure that leaves the outcome of the last request
// unknown says the message may have been sent; a refusal sends nothing.
// The message is 3 chunks and a short last one; faults name chunk
// requests (PUT) in order, status queries included. Each case runs with
// the chunks filled before they go and sent while they are written.
func TestChunkFaults(t *testing.T) {
	const path = "/upload/gmail/v1/users/me/messages/send"
	pass := func(n int) emulator.Fault { // n requests go through
		return emulator.Fault{Method: "PUT", PathPrefix: path, Delay: 1_000_000, Times: n}
	}
	tests := []chunkFault{
		{name: "a middle chunk answered 503, then its status query too", faults: []emulator.Fault{
			pass(1), {Method: "PUT", PathPrefix: path, Status: 503, Times: 2},
		}},
		{name: "a middle chunk cut before Gmail read it", faults: []emulator.Fault{
			pass(1), {Method: "PUT", PathPrefix: path, CutRequestAfter: ptr(int64(100_000))},
		}},
		{name: "a middle chunk broken part-way: Gmail keeps what it read", transport: func(b http.RoundTripper) http.RoundTripper {
			return breakChunk(b, 2, 100_000)
		}},
		{name: "the last chunk cut before Gmail read it", faults: []emulator.Fault{
			pass(3), {Method: "PUT", PathPrefix: path, CutRequestAfter: ptr(int64(10))},
		}},
		{name: "the last chunk's answer lost: asked again", faults: []emulator.Fault{
			pass(3), {Method: "PUT", PathPrefix: path, CutResponseAfter: ptr(int64(0))},
		}},
		{name: "the last chunk's answer cut after its 200, and every status", faults: []emulator.Fault{
			pass(3), {Method: "PUT", PathPrefix: path, CutResponseAfter: ptr(int64(0)), Times: 100},
		}, fails: true, maybeSent: true, accepted: true, stored: 1},
		{name: "the last chunk answered 503 for good", faults: []emulator.Fault{
			pass(3), {Method: "PUT", PathPrefix: path, Status: 503, Times: 100},
		}, fails: true, wantErr: gmail.ErrUnavailable, maybeSent: true},
		{name: "the session gone", faults: []emulator.Fault{
			pass(1), {Method: "PUT", PathPrefix: path, Status: 404},
		}, fails: true, wantErr: gmail.ErrNotFound},
		{name: "the last chunk refused", faults: []emulator.Fault{
			pass(3), {Method: "PUT", PathPrefix: path, Status: 400},
		}, fails: true, wantErr: gmail.ErrRejected},
	}
	for _, tt := range tests {
		for _, streamed := range []bool{false, true} {
			name := tt.name
			if streamed {
				name += ", chunks sent as written"
			}
			t.Run(name, inBubble(func(t *testing.T) {
				tt.run(t, streamed)
			}))
		}
	}
}

// chunkFault is a case of TestChunkFaults.
type chunkFault struct {
	name      string
	faults    []emulator.Fault
	transport func(http.RoundTripper) http.RoundTripper
	fails     bool
	wantErr   error // the failure's cause, when it has one of gmail's
	maybeSent bool
	accepted  bool  // Gmail said 200 to the last chunk
	stored    int64 // messages Gmail sent when the send failed
}

// run sends a message of 3 chunks and a short last one with the faults,
// and checks the outcome; streamed sends the chunks as they are written.
func (tt chunkFault) run(t *testing.T, streamed bool) {
	e := newBubbleEnv(t)
	hc := e.Client(user, emutest.ScopeGmailSend)
	if tt.transport != nil {
		hc.Transport = tt.transport(hc.Transport)
	}
	gc, err := gmail.New(context.Background(), hc, e.Endpoints, chunk, gmail.WithChunkTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	e.Inject(tt.faults...)
	write, msg := message(3 * chunk)
	var opts []gmail.UploadOption
	if streamed {
		opts = append(opts, gmail.AtLeast(int64(len(msg))))
	}
	sent, err := gc.Send(context.Background(), "", write, opts...)
	st := e.Emu.Stats()
	if !tt.fails {
		e.sentOnce(t, sent, err, msg)
		return
	}
	var ge *gmail.Error
	if !errors.As(err, &ge) || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
		t.Fatalf("err = %v, want %v", err, tt.wantErr)
	}
	if ge.MaybeSent != tt.maybeSent || ge.Accepted != tt.accepted {
		t.Errorf("MaybeSent = %v, Accepted = %v; want %v, %v", ge.MaybeSent, ge.Accepted, tt.maybeSent, tt.accepted)
	}
	if st.MessagesSent != tt.stored {
		t.Errorf("%d messages sent, want %d", st.MessagesSent, tt.stored)
	}
	if strings.Contains(err.Error(), "upload_id") {
		t.Errorf("error %q carries the session URI", err)
	}
}

func ptr[T any](v T) *T { return &v }
