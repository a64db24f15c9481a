package gmail

//lint:file-ignore ST1005 these errors begin with the names Google, Drive and Gmail, which staticcheck takes for capitalized words

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/drivemail/drivemail/internal/google"
)

// Sentinel causes, tested with errors.Is. Errors for Google's answers are
// *Error values wrapping one of these; none carries Google's error body.
var (
	// ErrScope: the token lacks the scope (drafts need gmail.compose).
	ErrScope = errors.New("insufficient Google scope")
	// ErrUnauthorized: Google rejected the token.
	ErrUnauthorized = errors.New("Google rejected the credentials")
	// ErrRejected: Gmail refused the message as invalid (400).
	ErrRejected = errors.New("Gmail rejected the message")
	// ErrTooLarge: the message is over Gmail's size limit (413).
	ErrTooLarge = errors.New("message too large for Gmail")
	// ErrRateLimited: a 429 or a rate-limit 403. ErrUserRateLimit and
	// ErrProjectRateLimit wrap it.
	ErrRateLimited = errors.New("rate limited by Gmail")
	// ErrUserRateLimit: a per-user limit of requests per minute, or of
	// bandwidth or concurrent requests; it lifts within minutes.
	ErrUserRateLimit = fmt.Errorf("per-user limit: %w", ErrRateLimited)
	// ErrProjectRateLimit: the Google Cloud project's limit of requests
	// per minute, shared by every user of this drivemail.
	ErrProjectRateLimit = fmt.Errorf("per-project limit: %w", ErrRateLimited)
	// ErrSendingLimit: the account's daily sending limit; it lasts hours
	// (Error.RetryAfter says until when, when Gmail said).
	ErrSendingLimit = errors.New("Gmail's daily sending limit for this account is reached")
	// ErrDailyQuota: the Google Cloud project's daily Gmail API quota is
	// used up, for every user until it resets.
	ErrDailyQuota = errors.New("the project's daily Gmail API quota is used up")
	// ErrUnavailable: a 5xx.
	ErrUnavailable = errors.New("Gmail is unavailable")
	// ErrForbidden: any other 403 (for example sending disabled by an admin).
	ErrForbidden = errors.New("Gmail refused the request")
	// ErrNotFound: a thread id Gmail does not know, or a 404 of any kind.
	ErrNotFound = errors.New("not found in Gmail")
	// ErrStalled: an upload request got no answer within the chunk
	// timeout (a timed-out resumable chunk was retried first).
	ErrStalled = errors.New("Gmail stopped answering")
	// ErrAPIDisabled: the Google Cloud project of drivemail's OAuth client
	// has not enabled the Gmail API (403 accessNotConfigured, ErrorInfo
	// SERVICE_DISABLED). Only the operator can fix it, for every user at
	// once; Error.Service names the API (see DisabledAPI).
	ErrAPIDisabled = errors.New("the Gmail API is not enabled in drivemail's Google Cloud project")
)

// Service is the Gmail API's service name, the one Google names when
// drivemail's project has not enabled it.
const Service = "gmail.googleapis.com"

// Error is a failed Gmail call, without Google's message or body.
type Error struct {
	Op     string // "messages.send", "drafts.create", "getProfile"
	Code   int    // HTTP status, 0 when no answer came
	Reason string // Google's first error reason, if any
	// Service is the API a disabled-API error names
	// ("gmail.googleapis.com"); empty for other errors.
	Service string
	Err     error
	// MaybeSent is set when the last bytes of the message reached Gmail
	// but no confirmation came back: the message may have been sent.
	// When it is false, nothing was sent.
	MaybeSent bool
	// Accepted is set when Gmail answered the final request with 200 but
	// its body (the message id) was lost: the message was sent.
	Accepted bool
	// Limit is the limit Gmail reported, NoLimit for any other answer.
	Limit Limit
	// RetryAfter is when Gmail said to try again, zero when it did not.
	RetryAfter time.Time
}

func (e *Error) Error() string {
	text := google.ErrorText("gmail", e.Op, e.Code, e.Reason, e.Err)
	switch {
	case e.Accepted:
		return text + " (Gmail accepted the message; its answer was lost)"
	case e.MaybeSent:
		return text + " (the message may have been sent)"
	}
	return text
}

func (e *Error) Unwrap() error { return e.Err }

// wrapErr converts a client error into an *Error without Google's body.
func wrapErr(op string, err error) *Error {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		a := google.ReadAnswer(ge)
		if a.Disabled {
			svc := a.Service
			if svc == "" {
				svc = Service
			}
			return &Error{Op: op, Code: ge.Code, Reason: a.Reason, Service: svc, Err: ErrAPIDisabled}
		}
		limit, retry := limitIn(a)
		return &Error{Op: op, Code: ge.Code, Reason: a.Reason, Err: classify(a, limit), Limit: limit, RetryAfter: retry}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Op: op, Err: err}
	}
	// The URL may carry an upload session id; keep only the cause.
	return &Error{Op: op, Err: google.WithoutURL(err)}
}

// DisabledAPI reports whether err is Google refusing a call because
// drivemail's Google Cloud project has not enabled the Gmail API, and the
// service to enable ("gmail.googleapis.com").
func DisabledAPI(err error) (service string, ok bool) {
	var ge *Error
	if !errors.As(err, &ge) || !errors.Is(ge.Err, ErrAPIDisabled) {
		return "", false
	}
	return ge.Service, true
}

// limits are Gmail's sentinels for the limits it reports.
var limits = map[Limit]error{
	SendingLimit:     ErrSendingLimit,
	DailyQuota:       ErrDailyQuota,
	UserRateLimit:    ErrUserRateLimit,
	ProjectRateLimit: ErrProjectRateLimit,
	OtherRateLimit:   ErrRateLimited,
}

// causes are Gmail's sentinels for what every Google API's answers mean.
var causes = google.Sentinels{Disabled: ErrAPIDisabled, NotFound: ErrNotFound, Unauthorized: ErrUnauthorized,
	Scope: ErrScope, RateLimited: ErrRateLimited, Unavailable: ErrUnavailable, Forbidden: ErrForbidden}

func classify(a google.Answer, limit Limit) error {
	if err, ok := limits[limit]; ok {
		return err
	}
	switch a.Code {
	case http.StatusBadRequest:
		return ErrRejected
	case http.StatusRequestEntityTooLarge:
		return ErrTooLarge
	}
	return causes.Of(a.Cause())
}
