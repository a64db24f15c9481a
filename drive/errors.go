package drive

//lint:file-ignore ST1005 these errors begin with the names Google, Drive and Gmail, which staticcheck takes for capitalized words

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"google.golang.org/api/googleapi"

	"github.com/drivemail/drivemail/internal/google"
)

// Sentinel causes a caller can test with errors.Is. Every error this package
// returns for a Google answer is an *Error wrapping one of them (or none, for
// an unclassified failure); none carries Google's error body, which can echo
// ids, queries or account details.
var (
	// ErrNotFound: the file does not exist or the user cannot see it.
	// Google answers both with the same 404, and so do we.
	ErrNotFound = errors.New("file not found")
	// ErrBadID: the string is not shaped like a Drive file id or link.
	ErrBadID = errors.New("not a Drive file id")
	// ErrNotDownloadable: the owner disabled downloads, or the file is a
	// native Google file that only exports.
	ErrNotDownloadable = errors.New("file cannot be downloaded")
	// ErrExportTooLarge: files.export refused a file over its 10 MB cap.
	ErrExportTooLarge = errors.New("export too large for files.export")
	// ErrScope: the Google token lacks a scope the call needs.
	ErrScope = errors.New("insufficient Google scope")
	// ErrUnauthorized: Google rejected the token (expired or revoked grant).
	ErrUnauthorized = errors.New("Google rejected the credentials")
	// ErrForbidden: any other 403. The 403s below wrap it, so a caller
	// that only knows ErrForbidden still sees them as such.
	ErrForbidden = errors.New("access denied by Drive")
	// ErrAbusive: Drive flagged the file as malware or spam and will not
	// serve its content (cannotDownloadAbusiveFile).
	ErrAbusive = fmt.Errorf("file flagged as malware or spam: %w", ErrForbidden)
	// ErrDownloadQuota: the file was downloaded too often; Drive lifts
	// the limit within about a day (downloadQuotaExceeded).
	ErrDownloadQuota = fmt.Errorf("the file's download quota is used up: %w", ErrForbidden)
	// ErrDomainPolicy: the user's Workspace administrator does not allow
	// this app to use Drive (domainPolicy).
	ErrDomainPolicy = fmt.Errorf("Drive access not allowed by the domain's policy: %w", ErrForbidden)
	// ErrAppNotAuthorized: the user has not given this app access to the
	// file, as with the drive.file scope (appNotAuthorizedToFile).
	ErrAppNotAuthorized = fmt.Errorf("app not authorized for the file: %w", ErrForbidden)
	// ErrFilePermission: the user's role on the file does not allow the
	// call (insufficientFilePermissions).
	ErrFilePermission = fmt.Errorf("insufficient permission on the file: %w", ErrForbidden)
	// ErrSharingRefused: Drive would not add the permission asked for
	// (400 invalidSharingRequest): an address with no Google account
	// while no invitation is sent, or sharing the file's or the
	// organization's settings forbid.
	ErrSharingRefused = errors.New("Drive refused the sharing change")
	// ErrRateLimited: a 429 or a rate-limit 403; transient.
	ErrRateLimited = errors.New("rate limited by Drive")
	// ErrUnavailable: a 5xx; transient.
	ErrUnavailable = errors.New("Drive is unavailable")
	// ErrTruncated: a download ended before the size Drive announced.
	ErrTruncated = errors.New("download ended early")
	// ErrBadContentURL: a download URL Google gave (an operation's
	// downloadUri, or a redirect from it) points somewhere drivemail does
	// not send the user's token.
	ErrBadContentURL = errors.New("download URL has an unexpected origin")
	// ErrWrongType: Google answered an export with content of another type
	// than the format asked for (a sign-in page, an error page); the body
	// is not read.
	ErrWrongType = errors.New("Google answered with content of another type")
	// ErrAPIDisabled: the Google Cloud project of drivemail's OAuth client
	// has not enabled the API called (403 SERVICE_DISABLED,
	// accessNotConfigured). Error.Service names it; see DisabledAPI.
	ErrAPIDisabled = errors.New("the Google API is not enabled in drivemail's Google Cloud project")
	// ErrExportNotReady: files.download's operation did not finish within
	// the polling budget (see WithOperationPolling).
	ErrExportNotReady = errors.New("Google did not finish preparing the export in time")
	// ErrRangeBudget: a ReaderAt exhausted its read budget.
	ErrRangeBudget = errors.New("range read budget exhausted")
)

// Error is a failed Drive or Sheets call: the operation, Google's status and
// reason, and a classified cause. It deliberately omits Google's message
// and body.
type Error struct {
	Op     string // e.g. "files.get", "files.export"
	Code   int    // HTTP status, 0 for a transport failure
	Reason string // Google's first error reason, if any
	// Service is the API a disabled-API error names, such as
	// "sheets.googleapis.com"; empty for other errors.
	Service string
	Err     error // a sentinel above, or the transport error
}

func (e *Error) Error() string {
	return google.ErrorText("drive", e.Op, e.Code, e.Reason, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// IsTransient reports whether err is worth retrying: a 5xx, a 429 or
// rate-limit 403, a connection that failed or was cut, or Drive stalling.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, ErrRateLimited) || errors.Is(err, ErrUnavailable) || errors.Is(err, ErrTruncated) || errors.Is(err, ErrStalled) {
		return true
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	// A call that got no HTTP answer at all failed in transport.
	var de *Error
	return errors.As(err, &de) && de.Code == 0 && !errors.Is(de.Err, ErrBadContentURL) && !errors.Is(de.Err, google.ErrTokenHost) &&
		!errors.Is(de.Err, ErrRangeBudget) && !errors.Is(de.Err, ErrBadID) && !errors.Is(de.Err, ErrWrongType) &&
		!errors.Is(de.Err, ErrExportNotReady) && !errors.Is(de.Err, ErrNotFound) && !errors.Is(de.Err, ErrForbidden)
}

// DisabledAPI reports whether err is Google refusing a call because
// drivemail's Google Cloud project has not enabled the API, and which
// API ("sheets.googleapis.com"): the operator must enable it.
func DisabledAPI(err error) (service string, ok bool) {
	var de *Error
	if !errors.As(err, &de) || !errors.Is(de.Err, ErrAPIDisabled) {
		return "", false
	}
	return de.Service, true
}

// wrapErr turns a Google client error into an *Error without the body.
// Context errors pass through unchanged so callers see cancellation as such.
func wrapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return &Error{Op: op, Err: google.WithoutURL(err)}
	}
	a := google.ReadAnswer(ge)
	e := &Error{Op: op, Code: ge.Code, Reason: a.Reason, Err: classify(a)}
	if errors.Is(e.Err, ErrAPIDisabled) {
		e.Service = disabledService(a, op)
	}
	return e
}

// disabledService is the API a disabled-API answer names, or the one op
// belongs to when Google named none.
func disabledService(a google.Answer, op string) string {
	switch {
	case a.Service != "":
		return a.Service
	case strings.HasPrefix(op, "spreadsheets."):
		return SheetsService
	}
	return DriveService
}

// The services drivemail's Drive client calls.
const (
	DriveService  = "drive.googleapis.com"
	SheetsService = "sheets.googleapis.com"
)

// statusErr builds an *Error for a plain HTTP response (export links).
func statusErr(op string, code int) error {
	return &Error{Op: op, Code: code, Err: classify(google.Answer{Code: code})}
}

// forbidden are the 403 reasons only Drive gives, by the first reason of
// the answer; any other 403 is read as every Google API's.
var forbidden = map[string]error{
	"exportSizeLimitExceeded":     ErrExportTooLarge,
	"cannotDownloadFile":          ErrNotDownloadable,
	"fileNotDownloadable":         ErrNotDownloadable,
	"sharingRateLimitExceeded":    ErrRateLimited,
	"notFound":                    ErrNotFound,
	"cannotDownloadAbusiveFile":   ErrAbusive,
	"abuse":                       ErrAbusive,
	"downloadQuotaExceeded":       ErrDownloadQuota,
	"quotaExceeded":               ErrDownloadQuota,
	"domainPolicy":                ErrDomainPolicy,
	"appNotAuthorizedToFile":      ErrAppNotAuthorized,
	"insufficientFilePermissions": ErrFilePermission,
}

// causes are Drive's sentinels for what every Google API's answers mean.
var causes = google.Sentinels{Disabled: ErrAPIDisabled, NotFound: ErrNotFound, Unauthorized: ErrUnauthorized,
	Scope: ErrScope, RateLimited: ErrRateLimited, Unavailable: ErrUnavailable, Forbidden: ErrForbidden}

func classify(a google.Answer) error {
	if a.Code == http.StatusBadRequest && a.Reason == "invalidSharingRequest" {
		return ErrSharingRefused
	}
	if a.Code == http.StatusForbidden {
		if err, ok := forbidden[a.Reason]; ok {
			return err
		}
	}
	return causes.Of(a.Cause())
}
