package google

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestTransportCapsWhatAnUnreadAnswerHolds: over HTTP/2, an answer opened
// and not read (a download opened ahead) lets Google send no more than
// its window (StreamWindow for Transport) before the transport stops
// taking its bytes.
func TestTransportCapsWhatAnUnreadAnswerHolds(t *testing.T) {
	const piece = 16 << 10
	pushed := make(chan int, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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

	for _, tc := range []struct {
		name   string
		tr     *http.Transport
		window int
	}{
		{"Transport", Transport(), StreamWindow},
		{"a 1 MiB window", newTransport(1 << 20), 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
			defer tc.tr.CloseIdleConnections()
			res, err := (&http.Client{Transport: tc.tr}).Get(srv.URL)
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
			t.Logf("%s: %d bytes sent before the unread answer stopped taking them", tc.name, n)
			if n < tc.window-2*piece || n > tc.window+4*piece {
				t.Errorf("%d bytes sent to an unread answer; want about %d", n, tc.window)
			}
		})
	}
}
