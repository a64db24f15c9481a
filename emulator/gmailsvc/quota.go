package gmailsvc

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/emulator/internal/media"
)

// QuotaKind names one of Gmail's limits.
type QuotaKind string

// The limits a QuotaFault can answer with, each with Google's body.
const (
	// SendingLimit is the account's daily sending limit: while it lasts,
	// every messages.send completes with 429 "User-rate limit exceeded.
	// Retry after <time> (Mail sending)". Drafts are not sends.
	SendingLimit QuotaKind = "sending_limit"
	// UserRateLimit is the per-user per-minute quota.
	UserRateLimit QuotaKind = "user_rate_limit"
	// ProjectRateLimit is the per-project per-minute quota.
	ProjectRateLimit QuotaKind = "project_rate_limit"
	// DailyLimit is the project's daily quota (403 dailyLimitExceeded).
	DailyLimit QuotaKind = "daily_limit"
)

// Where in an upload a QuotaFault answers.
const (
	// AtStart is the request that begins a call (the one that opens an
	// upload, or any other Gmail request).
	AtStart = "start"
	// AtEnd is the request that completes an upload, or a JSON send or
	// draft: for a resumable upload, its last chunk, which the Go client
	// retries after a 429.
	AtEnd = "end"
)

// Duration is a time.Duration that JSON spells "5h".
type Duration = core.Duration

// ProjectNumber is the consumer project Gmail's quota errors name.
const ProjectNumber = "123456789012"

// QuotaFault makes Gmail answer with one of its quota errors, as
// POST /_emulator/gmail/quota takes it.
type QuotaFault struct {
	Kind QuotaKind `json:"kind"`
	// User limits the fault to one account's requests; empty: anyone's.
	User string `json:"user,omitempty"`
	// Status of a rate limit: 429 (default) or 403, as Google answers
	// either. The sending limit is always 429, the daily limit 403.
	Status int `json:"status,omitempty"`
	// Legacy answers a rate limit with the body of Google's error guide
	// (reason userRateLimitExceeded or rateLimitExceeded, no details)
	// instead of the quota system's (reason rateLimitExceeded, an
	// ErrorInfo in details).
	Legacy bool `json:"legacy,omitempty"`
	// At is AtStart (default) or AtEnd; the sending limit is always AtEnd.
	At string `json:"at,omitempty"`
	// Times is how many requests the fault answers (default 1); the
	// sending limit ignores it and lasts For.
	Times int `json:"times,omitempty"`
	// For is how long the sending limit lasts (default 24h); the
	// "Retry after" time is its end.
	For Duration `json:"for,omitempty"`
	// EndSession, with a 429 at the end of a resumable upload, also
	// ends the session, as Google's guide says any 4xx does (a 403 always
	// does): the client's resent last chunk then gets 404.
	EndSession bool `json:"end_session,omitempty"`
}

// quotas holds the armed quota faults.
type quotas struct {
	mu      sync.Mutex
	faults  []*QuotaFault
	sending map[string]time.Time // user → end of the sending limit
}

// maxQuotaFaults bounds the armed faults.
const maxQuotaFaults = 1000

// AddQuotaFault arms f.
func (s *Service) AddQuotaFault(f QuotaFault) error {
	f.User = strings.ToLower(strings.TrimSpace(f.User))
	switch f.Kind {
	case SendingLimit:
		if f.User == "" {
			return errors.New(`sending_limit needs "user": the limit is an account's`)
		}
		if f.For < 0 || f.Status != 0 && f.Status != http.StatusTooManyRequests || f.At != "" && f.At != AtEnd {
			return errors.New(`sending_limit takes "user" and "for" (a duration) only`)
		}
		if f.For == 0 {
			f.For = core.Duration(24 * time.Hour)
		}
		s.quota.mu.Lock()
		defer s.quota.mu.Unlock()
		if s.quota.sending == nil {
			s.quota.sending = map[string]time.Time{}
		}
		s.quota.sending[f.User] = s.deps.Now().Add(time.Duration(f.For))
		return nil
	case UserRateLimit, ProjectRateLimit, DailyLimit:
	default:
		return fmt.Errorf("kind %q: want %s, %s, %s or %s", f.Kind, SendingLimit, UserRateLimit, ProjectRateLimit, DailyLimit)
	}
	switch {
	case f.Status == 0 && f.Kind == DailyLimit:
		f.Status = http.StatusForbidden
	case f.Status == 0:
		f.Status = http.StatusTooManyRequests
	case f.Status != http.StatusTooManyRequests && f.Status != http.StatusForbidden || f.Kind == DailyLimit && f.Status != http.StatusForbidden:
		return errors.New("status must be 429 or 403 (the daily limit: 403)")
	}
	if f.At == "" {
		f.At = AtStart
	}
	if f.At != AtStart && f.At != AtEnd || f.Times < 0 || f.For != 0 {
		return errors.New(`"at" is "start" or "end", "times" is not negative, and "for" is for sending_limit only`)
	}
	if f.EndSession && (f.At != AtEnd || f.Status != http.StatusTooManyRequests) {
		return errors.New(`"end_session" goes with "at": "end" and status 429: a 403 ends the session anyway`)
	}
	if f.Times == 0 {
		f.Times = 1
	}
	s.quota.mu.Lock()
	defer s.quota.mu.Unlock()
	if len(s.quota.faults) >= maxQuotaFaults {
		return fmt.Errorf("%d quota faults are armed already: clear them first", maxQuotaFaults)
	}
	s.quota.faults = append(s.quota.faults, &f)
	return nil
}

// ClearQuotaFaults disarms every quota fault and ends every sending limit.
func (s *Service) ClearQuotaFaults() {
	s.quota.mu.Lock()
	defer s.quota.mu.Unlock()
	s.quota.faults, s.quota.sending = nil, nil
}

// quotaRefusal returns Google's answer when an armed fault applies to a
// request of user at point at; send says the request sends mail.
func (s *Service) quotaRefusal(user, at string, send bool) (media.Result, bool) {
	user = strings.ToLower(user)
	now := s.deps.Now()
	s.quota.mu.Lock()
	defer s.quota.mu.Unlock()
	if until, ok := s.quota.sending[user]; ok && send && at == AtEnd {
		if now.Before(until) {
			return sendingLimitError(until), true
		}
		delete(s.quota.sending, user)
	}
	for i, f := range s.quota.faults {
		if f.At != at || f.User != "" && f.User != user {
			continue
		}
		f.Times--
		if f.Times <= 0 {
			s.quota.faults = append(s.quota.faults[:i], s.quota.faults[i+1:]...)
		}
		res := rateLimitError(*f)
		res.EndSession = f.EndSession
		return res, true
	}
	return media.Result{}, false
}

// googleError is Google's error body with details, which core's lacks.
type googleError struct {
	Error struct {
		Code    int              `json:"code"`
		Message string           `json:"message"`
		Errors  []core.ErrorItem `json:"errors"`
		Status  string           `json:"status,omitempty"`
		Details []any            `json:"details,omitempty"`
	} `json:"error"`
}

func newGoogleError(code int, domain, reason, message string) googleError {
	var e googleError
	e.Error.Code, e.Error.Message = code, message
	e.Error.Errors = []core.ErrorItem{{Message: message, Domain: domain, Reason: reason}}
	e.Error.Status = map[int]string{403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED"}[code]
	return e
}

// sendingLimitError is Gmail's answer to a send past the account's daily
// sending limit: the error guide's 429 "User-rate limit exceeded" with
// "(Mail sending)" and the time to retry, in the shape Gmail's other
// "User-rate limit exceeded.  Retry after" errors are reported with
// (reason rateLimitExceeded, domain usageLimits).
func sendingLimitError(until time.Time) media.Result {
	msg := "User-rate limit exceeded.  Retry after " + until.UTC().Format("2006-01-02T15:04:05.000Z") + " (Mail sending)"
	return media.Result{Status: http.StatusTooManyRequests, Body: newGoogleError(http.StatusTooManyRequests, "usageLimits", "rateLimitExceeded", msg)}
}

// rateLimitError is Google's body for a rate or daily limit: the error
// guide's legacy bodies ("User Rate Limit Exceeded", "Rate Limit
// Exceeded", "Daily Limit Exceeded"), or the quota system's, which names
// the limit in its message and in an ErrorInfo.
func rateLimitError(f QuotaFault) media.Result {
	if f.Kind == DailyLimit {
		return media.Result{Status: f.Status, Body: newGoogleError(f.Status, "usageLimits", "dailyLimitExceeded", "Daily Limit Exceeded")}
	}
	if f.Legacy {
		reason, msg := "userRateLimitExceeded", "User Rate Limit Exceeded"
		if f.Kind == ProjectRateLimit {
			reason, msg = "rateLimitExceeded", "Rate Limit Exceeded"
		}
		return media.Result{Status: f.Status, Body: newGoogleError(f.Status, "usageLimits", reason, msg)}
	}
	limit, limitName, value, unit := "Queries per minute per user", "QueriesPerMinutePerUser", "15000", "1/min/{project}/{user}"
	if f.Kind == ProjectRateLimit {
		limit, limitName, value, unit = "Queries per minute", "QueriesPerMinutePerProject", "1200000", "1/min/{project}"
	}
	msg := "Quota exceeded for quota metric 'Queries' and limit '" + limit + "' of service 'gmail.googleapis.com' for consumer 'project_number:" + ProjectNumber + "'."
	e := newGoogleError(f.Status, "usageLimits", "rateLimitExceeded", msg)
	e.Error.Details = []any{
		map[string]any{
			"@type":  "type.googleapis.com/google.rpc.ErrorInfo",
			"reason": "RATE_LIMIT_EXCEEDED",
			"domain": "googleapis.com",
			"metadata": map[string]string{
				"service":           "gmail.googleapis.com",
				"consumer":          "projects/" + ProjectNumber,
				"quota_metric":      "gmail.googleapis.com/default",
				"quota_limit":       limitName,
				"quota_limit_value": value,
				"quota_location":    "global",
				"quota_unit":        unit,
			},
		},
		map[string]any{
			"@type": "type.googleapis.com/google.rpc.Help",
			"links": []map[string]string{{
				"description": "Request a higher quota limit.",
				"url":         "https://cloud.google.com/docs/quotas/help/request_increase",
			}},
		},
	}
	return media.Result{Status: f.Status, Body: e}
}

// registerQuota adds the /_emulator/gmail/quota controls.
func (s *Service) registerQuota(mux *http.ServeMux) {
	mux.HandleFunc("POST /_emulator/gmail/quota", func(w http.ResponseWriter, r *http.Request) {
		var f QuotaFault
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			core.WriteError(w, http.StatusBadRequest, "badRequest", "quota fault: "+err.Error())
			return
		}
		if err := s.AddQuotaFault(f); err != nil {
			core.WriteError(w, http.StatusBadRequest, "badRequest", "quota fault: "+err.Error())
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("DELETE /_emulator/gmail/quota", func(w http.ResponseWriter, r *http.Request) {
		s.ClearQuotaFaults()
		w.WriteHeader(http.StatusNoContent)
	})
}
