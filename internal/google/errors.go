package google

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"google.golang.org/api/googleapi"
)

// The helpers below are what drive and gmail share when they turn a
// client-library error into their own *Error: each package keeps its own
// sentinels and classification, but reads Google's reason, hides request
// URLs and spells the error text the same way.

// ErrorReason returns Google's first error reason, from either format
// Google answers in: the legacy errors[] list or an ErrorInfo in details.
// It returns "" for nil or when Google gave no reason.
func ErrorReason(ge *googleapi.Error) string {
	if ge == nil {
		return ""
	}
	for _, it := range ge.Errors {
		if it.Reason != "" {
			return it.Reason
		}
	}
	for _, d := range ge.Details {
		m, ok := d.(map[string]any)
		if !ok {
			continue
		}
		if r, ok := m["reason"].(string); ok && r != "" {
			return r
		}
	}
	return ""
}

// ErrNoToken (via errors.Is) marks a Google request that failed before it
// left this process because no access token could be had: the refresh was
// refused or could not be made. Google never saw the request, so nothing
// it carried can have been sent.
var ErrNoToken = errors.New("no Google access token could be had, so the request was not sent")

// WithoutURL keeps a transport error's cause but drops the request URL,
// whose query may carry file ids, a resource key or an upload session id.
// When err wraps a *url.Error anywhere, the result is "<op> request:
// <cause>" wrapping that cause, and whatever wrapped the *url.Error is
// dropped too (its text would repeat the URL). Any other error, and nil,
// come back unchanged.
func WithoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s request: %w", ue.Op, ue.Err)
	}
	return err
}

// ErrorText is the text of a failed Google call, in the one shape drive
// and gmail share: "<api> <op>[: HTTP <code>][ <reason>][: <cause>]".
// A zero code or an empty reason is left out, and so is a nil cause. It
// never includes Google's message or body, which can echo ids, queries
// or account details; callers pass only the classified cause.
func ErrorText(api, op string, code int, reason string, cause error) string {
	var b strings.Builder
	b.WriteString(api)
	b.WriteString(" ")
	b.WriteString(op)
	if code != 0 {
		fmt.Fprintf(&b, ": HTTP %d", code)
	}
	if reason != "" {
		b.WriteString(" ")
		b.WriteString(reason)
	}
	if cause != nil {
		b.WriteString(": ")
		b.WriteString(cause.Error())
	}
	return b.String()
}
