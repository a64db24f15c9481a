package gmail

import (
	"errors"
	"testing"
)

// TestDisabledAPIToldApart: Google's "API not enabled" answer, in each
// shape Google sends it (the legacy errors[] item, AIP-193's ErrorInfo,
// or both), is ErrAPIDisabled naming the service; any other 403 stays
// what it was.
func TestDisabledAPIToldApart(t *testing.T) {
	const info = `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"SERVICE_DISABLED","domain":"googleapis.com","metadata":{"service":"gmail.googleapis.com","consumer":"projects/123456789012"}}`
	for _, tc := range []struct {
		name    string
		code    int
		body    string
		want    error
		service string
	}{
		{"legacy item and ErrorInfo", 403,
			`{"error":{"code":403,"message":"Gmail API has not been used in project 123456789012 before or it is disabled.","errors":[{"message":"…","domain":"usageLimits","reason":"accessNotConfigured","extendedHelp":"https://console.developers.google.com"}],"status":"PERMISSION_DENIED","details":[` + info + `]}}`,
			ErrAPIDisabled, "gmail.googleapis.com"},
		{"ErrorInfo only", 403,
			`{"error":{"code":403,"message":"Gmail API has not been used in project 123456789012 before or it is disabled.","status":"PERMISSION_DENIED","details":[` + info + `]}}`,
			ErrAPIDisabled, "gmail.googleapis.com"},
		{"ErrorInfo after a generic item", 403,
			`{"error":{"code":403,"message":"…","errors":[{"message":"…","domain":"global","reason":"forbidden"}],"status":"PERMISSION_DENIED","details":[` + info + `]}}`,
			ErrAPIDisabled, "gmail.googleapis.com"},
		{"legacy item only", 403,
			`{"error":{"code":403,"message":"Access Not Configured.","errors":[{"message":"Access Not Configured.","domain":"usageLimits","reason":"accessNotConfigured"}]}}`,
			ErrAPIDisabled, "gmail.googleapis.com"},
		{"sending turned off", 403,
			`{"error":{"code":403,"message":"Mail service not enabled","errors":[{"message":"Mail service not enabled","domain":"global","reason":"failedPrecondition"}],"status":"PERMISSION_DENIED"}}`,
			ErrForbidden, ""},
		{"a missing scope", 403,
			`{"error":{"code":403,"message":"Request had insufficient authentication scopes.","errors":[{"message":"Insufficient Permission","domain":"global","reason":"insufficientPermissions"}],"status":"PERMISSION_DENIED"}}`,
			ErrScope, ""},
	} {
		e := wrapErr("messages.send", apiError(t, tc.code, nil, tc.body))
		service, disabled := DisabledAPI(e)
		if !errors.Is(e, tc.want) || service != tc.service || disabled != (tc.want == ErrAPIDisabled) {
			t.Errorf("%s: %v, service %q; want %v, service %q", tc.name, e, service, tc.want, tc.service)
		}
		if errors.Is(e, ErrAPIDisabled) && errors.Is(e, ErrForbidden) {
			t.Errorf("%s: a disabled API also reads as forbidden", tc.name)
		}
	}
}
