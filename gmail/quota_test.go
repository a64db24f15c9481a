package gmail

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
)

// apiError parses a Google error response as the client library does.
func apiError(t *testing.T, code int, header http.Header, body string) *googleapi.Error {
	t.Helper()
	if header == nil {
		header = http.Header{}
	}
	res := &http.Response{StatusCode: code, Header: header, Body: io.NopCloser(bytes.NewBufferString(body))}
	var ge *googleapi.Error
	if !errors.As(googleapi.CheckResponse(res), &ge) {
		t.Fatalf("not an API error: %d %s", code, body)
	}
	return ge
}

// TestLimitOf: bodies Google is reported to send, beyond the emulator's.
func TestLimitOf(t *testing.T) {
	at := time.Date(2026, 5, 3, 19, 34, 1, 512e6, time.UTC)
	for _, tc := range []struct {
		name   string
		code   int
		header http.Header
		body   string
		limit  Limit
		retry  time.Time
	}{
		{"sending limit", 429, nil,
			`{"error":{"code":429,"message":"User-rate limit exceeded.  Retry after 2026-05-03T19:34:01.512Z (Mail sending)","errors":[{"message":"User-rate limit exceeded.  Retry after 2026-05-03T19:34:01.512Z (Mail sending)","domain":"usageLimits","reason":"rateLimitExceeded"}],"status":"RESOURCE_EXHAUSTED"}}`,
			SendingLimit, at},
		{"a per-user bandwidth limit with its time", 429, nil,
			`{"error":{"code":429,"message":"User-rate limit exceeded.  Retry after 2026-05-03T19:34:01.512Z","errors":[{"message":"User-rate limit exceeded.  Retry after 2026-05-03T19:34:01.512Z","domain":"usageLimits","reason":"rateLimitExceeded"}],"status":"RESOURCE_EXHAUSTED"}}`,
			UserRateLimit, at},
		{"a per-user query quota as a 403 without details", 403, nil,
			`{"error":{"code":403,"message":"Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user' of service 'gmail.googleapis.com' for consumer 'project_number:1'.","errors":[{"message":"…","domain":"usageLimits","reason":"rateLimitExceeded"}],"status":"PERMISSION_DENIED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"googleapis.com","metadata":{"quota_limit":"QueriesPerMinutePerUser"}}]}}`,
			UserRateLimit, time.Time{}},
		{"a bare 429 with a Retry-After date", 429, http.Header{"Retry-After": {at.Format(http.TimeFormat)}},
			`{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","errors":[{"message":"Resource has been exhausted (e.g. check quota).","domain":"global","reason":"rateLimitExceeded"}],"status":"RESOURCE_EXHAUSTED"}}`,
			OtherRateLimit, at.Truncate(time.Second)},
		{"a 429 without a body", 429, nil, ``, OtherRateLimit, time.Time{}},
		{"a missing scope", 403, nil,
			`{"error":{"code":403,"message":"Request had insufficient authentication scopes.","errors":[{"message":"Insufficient Permission","domain":"global","reason":"insufficientPermissions"}],"status":"PERMISSION_DENIED"}}`,
			NoLimit, time.Time{}},
		{"a 503", 503, nil, `{"error":{"code":503,"message":"The service is currently unavailable.","status":"UNAVAILABLE"}}`, NoLimit, time.Time{}},
	} {
		limit, retry := limitOf(apiError(t, tc.code, tc.header, tc.body))
		if limit != tc.limit || !retry.Equal(tc.retry) {
			t.Errorf("%s: limit %d retry %v, want %d %v", tc.name, limit, retry, tc.limit, tc.retry)
		}
	}
}

// TestChunkThrottle: which 429 answers to a chunk the client may retry.
func TestChunkThrottle(t *testing.T) {
	now := time.Date(2026, 5, 3, 12, 0, 0, 0, time.UTC)
	body := func(msg, reason string) string {
		return `{"error":{"code":429,"message":"` + msg + `","errors":[{"message":"` + msg + `","domain":"usageLimits","reason":"` + reason + `"}]}}`
	}
	for _, tc := range []struct {
		name    string
		body    string
		elapsed time.Duration // since the first 429 of the upload
		retry   bool
	}{
		{"sending limit", body("User-rate limit exceeded.  Retry after 2026-05-03T17:00:00.000Z (Mail sending)", "rateLimitExceeded"), 0, false},
		{"daily quota", body("Daily Limit Exceeded", "dailyLimitExceeded"), 0, false},
		{"rate limit, retry time within the wait", body("User-rate limit exceeded.  Retry after 2026-05-03T12:00:30.000Z", "rateLimitExceeded"), 0, true},
		{"rate limit, retry time past the wait", body("User-rate limit exceeded.  Retry after 2026-05-03T12:05:00.000Z", "rateLimitExceeded"), 0, false},
		{"rate limit, no time, within the wait", body("User Rate Limit Exceeded", "userRateLimitExceeded"), 59 * time.Second, true},
		{"rate limit, no time, wait used up", body("User Rate Limit Exceeded", "userRateLimitExceeded"), time.Minute, false},
	} {
		c := &chunkThrottle{wait: time.Minute, now: func() time.Time { return now.Add(tc.elapsed) }, first: now}
		res := &http.Response{StatusCode: 429, Header: http.Header{}, Body: io.NopCloser(bytes.NewBufferString(tc.body))}
		got, err := c.check(res)
		switch {
		case tc.retry && (err != nil || got == nil):
			t.Errorf("%s: %v, want the 429 passed on for a retry", tc.name, err)
		case tc.retry:
			if b, _ := io.ReadAll(got.Body); string(b) != tc.body {
				t.Errorf("%s: body passed on %q, want it whole", tc.name, b)
			}
		default:
			var ge *googleapi.Error
			if got != nil || !errors.As(err, &ge) || ge.Code != 429 {
				t.Errorf("%s: %v %v, want an error carrying Gmail's 429", tc.name, got, err)
			}
		}
	}
}
