package gmail_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/emulator/gmailsvc"
	"github.com/drivemail/drivemail/gmail"
)

// counted is a writer that counts its runs: an upload restarted on a
// new session runs it again, from the first byte.
func counted(write gmail.WriteFunc, runs *atomic.Int32) gmail.WriteFunc {
	return func(ctx context.Context, w io.Writer) error {
		runs.Add(1)
		return write(ctx, w)
	}
}

// bodyBytes counts the message bytes the transport took from the
// bodies of upload requests: what can have reached Gmail.
type bodyBytes struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (b *bodyBytes) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut && r.Body != nil && r.ContentLength > 0 {
		r = r.Clone(r.Context())
		r.Body = &countingBody{ReadCloser: r.Body, n: &b.n}
	}
	return b.base.RoundTrip(r)
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	k, err := c.ReadCloser.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// big is a message over gmail.OneRequestMax, which would take many
// chunks: of known length, it goes in one request streamed as written.
const big = 6 << 20

// TestOneRequestWhenTheLengthIsKnown: a message of known length goes in
// one request after the session opens, however many chunks it would
// have taken, and Gmail stores it byte for byte; one that fits a chunk
// goes in one request too, once written.
func TestOneRequestWhenTheLengthIsKnown(t *testing.T) {
	for _, size := range []int{10_000, big, big + 7*chunk + 123} {
		e := newEnv(t)
		write, msg := message(size)
		sent, err := e.gc.Send(context.Background(), "", write, gmail.Length(int64(len(msg))), gmail.ExpectedSize(int64(len(msg))))
		e.sentOnce(t, sent, err, msg)
		if st := e.Emu.Stats(); st.Paths[openPath] != 1 || st.Paths[chunkPath] != 1 {
			t.Errorf("%d bytes: %d sessions, %d upload requests; want 1 and 1", len(msg), st.Paths[openPath], st.Paths[chunkPath])
		}
	}
}

// TestOneRequestFaults: a failure in the middle of the one request is
// resumed from the ring when Gmail holds bytes the ring still has, and
// restarted on a new session, the writer run again, when it holds fewer;
// either way the message goes once. A lost answer is asked for; an
// outcome nobody can tell says the message may have been sent.
func TestOneRequestFaults(t *testing.T) {
	const path = "/upload/gmail/v1/users/me/messages/send"
	for _, tt := range []struct {
		name      string
		faults    []emulator.Fault
		transport func(http.RoundTripper) http.RoundTripper
		runs      int32 // writer runs: 2 when restarted from the writer
		puts      int64 // upload requests Gmail handled, status queries included (an injected answer is not one)
		fails     bool
		maybeSent bool
		accepted  bool
		stored    int64
	}{
		{name: "broken past the middle: resumed from the ring", transport: func(b http.RoundTripper) http.RoundTripper {
			return breakChunk(b, 1, big-100_000)
		}, runs: 1, puts: 3},
		{name: "answered 503 having read it whole, Gmail holding none: restarted", faults: []emulator.Fault{
			{Method: "PUT", PathPrefix: path, Status: 503},
		}, runs: 2, puts: 2},
		{name: "its answer lost: asked again, not sent again", faults: []emulator.Fault{
			{Method: "PUT", PathPrefix: path, CutResponseAfter: ptr(int64(0))},
		}, runs: 1, puts: 2},
		{name: "its answer cut after its 200, and every status", faults: []emulator.Fault{
			{Method: "PUT", PathPrefix: path, CutResponseAfter: ptr(int64(0)), Times: 100},
		}, runs: 1, fails: true, maybeSent: true, accepted: true, stored: 1},
		{name: "answered 503 for good", faults: []emulator.Fault{
			{Method: "PUT", PathPrefix: path, Status: 503, Times: 100},
		}, runs: 1, fails: true, maybeSent: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			hc := e.Client(user, emutest.ScopeGmailSend)
			if tt.transport != nil {
				hc.Transport = tt.transport(hc.Transport)
			}
			gc, err := gmail.New(context.Background(), hc, e.Endpoints, chunk, gmail.WithChunkTimeout(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			e.Inject(tt.faults...)
			write, msg := message(big) // past the ring of a chunk
			var runs atomic.Int32
			sent, err := gc.Send(context.Background(), "", counted(write, &runs), gmail.Length(int64(len(msg))))
			st := e.Emu.Stats()
			if runs.Load() != tt.runs {
				t.Errorf("the writer ran %d times, want %d", runs.Load(), tt.runs)
			}
			if !tt.fails {
				e.sentOnce(t, sent, err, msg)
				if st.Paths[chunkPath] != tt.puts {
					t.Errorf("%d upload requests, want %d", st.Paths[chunkPath], tt.puts)
				}
				return
			}
			var ge *gmail.Error
			if !errors.As(err, &ge) {
				t.Fatalf("err = %v, want a *gmail.Error", err)
			}
			if ge.MaybeSent != tt.maybeSent || ge.Accepted != tt.accepted || st.MessagesSent != tt.stored {
				t.Errorf("MaybeSent %v, Accepted %v, %d sent; want %v, %v, %d", ge.MaybeSent, ge.Accepted, st.MessagesSent, tt.maybeSent, tt.accepted, tt.stored)
			}
			if strings.Contains(err.Error(), "upload_id") {
				t.Errorf("error %q carries the session URI", err)
			}
		})
	}
}

// TestLengthOtherThanWrittenSendsNothing: a writer whose message is
// longer or shorter than the length announced fails the request before
// its last byte: Gmail holds less than the announced length, completes
// nothing, and the session is cancelled. (So a bug in the computed
// length can never send a truncated or padded message.) A writer that
// fails sends nothing either.
func TestLengthOtherThanWrittenSendsNothing(t *testing.T) {
	for _, tt := range []struct {
		name  string
		delta int64 // announced length less the written one
		fail  bool
		want  error
	}{
		{name: "one byte longer than announced", delta: -1},
		{name: "one byte shorter than announced", delta: 1},
		{name: "many bytes shorter", delta: 100_000},
		{name: "the writer fails", fail: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			hc := e.Client(user, emutest.ScopeGmailSend)
			bb := &bodyBytes{base: hc.Transport}
			hc.Transport = bb
			gc, err := gmail.New(context.Background(), hc, e.Endpoints, chunk)
			if err != nil {
				t.Fatal(err)
			}
			write, msg := message(big)
			if tt.fail {
				write = failingAfter(msg, len(msg)-1)
			}
			announced := int64(len(msg)) + tt.delta
			_, err = gc.Send(context.Background(), "", write, gmail.Length(announced))
			var ge *gmail.Error
			var we *gmail.WriteError
			switch {
			case tt.fail && !errors.As(err, &we):
				t.Fatalf("err = %v, want the writer's failure", err)
			case !tt.fail && (!errors.As(err, &ge) || ge.MaybeSent || ge.Accepted):
				t.Fatalf("err = %v, want a failure that sent nothing", err)
			}
			st := e.Emu.Stats()
			if st.MessagesSent != 0 || st.UploadsFinished != 0 {
				t.Errorf("%d sent, %d uploads finished; want none", st.MessagesSent, st.UploadsFinished)
			}
			if got := bb.n.Load(); got >= announced {
				t.Errorf("the request carried %d bytes of the %d announced: its last byte left", got, announced)
			}
			if st.Paths[cancelPath] != 1 {
				t.Errorf("%d sessions cancelled, want the one", st.Paths[cancelPath])
			}
		})
	}
}

// TestRateLimitEndsTheSession: a 403 rate limit on the request that
// completes the upload ends its session (Google's guide: any 4xx during a
// resumable upload), and so does a 429 Gmail ends it with (the status
// query then gets 404): nothing was sent, so the upload begins again on
// a new session and the message goes once, in one request or in chunks.
// A limit that does not lift within the wait fails as that limit, with
// nothing sent, not as a session "maybe sent".
func TestRateLimitEndsTheSession(t *testing.T) {
	for _, tt := range []struct {
		name  string
		fault gmailsvc.QuotaFault
		fails bool
	}{
		{name: "403 userRateLimitExceeded", fault: gmailsvc.QuotaFault{Kind: gmailsvc.UserRateLimit, At: gmailsvc.AtEnd, Status: 403, Legacy: true}},
		{name: "403 rateLimitExceeded", fault: gmailsvc.QuotaFault{Kind: gmailsvc.ProjectRateLimit, At: gmailsvc.AtEnd, Status: 403}},
		{name: "429 that ends the session", fault: gmailsvc.QuotaFault{Kind: gmailsvc.UserRateLimit, At: gmailsvc.AtEnd, EndSession: true}},
		{name: "429 that ends the session, for good", fault: gmailsvc.QuotaFault{Kind: gmailsvc.UserRateLimit, At: gmailsvc.AtEnd, EndSession: true, Times: 1000}, fails: true},
	} {
		for _, whole := range []bool{true, false} {
			name := tt.name + ", in chunks"
			if whole {
				name = tt.name + ", in one request"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				if err := e.Emu.Gmail().AddQuotaFault(tt.fault); err != nil {
					t.Fatal(err)
				}
				gc, _ := countingClient(t, e, gmail.WithRateLimitWait(500*time.Millisecond))
				write, msg := message(3 * chunk)
				var opts []gmail.UploadOption
				if whole {
					write, msg = message(big)
					opts = append(opts, gmail.Length(int64(len(msg))))
				}
				var runs atomic.Int32
				sent, err := gc.Send(context.Background(), "", counted(write, &runs), opts...)
				st := e.Emu.Stats()
				if !tt.fails {
					e.sentOnce(t, sent, err, msg)
					if runs.Load() != 2 || st.Paths[openPath] != 2 {
						t.Errorf("the writer ran %d times on %d sessions; want 2 and 2", runs.Load(), st.Paths[openPath])
					}
					return
				}
				var ge *gmail.Error
				if !errors.As(err, &ge) || !errors.Is(err, gmail.ErrUserRateLimit) || ge.MaybeSent || ge.Accepted {
					t.Fatalf("err = %v (%+v), want the rate limit, nothing sent", err, ge)
				}
				if st.MessagesSent != 0 {
					t.Errorf("%d messages sent", st.MessagesSent)
				}
			})
		}
	}
}
