package gmail_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/emulator/gmailsvc"
	"github.com/drivemail/drivemail/gmail"
)

// finalCounter counts the upload requests that carry the end of the
// message (a chunk with its total), and the answers that name a limit
// (429).
type finalCounter struct {
	base    http.RoundTripper
	n       atomic.Int32
	limited atomic.Int32
}

func (f *finalCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if cr := r.Header.Get("Content-Range"); cr != "" && !strings.HasSuffix(cr, "/*") {
		f.n.Add(1)
	}
	res, err := f.base.RoundTrip(r)
	if err == nil && res.StatusCode == http.StatusTooManyRequests {
		f.limited.Add(1)
	}
	return res, err
}

// countingClient is ana's Gmail client through a finalCounter.
func countingClient(t *testing.T, e *env, opts ...gmail.Option) (*gmail.Client, *finalCounter) {
	t.Helper()
	hc := e.Client(user, emutest.ScopeGmailSend)
	fc := &finalCounter{base: hc.Transport}
	hc.Transport = fc
	gc, err := gmail.New(context.Background(), hc, e.Endpoints, chunk, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return gc, fc
}

// TestSendingLimitIsNotRetried: Gmail's daily sending limit ends the
// send at its first answer, with the time Gmail gave, for a multipart
// and for a resumable upload. The Google client retries a 429 on a
// resumable chunk until its chunk retry deadline (here 4 s; 4 minutes by
// default), which used to hold a send that long for a limit that lasts
// hours.
func TestSendingLimitIsNotRetried(t *testing.T) {
	for _, size := range []int{10_000, 3 * chunk} {
		e := newEnv(t)
		until := time.Now().Add(5 * time.Hour)
		if err := e.Emu.Gmail().AddQuotaFault(gmailsvc.QuotaFault{Kind: gmailsvc.SendingLimit, User: user, For: gmailsvc.Duration(5 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		gc, fc := countingClient(t, e, gmail.WithChunkTimeout(2*time.Second))
		write, _ := message(size)
		_, err := gc.Send(context.Background(), "", write)
		var ge *gmail.Error
		if !errors.As(err, &ge) || !errors.Is(err, gmail.ErrSendingLimit) || ge.Limit != gmail.SendingLimit || ge.MaybeSent || ge.Code != 429 {
			t.Fatalf("%d bytes: err = %v (%+v), want the sending limit, nothing sent", size, err, ge)
		}
		if ge.RetryAfter.Sub(until).Abs() > time.Minute {
			t.Errorf("%d bytes: RetryAfter %v, want about %v", size, ge.RetryAfter, until)
		}
		if n := fc.n.Load(); n != 1 {
			t.Errorf("%d bytes: the end of the message went %d times, want once (no retries)", size, n)
		}
		if st := e.Emu.Stats(); st.MessagesSent != 0 {
			t.Errorf("%d bytes: %d messages sent", size, st.MessagesSent)
		}
		if strings.Contains(err.Error(), "Mail sending") || strings.Contains(err.Error(), "Retry after") {
			t.Errorf("error text %q carries Google's message", err)
		}
	}
}

// TestRateLimitedChunkRetried: a per-minute limit on the last chunk is
// short; the upload is tried again (Gmail, asked how far it got, holds
// every byte and completes it) and the message goes once.
func TestRateLimitedChunkRetried(t *testing.T) { synctest.Test(t, testRateLimitedChunkRetried) }

func testRateLimitedChunkRetried(t *testing.T) {
	e := newBubbleEnv(t)
	if err := e.Emu.Gmail().AddQuotaFault(gmailsvc.QuotaFault{Kind: gmailsvc.UserRateLimit, At: gmailsvc.AtEnd, Times: 2}); err != nil {
		t.Fatal(err)
	}
	gc, fc := countingClient(t, e)
	write, msg := message(3 * chunk)
	sent, err := gc.Send(context.Background(), "", write)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got := e.Message(user, sent.ID); string(got) != string(msg) || e.Emu.Stats().MessagesSent != 1 || fc.limited.Load() != 2 {
		t.Errorf("%d messages sent after %d answers of 429; want 1 message after 2", e.Emu.Stats().MessagesSent, fc.limited.Load())
	}
}

// TestRateLimitRetriesAreBounded: a per-minute limit that does not lift
// is retried for the rate-limit wait only, not for the chunk retry
// deadline, and is reported by kind.
func TestRateLimitRetriesAreBounded(t *testing.T) { synctest.Test(t, testRateLimitRetriesAreBounded) }

func testRateLimitRetriesAreBounded(t *testing.T) {
	for _, tc := range []struct {
		kind gmailsvc.QuotaKind
		want error
	}{
		{gmailsvc.UserRateLimit, gmail.ErrUserRateLimit},
		{gmailsvc.ProjectRateLimit, gmail.ErrProjectRateLimit},
	} {
		e := newBubbleEnv(t)
		if err := e.Emu.Gmail().AddQuotaFault(gmailsvc.QuotaFault{Kind: tc.kind, At: gmailsvc.AtEnd, Times: 1000}); err != nil {
			t.Fatal(err)
		}
		// The client would retry for 20 s (twice the chunk timeout).
		gc, fc := countingClient(t, e, gmail.WithChunkTimeout(10*time.Second), gmail.WithRateLimitWait(300*time.Millisecond))
		write, _ := message(3 * chunk)
		_, err := gc.Send(context.Background(), "", write)
		var ge *gmail.Error
		if !errors.As(err, &ge) || !errors.Is(err, tc.want) || !errors.Is(err, gmail.ErrRateLimited) || ge.MaybeSent {
			t.Fatalf("%s: err = %v, want %v, nothing sent", tc.kind, err, tc.want)
		}
		// Backoff from 100 ms doubling: about four tries fit in 300 ms.
		if n := fc.limited.Load(); n < 2 || n > 8 {
			t.Errorf("%s: %d answers of 429, want a few retries within the wait", tc.kind, n)
		}
		if e.Emu.Stats().MessagesSent != 0 {
			t.Errorf("%s: a message was sent", tc.kind)
		}
	}
}

// TestLimitsToldApart: each of Gmail's limits, in either body Google
// sends, is classified by its reason and details.
func TestLimitsToldApart(t *testing.T) {
	for _, tc := range []struct {
		fault gmailsvc.QuotaFault
		limit gmail.Limit
		want  error
	}{
		{gmailsvc.QuotaFault{Kind: gmailsvc.UserRateLimit}, gmail.UserRateLimit, gmail.ErrUserRateLimit},
		{gmailsvc.QuotaFault{Kind: gmailsvc.UserRateLimit, Status: 403}, gmail.UserRateLimit, gmail.ErrUserRateLimit},
		{gmailsvc.QuotaFault{Kind: gmailsvc.UserRateLimit, Status: 403, Legacy: true}, gmail.UserRateLimit, gmail.ErrUserRateLimit},
		{gmailsvc.QuotaFault{Kind: gmailsvc.ProjectRateLimit}, gmail.ProjectRateLimit, gmail.ErrProjectRateLimit},
		{gmailsvc.QuotaFault{Kind: gmailsvc.ProjectRateLimit, Status: 403}, gmail.ProjectRateLimit, gmail.ErrProjectRateLimit},
		{gmailsvc.QuotaFault{Kind: gmailsvc.ProjectRateLimit, Status: 403, Legacy: true}, gmail.ProjectRateLimit, gmail.ErrProjectRateLimit},
		{gmailsvc.QuotaFault{Kind: gmailsvc.DailyLimit}, gmail.DailyQuota, gmail.ErrDailyQuota},
	} {
		e := newEnv(t)
		if err := e.Emu.Gmail().AddQuotaFault(tc.fault); err != nil {
			t.Fatal(err)
		}
		gc, fc := countingClient(t, e)
		write, _ := message(3 * chunk)
		_, err := gc.Send(context.Background(), "", write)
		var ge *gmail.Error
		if !errors.As(err, &ge) || !errors.Is(err, tc.want) || ge.Limit != tc.limit || ge.MaybeSent || fc.n.Load() != 0 {
			t.Errorf("%+v: err = %v (%+v), want %v before the message went", tc.fault, err, ge, tc.want)
		}
	}
}
