package google

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/googleapi"
)

// Answer is what drivemail reads of a Google error answer, for every API
// in one place. Google states the same facts in two shapes, the legacy
// errors[] list and AIP-193's google.rpc.ErrorInfo details, and may send
// either or both; the clients read them here and keep only their own
// rules (their sentinels, the reasons only their API gives, which limit
// a quota is).
type Answer struct {
	Code int
	// Reason is Google's first reason (ErrorReason).
	Reason string
	// Reasons holds every reason given, of errors[] and of the details.
	Reasons map[string]bool
	// Messages are the answer's message and each errors[] item's.
	Messages []string
	// Disabled says the API called is not enabled in the Google Cloud
	// project of the OAuth client: a 403 whose legacy reason is
	// accessNotConfigured or whose ErrorInfo says SERVICE_DISABLED.
	// Service is the API that ErrorInfo names ("sheets.googleapis.com"),
	// "" when Google named none (the caller knows which it called).
	Disabled bool
	Service  string
	// Quota is the metadata of a RATE_LIMIT_EXCEEDED ErrorInfo, the
	// quota system's account of which limit was hit; nil when absent.
	Quota map[string]string
	// RetryAt is when Google said to try again: a time named in the
	// message ("Retry after 2026-05-03T19:34:01.512Z"), or the
	// Retry-After header (seconds or a date); zero when neither.
	RetryAt time.Time
}

// ReadAnswer reads ge; a nil ge reads as an empty Answer.
func ReadAnswer(ge *googleapi.Error) Answer {
	if ge == nil {
		return Answer{Reasons: map[string]bool{}}
	}
	a := Answer{Code: ge.Code, Reason: ErrorReason(ge), Reasons: map[string]bool{}, Messages: []string{ge.Message}}
	for _, it := range ge.Errors {
		a.Messages = append(a.Messages, it.Message)
		if it.Reason != "" {
			a.Reasons[it.Reason] = true
		}
	}
	for _, d := range ge.Details {
		m, _ := d.(map[string]any)
		reason, _ := m["reason"].(string)
		if reason == "" {
			continue
		}
		a.Reasons[reason] = true
		switch reason {
		case "SERVICE_DISABLED":
			if s := metadata(m)["service"]; a.Service == "" && strings.HasSuffix(s, ".googleapis.com") && len(s) < 100 {
				a.Service = s
			}
		case "RATE_LIMIT_EXCEEDED":
			if a.Quota == nil {
				a.Quota = metadata(m)
			}
		}
	}
	a.Disabled = ge.Code == http.StatusForbidden && (a.Reasons["accessNotConfigured"] || a.Reasons["SERVICE_DISABLED"])
	a.RetryAt = retryAt(a.Messages, ge.Header)
	return a
}

// metadata is an ErrorInfo's string metadata.
func metadata(info map[string]any) map[string]string {
	out := map[string]string{}
	md, _ := info["metadata"].(map[string]any)
	for k, v := range md {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// retryAt is the time named in "Retry after <RFC 3339>" in a message, or
// in a Retry-After header; zero when neither is there or it does not
// parse.
func retryAt(messages []string, h http.Header) time.Time {
	for _, m := range messages {
		_, rest, ok := strings.Cut(m, "Retry after ")
		if !ok {
			continue
		}
		stamp, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
		if t, err := time.Parse(time.RFC3339Nano, strings.TrimRight(stamp, ".,;)")); err == nil {
			return t
		}
	}
	if v := h.Get("Retry-After"); v != "" {
		if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
			return time.Now().Add(time.Duration(secs) * time.Second)
		}
		if t, err := http.ParseTime(v); err == nil {
			return t
		}
	}
	return time.Time{}
}

// Says reports whether the answer's message or one of its items'
// contains text.
func (a Answer) Says(text string) bool {
	for _, m := range a.Messages {
		if strings.Contains(m, text) {
			return true
		}
	}
	return false
}

// Cause is what an answer means in the terms every Google API shares;
// each client maps it to its own sentinel, after the finer reasons only
// its API gives.
type Cause int

const (
	// CauseNone: none of the below (a 400, a 409, a 413…).
	CauseNone Cause = iota
	// CauseDisabled: the API is not enabled in the project (Disabled).
	CauseDisabled
	// CauseNotFound: a 404.
	CauseNotFound
	// CauseUnauthorized: a 401, the token rejected.
	CauseUnauthorized
	// CauseScope: a 403 for a scope the token lacks.
	CauseScope
	// CauseRateLimited: a 429, or a 403 whose reason is a rate limit.
	CauseRateLimited
	// CauseUnavailable: a 5xx.
	CauseUnavailable
	// CauseForbidden: any other 403.
	CauseForbidden
)

// Cause classifies the answer by its status and reasons.
func (a Answer) Cause() Cause {
	switch {
	case a.Disabled:
		return CauseDisabled
	case a.Code == http.StatusNotFound:
		return CauseNotFound
	case a.Code == http.StatusUnauthorized:
		return CauseUnauthorized
	case a.Code == http.StatusTooManyRequests:
		return CauseRateLimited
	case a.Code >= 500:
		return CauseUnavailable
	case a.Code != http.StatusForbidden:
		return CauseNone
	}
	switch a.Reason {
	case "insufficientPermissions", "ACCESS_TOKEN_SCOPE_INSUFFICIENT", "insufficientScopes":
		return CauseScope
	case "rateLimitExceeded", "userRateLimitExceeded":
		return CauseRateLimited
	}
	return CauseForbidden
}

// Sentinels are one client's own errors for the causes every API
// shares, so that its callers can tell a Drive scope from a Gmail one.
type Sentinels struct {
	Disabled, NotFound, Unauthorized, Scope, RateLimited, Unavailable, Forbidden error
}

// Of is the sentinel for c; nil for CauseNone.
func (s Sentinels) Of(c Cause) error {
	switch c {
	case CauseDisabled:
		return s.Disabled
	case CauseNotFound:
		return s.NotFound
	case CauseUnauthorized:
		return s.Unauthorized
	case CauseScope:
		return s.Scope
	case CauseRateLimited:
		return s.RateLimited
	case CauseUnavailable:
		return s.Unavailable
	case CauseForbidden:
		return s.Forbidden
	}
	return nil
}
