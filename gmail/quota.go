package gmail

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/drivemail/drivemail/internal/google"
)

// Limit is which of Gmail's limits an answer reports.
type Limit int

// Gmail's limits, as Google's answers tell them apart: the message and
// reason of the error, and the ErrorInfo in its details.
const (
	NoLimit Limit = iota
	// SendingLimit is the account's daily sending limit: 429 "User-rate
	// limit exceeded.  Retry after T (Mail sending)". It lasts hours.
	SendingLimit
	// DailyQuota is the Google Cloud project's daily quota (403
	// dailyLimitExceeded): every user of this drivemail hits it.
	DailyQuota
	// UserRateLimit is a per-user limit of requests per minute
	// (userRateLimitExceeded, an ErrorInfo whose quota is per user) or of
	// bandwidth and concurrent requests ("User-rate limit exceeded").
	UserRateLimit
	// ProjectRateLimit is the project's limit of requests per minute,
	// shared by every user of this drivemail (rateLimitExceeded).
	ProjectRateLimit
	// OtherRateLimit is a 429 that names none of the above.
	OtherRateLimit
)

// limitOf reads which limit ge reports, and the time Gmail says to retry
// after (zero when it names none).
func limitOf(ge *googleapi.Error) (Limit, time.Time) {
	if ge == nil {
		return NoLimit, time.Time{}
	}
	return limitIn(google.ReadAnswer(ge))
}

// limitIn is limitOf for an answer already read.
func limitIn(a google.Answer) (Limit, time.Time) {
	retry := a.RetryAt
	switch {
	case a.Says("(Mail sending)"):
		return SendingLimit, retry
	case a.Reasons["dailyLimitExceeded"]:
		return DailyQuota, retry
	case a.Reasons["userRateLimitExceeded"]:
		return UserRateLimit, retry
	}
	if q := a.Quota; q != nil {
		if strings.Contains(q["quota_unit"], "{user}") || strings.Contains(strings.ToLower(q["quota_limit"]), "peruser") {
			return UserRateLimit, retry
		}
		return ProjectRateLimit, retry
	}
	switch {
	case a.Says("User-rate limit exceeded"):
		return UserRateLimit, retry
	case a.Reasons["rateLimitExceeded"] && a.Code != http.StatusTooManyRequests:
		return ProjectRateLimit, retry
	case a.Reasons["rateLimitExceeded"] || a.Code == http.StatusTooManyRequests:
		return OtherRateLimit, retry
	}
	return NoLimit, time.Time{}
}

// DefaultRateLimitWait bounds how long a resumable chunk answered 429 for
// a per-minute rate limit is retried: about one window of the limit.
const DefaultRateLimitWait = time.Minute

// maxErrorBody bounds the error body read to classify a 429.
const maxErrorBody = 64 << 10

// chunkThrottle decides, for an upload request Gmail answered with a
// rate limit (429, or 403 rateLimitExceeded or userRateLimitExceeded),
// whether trying again can help. A status code does not tell: the daily
// sending limit is a 429 too, and only the body says which limit it is
// and when it lifts. So the transport of an upload (uploadWatch) hands
// it each such answer before the session reads it, and an answer not
// worth retrying becomes errNoRetry, which the session does not retry.
// The wait is counted from the upload's first rate limit, across the
// restarts of its session (a 403 ends the session).
type chunkThrottle struct {
	wait time.Duration // how long rate-limited chunks may be retried
	now  func() time.Time

	mu    sync.Mutex
	first time.Time // the first 429 of this upload
}

// errNoRetry is a rate limit not worth retrying, carrying Gmail's
// answer: errors.As finds the *googleapi.Error it wraps.
type errNoRetry struct{ ge *googleapi.Error }

func (e *errNoRetry) Error() string {
	return google.ErrorText("gmail", "upload", e.ge.Code, google.ErrorReason(e.ge), errors.New("not retried"))
}

func (e *errNoRetry) Unwrap() error { return e.ge }

// check looks at a chunk's 429 or 403 answer and returns it unchanged
// (its body restored) when it is not a limit (a 403 for another reason)
// or a retry may succeed, or errNoRetry when it cannot: the daily
// sending limit and the project's daily quota last hours, and a rate
// limit that names a retry time past the wait, or has been retried for
// the whole wait, will not lift in time.
func (c *chunkThrottle) check(res *http.Response) (*http.Response, error) {
	body, err := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	probe := *res
	probe.Body = io.NopCloser(bytes.NewReader(body))
	var ge *googleapi.Error
	if !errors.As(googleapi.CheckResponse(&probe), &ge) {
		return res, nil
	}
	limit, retry := limitOf(ge)
	if limit == NoLimit {
		return res, nil
	}
	now := c.now()
	c.mu.Lock()
	if c.first.IsZero() {
		c.first = now
	}
	deadline := c.first.Add(c.wait)
	c.mu.Unlock()
	switch {
	case limit == SendingLimit, limit == DailyQuota:
	case !retry.IsZero() && retry.After(deadline):
	case !now.Before(deadline):
	default:
		return res, nil
	}
	return nil, &errNoRetry{ge: ge}
}
