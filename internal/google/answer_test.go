package google

import (
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// answerOf reads a Google error answer as the clients do.
func answerOf(t *testing.T, code int, header http.Header, body string) Answer {
	t.Helper()
	ge := apiError(t, code, body)
	ge.Header = header
	return ReadAnswer(ge)
}

const disabledInfo = `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"SERVICE_DISABLED","domain":"googleapis.com","metadata":{"service":"sheets.googleapis.com","consumer":"projects/1"}}`

// TestReadAnswerDisabled: the "API not enabled" answer in each shape
// Google sends it, and the answers that only look like it.
func TestReadAnswerDisabled(t *testing.T) {
	tests := []struct {
		name     string
		code     int
		body     string
		disabled bool
		service  string
	}{
		{"legacy item and ErrorInfo", 403,
			`{"error":{"code":403,"message":"m","errors":[{"reason":"accessNotConfigured","domain":"usageLimits"}],"details":[` + disabledInfo + `]}}`, true, "sheets.googleapis.com"},
		{"ErrorInfo only", 403, `{"error":{"code":403,"message":"m","details":[` + disabledInfo + `]}}`, true, "sheets.googleapis.com"},
		{"ErrorInfo after a generic item", 403,
			`{"error":{"code":403,"message":"m","errors":[{"reason":"forbidden"}],"details":[` + disabledInfo + `]}}`, true, "sheets.googleapis.com"},
		{"legacy item only: no service named", 403, `{"error":{"code":403,"message":"Access Not Configured.","errors":[{"reason":"accessNotConfigured"}]}}`, true, ""},
		{"a service that is not Google's is not taken", 403,
			`{"error":{"code":403,"details":[{"reason":"SERVICE_DISABLED","metadata":{"service":"evil.example.com"}}]}}`, true, ""},
		{"another ErrorInfo's service is not taken", 403,
			`{"error":{"code":403,"errors":[{"reason":"accessNotConfigured"}],"details":[{"reason":"RATE_LIMIT_EXCEEDED","metadata":{"service":"drive.googleapis.com"}}]}}`, true, ""},
		{"the same reasons on a 400 are not", 400, `{"error":{"code":400,"errors":[{"reason":"accessNotConfigured"}]}}`, false, ""},
		{"sending turned off", 403, `{"error":{"code":403,"message":"Mail service not enabled","errors":[{"reason":"failedPrecondition"}]}}`, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := answerOf(t, tt.code, nil, tt.body)
			if a.Disabled != tt.disabled || a.Service != tt.service {
				t.Errorf("Disabled %v, Service %q; want %v, %q", a.Disabled, a.Service, tt.disabled, tt.service)
			}
			if (a.Cause() == CauseDisabled) != tt.disabled {
				t.Errorf("Cause = %d", a.Cause())
			}
		})
	}
}

// TestReadAnswerRetryAndQuota: the retry time, in the message or the
// header, and the quota system's metadata.
func TestReadAnswerRetryAndQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now := time.Now() // the bubble's fixed clock
		at := time.Date(2026, 5, 3, 19, 34, 1, 512e6, time.UTC)
		tests := []struct {
			name   string
			header http.Header
			body   string
			retry  time.Time
			quota  map[string]string
		}{
			{"a time in the message", nil,
				`{"error":{"code":429,"message":"User-rate limit exceeded.  Retry after 2026-05-03T19:34:01.512Z (Mail sending)"}}`, at, nil},
			{"a time in an item's message", nil,
				`{"error":{"code":429,"message":"m","errors":[{"message":"Retry after 2026-05-03T19:34:01.512Z.","reason":"rateLimitExceeded"}]}}`, at, nil},
			{"Retry-After in seconds", http.Header{"Retry-After": {"30"}}, `{"error":{"code":429,"message":"m"}}`, now.Add(30 * time.Second), nil},
			{"Retry-After as a date", http.Header{"Retry-After": {at.Format(http.TimeFormat)}}, `{"error":{"code":429,"message":"m"}}`, at.Truncate(time.Second), nil},
			{"Retry-After that does not parse", http.Header{"Retry-After": {"soon"}}, `{"error":{"code":429,"message":"m"}}`, time.Time{}, nil},
			{"a time that does not parse", nil, `{"error":{"code":429,"message":"Retry after tomorrow"}}`, time.Time{}, nil},
			{"quota metadata", nil,
				`{"error":{"code":403,"details":[{"reason":"RATE_LIMIT_EXCEEDED","metadata":{"quota_limit":"QueriesPerMinutePerUser","n":7}}]}}`, time.Time{},
				map[string]string{"quota_limit": "QueriesPerMinutePerUser"}},
			{"quota without metadata", nil, `{"error":{"code":429,"details":[{"reason":"RATE_LIMIT_EXCEEDED"}]}}`, time.Time{}, map[string]string{}},
		}
		for _, tt := range tests {
			a := answerOf(t, 429, tt.header, tt.body)
			if !a.RetryAt.Equal(tt.retry) {
				t.Errorf("%s: RetryAt %v, want %v", tt.name, a.RetryAt, tt.retry)
			}
			if (a.Quota == nil) != (tt.quota == nil) || len(a.Quota) != len(tt.quota) {
				t.Errorf("%s: Quota %v, want %v", tt.name, a.Quota, tt.quota)
			}
			for k, v := range tt.quota {
				if a.Quota[k] != v {
					t.Errorf("%s: Quota[%s] = %q, want %q", tt.name, k, a.Quota[k], v)
				}
			}
		}
	})
}

// TestAnswerCause: status and reason to the cause every API shares.
func TestAnswerCause(t *testing.T) {
	tests := []struct {
		code   int
		reason string
		want   Cause
	}{
		{404, "", CauseNotFound},
		{401, "authError", CauseUnauthorized},
		{429, "", CauseRateLimited},
		{500, "", CauseUnavailable},
		{503, "backendError", CauseUnavailable},
		{403, "insufficientPermissions", CauseScope},
		{403, "ACCESS_TOKEN_SCOPE_INSUFFICIENT", CauseScope},
		{403, "insufficientScopes", CauseScope},
		{403, "rateLimitExceeded", CauseRateLimited},
		{403, "userRateLimitExceeded", CauseRateLimited},
		{403, "domainPolicy", CauseForbidden},
		{403, "", CauseForbidden},
		{400, "invalidArgument", CauseNone},
		{413, "", CauseNone},
		{409, "", CauseNone},
	}
	for _, tt := range tests {
		body := `{"error":{"message":"m"}}`
		if tt.reason != "" {
			body = `{"error":{"message":"m","errors":[{"reason":"` + tt.reason + `"}]}}`
		}
		if got := answerOf(t, tt.code, nil, body).Cause(); got != tt.want {
			t.Errorf("%d %s: Cause %d, want %d", tt.code, tt.reason, got, tt.want)
		}
	}
}

// TestAnswerSays looks in the message and every item's.
func TestAnswerSays(t *testing.T) {
	a := answerOf(t, 429, nil, `{"error":{"code":429,"message":"top","errors":[{"message":"User-rate limit exceeded"}]}}`)
	if !a.Says("User-rate limit") || !a.Says("top") || a.Says("Mail sending") {
		t.Errorf("Says over %q", a.Messages)
	}
	if n := ReadAnswer(nil); n.Code != 0 || n.Cause() != CauseNone || n.Reasons == nil {
		t.Errorf("ReadAnswer(nil) = %+v", n)
	}
}

// TestSentinelsOf: each cause to the client's sentinel for it, none for
// CauseNone.
func TestSentinelsOf(t *testing.T) {
	errs := make([]error, 7)
	for i := range errs {
		errs[i] = fmt.Errorf("sentinel %d", i)
	}
	s := Sentinels{Disabled: errs[0], NotFound: errs[1], Unauthorized: errs[2], Scope: errs[3], RateLimited: errs[4], Unavailable: errs[5], Forbidden: errs[6]}
	for c, want := range map[Cause]error{CauseNone: nil, CauseDisabled: errs[0], CauseNotFound: errs[1], CauseUnauthorized: errs[2],
		CauseScope: errs[3], CauseRateLimited: errs[4], CauseUnavailable: errs[5], CauseForbidden: errs[6]} {
		if got := s.Of(c); got != want {
			t.Errorf("Of(%d) = %v, want %v", c, got, want)
		}
	}
}
