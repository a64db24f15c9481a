package google

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/internal/memnet"
)

// TestTransportCapsWhatAnUnreadAnswerHolds: over HTTP/2, an answer opened
// and not read (a download opened ahead) lets Google send no more than
// its window (StreamWindow for Transport) before the transport stops
// taking its bytes. Each case runs in a synctest bubble, the server on
// an in-memory network, so the second that tells a write the window did
// not take passes at once.
func TestTransportCapsWhatAnUnreadAnswerHolds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tr     func() *http.Transport
		window int
	}{
		{"Transport", Transport, StreamWindow},
		{"a 1 MiB window", func() *http.Transport { return newTransport(1 << 20) }, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { unreadAnswerHolds(t, tc.tr(), tc.window) })
		})
	}
}

// unreadAnswerHolds opens an answer over tr and reads none of it, and
// checks that the server could send it about window bytes.
func unreadAnswerHolds(t *testing.T, tr *http.Transport, window int) {
	const piece = 16 << 10
	pushed := make(chan int, 1)
	network := memnet.New()
	srv := network.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		buf := make([]byte, piece)
		total := 0
		for total < 16<<20 {
			// A write that the client's window does not take in time
			// ends the count.
			if err := rc.SetWriteDeadline(time.Now().Add(time.Second)); err != nil {
				t.Error(err)
				break
			}
			if _, err := w.Write(buf); err != nil {
				break
			}
			if err := rc.Flush(); err != nil {
				break
			}
			total += piece
		}
		pushed <- total
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	tr.DialContext = network.DialContext
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.ProtoMajor != 2 {
		t.Fatalf("answer over %s, want HTTP/2", res.Proto)
	}
	var n int
	select {
	case n = <-pushed:
	case <-time.After(30 * time.Second):
		t.Fatal(errors.New("the server never stopped writing"))
	}
	t.Logf("%d bytes sent before the unread answer stopped taking them", n)
	if n < window-2*piece || n > window+4*piece {
		t.Errorf("%d bytes sent to an unread answer; want about %d", n, window)
	}
}
