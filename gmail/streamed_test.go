package gmail_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/gmail"
)

// chunkStarted is ana's client, with started closed once a chunk
// request carrying bytes has begun.
func chunkStarted(t *testing.T, e *env, opts ...gmail.Option) (*gmail.Client, <-chan struct{}) {
	t.Helper()
	started := make(chan struct{})
	var once sync.Once
	base := e.Client(user, emutest.ScopeGmailSend).Transport
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPut && r.ContentLength > 0 {
			once.Do(func() { close(started) })
		}
		return base.RoundTrip(r)
	})}
	gc, err := gmail.New(context.Background(), hc, e.Endpoints, chunk, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return gc, started
}

// TestChunksGoWhileWritten: with the message's least size known, a chunk
// request begins before its chunk is whole, so Gmail receives while the
// writer (Drive) still writes; the message arrives whole, once.
func TestChunksGoWhileWritten(t *testing.T) {
	e := newEnv(t)
	gc, started := chunkStarted(t, e)
	_, msg := message(3 * chunk)
	sent, err := gc.Send(context.Background(), "", func(_ context.Context, w io.Writer) error {
		if _, err := w.Write(msg[:chunk/2]); err != nil {
			return err
		}
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			return errors.New("no chunk request began before the chunk was whole")
		}
		_, err := w.Write(msg[chunk/2:])
		return err
	}, gmail.ExpectedSize(int64(len(msg))), gmail.AtLeast(int64(len(msg))))
	e.sentOnce(t, sent, err, msg)
}

// TestAtLeastPastTheEnd: a message shorter than AtLeast promised ends
// inside a chunk sent as it was written; that chunk is then sent as the
// last one and the message arrives whole, once, at each edge: ending a
// byte into a chunk, a byte short of one, on its boundary.
func TestAtLeastPastTheEnd(t *testing.T) { synctest.Test(t, testAtLeastPastTheEnd) }

func testAtLeastPastTheEnd(t *testing.T) {
	for _, size := range []int{chunk + 1, 2*chunk - 1, 2 * chunk} {
		e := newBubbleEnv(t)
		msg := exactMessage(size)
		sent, err := e.gc.Send(context.Background(), "", func(_ context.Context, w io.Writer) error {
			_, err := w.Write(msg)
			return err
		}, gmail.AtLeast(int64(4*chunk)))
		e.sentOnce(t, sent, err, msg)
	}
}

// exactMessage is a valid message of exactly size bytes (at least 200).
func exactMessage(size int) []byte {
	head := "From: " + user + "\r\nTo: zoe@example.org\r\nSubject: sized\r\nDate: Mon, 02 Mar 2026 10:00:00 +0000\r\nMessage-ID: <sized@example.com>\r\n\r\n"
	msg := []byte(head + strings.Repeat("a", size-len(head)))
	for i := len(head) + 76; i+2 < len(msg); i += 78 {
		msg[i], msg[i+1] = '\r', '\n'
	}
	return msg
}

// TestWriterFailureInAChunkSentAsWritten: a writer that fails inside a
// chunk already on its way never completes the message; Gmail was
// contacted once a byte left, not before; the session is cancelled.
func TestWriterFailureInAChunkSentAsWritten(t *testing.T) {
	for _, tc := range []struct {
		name      string
		failAt    int
		contacted bool
	}{
		{"before the first byte", 0, false},
		{"inside the first chunk", chunk / 2, true},
		{"inside the second chunk", chunk + 100, true},
	} {
		t.Run(tc.name, inBubble(func(t *testing.T) {
			e := newBubbleEnv(t)
			_, msg := message(3 * chunk)
			_, err := e.gc.Send(context.Background(), "", failingAfter(msg, tc.failAt), gmail.AtLeast(int64(len(msg))))
			var we *gmail.WriteError
			if !errors.As(err, &we) || we.Err.Error() != "drive broke" {
				t.Fatalf("err = %v, want the writer's error", err)
			}
			if we.Contacted != tc.contacted {
				t.Errorf("Contacted = %v, want %v", we.Contacted, tc.contacted)
			}
			st := e.Emu.Stats()
			if st.MessagesSent != 0 || st.UploadsFinished != 0 {
				t.Errorf("sent %d, uploads finished %d; want nothing", st.MessagesSent, st.UploadsFinished)
			}
			if st.Paths[cancelPath] != st.Paths[openPath] {
				t.Errorf("%d sessions opened, %d cancelled", st.Paths[openPath], st.Paths[cancelPath])
			}
		}))
	}
}

// TestSlowWriterIsNotAGmailStall: a chunk sent as it is written waits on
// the writer (Drive, with its own idle timeout); the chunk timeout counts
// from its last byte, so a writer slower than the timeout is no stall.
func TestSlowWriterIsNotAGmailStall(t *testing.T) { synctest.Test(t, testSlowWriterIsNotAGmailStall) }

func testSlowWriterIsNotAGmailStall(t *testing.T) {
	e := newBubbleEnv(t)
	gc, started := chunkStarted(t, e, gmail.WithChunkTimeout(200*time.Millisecond))
	_, msg := message(3 * chunk)
	sent, err := gc.Send(context.Background(), "", func(_ context.Context, w io.Writer) error {
		if _, err := w.Write(msg[:100]); err != nil {
			return err
		}
		<-started
		// Drive slower than the chunk timeout, as a slow download is.
		<-time.After(600 * time.Millisecond)
		_, err := w.Write(msg[100:])
		return err
	}, gmail.AtLeast(int64(len(msg))))
	e.sentOnce(t, sent, err, msg)
}

// TestGmailNotReadingAChunkSentAsWritten: a chunk request whose body
// Gmail stops taking (and never answers) is a stall after the chunk
// timeout, though its last byte never left: the clock counts the time
// spent on Gmail, not only the wait for its answer.
func TestGmailNotReadingAChunkSentAsWritten(t *testing.T) {
	synctest.Test(t, testGmailNotReadingAChunkSentAsWritten)
}

func testGmailNotReadingAChunkSentAsWritten(t *testing.T) {
	e := newBubbleEnv(t)
	base := e.Client(user, emutest.ScopeGmailSend).Transport
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPut && r.ContentLength > 0 {
			<-r.Context().Done() // takes nothing, answers nothing
			return nil, r.Context().Err()
		}
		return base.RoundTrip(r)
	})}
	gc, err := gmail.New(context.Background(), hc, e.Endpoints, chunk, gmail.WithChunkTimeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	write, msg := message(3 * chunk)
	done := make(chan error, 1)
	go func() {
		_, err := gc.Send(context.Background(), "", write, gmail.AtLeast(int64(len(msg))))
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Send still waits on a Gmail that takes nothing")
	}
	var ge *gmail.Error
	if !errors.As(err, &ge) || !errors.Is(err, gmail.ErrStalled) || ge.MaybeSent {
		t.Fatalf("err = %v, want ErrStalled, nothing sent", err)
	}
}
