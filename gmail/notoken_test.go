package gmail_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/internal/google"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A final request that failed because no token could be had (the user's
// grant was revoked) never left: the send is not "maybe sent", for
// multipart and resumable uploads alike.
func TestNoTokenOnTheFinalRequestSendsNothing(t *testing.T) {
	for _, size := range []int{chunk / 2, 3 * chunk} {
		e := newEnv(t)
		base := e.Client(user, emutest.ScopeGmailSend)
		var final bool
		hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			cr := r.Header.Get("Content-Range")
			if r.URL.Query().Get("uploadType") == "multipart" || cr != "" && cr[len(cr)-1] != '*' {
				final = true
				return nil, fmt.Errorf("refresh Google token: %w", google.ErrNoToken)
			}
			return base.Transport.RoundTrip(r)
		})}
		gc, err := gmail.New(context.Background(), hc, e.Endpoints, chunk)
		if err != nil {
			t.Fatal(err)
		}
		write, _ := message(size)
		_, err = gc.Send(context.Background(), "", write)
		var ge *gmail.Error
		if !final || !errors.As(err, &ge) || ge.MaybeSent || ge.Accepted || !errors.Is(err, google.ErrNoToken) {
			t.Fatalf("a %d-byte message whose final request found no token: %v (final request made: %v), want a plain failure, not maybe sent", size, err, final)
		}
		if st := e.Emu.Stats(); st.MessagesSent != 0 {
			t.Fatalf("messages sent = %d", st.MessagesSent)
		}
	}
}
