package google

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/api/googleapi"
)

// apiError is what the client libraries make of a Google error answer.
func apiError(t *testing.T, status int, body string) *googleapi.Error {
	t.Helper()
	res := &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
	var ge *googleapi.Error
	if err := googleapi.CheckResponse(res); !errors.As(err, &ge) {
		t.Fatalf("CheckResponse(%d) = %v, want a *googleapi.Error", status, err)
	}
	return ge
}

func TestErrorReason(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"legacy errors list", `{"error":{"code":403,"message":"m","errors":[{"domain":"global","reason":"exportSizeLimitExceeded","message":"m"}]}}`,
			"exportSizeLimitExceeded"},
		{"first non-empty reason of the list", `{"error":{"code":403,"errors":[{"message":"m"},{"reason":"rateLimitExceeded"},{"reason":"other"}]}}`,
			"rateLimitExceeded"},
		{"ErrorInfo in details", `{"error":{"code":403,"message":"m","status":"PERMISSION_DENIED","details":[` +
			`{"@type":"type.googleapis.com/google.rpc.Help"},` +
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"ACCESS_TOKEN_SCOPE_INSUFFICIENT","domain":"googleapis.com"}]}}`,
			"ACCESS_TOKEN_SCOPE_INSUFFICIENT"},
		{"list before details", `{"error":{"code":403,"errors":[{"reason":"insufficientPermissions"}],"details":[{"reason":"ACCESS_TOKEN_SCOPE_INSUFFICIENT"}]}}`,
			"insufficientPermissions"},
		{"details that are not objects", `{"error":{"code":403,"details":["reason",42,{"reason":""},{"reason":7}]}}`, ""},
		{"no reason at all", `{"error":{"code":404,"message":"File not found: 1abc."}}`, ""},
		{"not JSON", `<html>Bad Gateway</html>`, ""},
		{"empty body", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ErrorReason(apiError(t, 403, tt.body)); got != tt.want {
				t.Errorf("ErrorReason = %q, want %q", got, tt.want)
			}
		})
	}
	if got := ErrorReason(nil); got != "" {
		t.Errorf("ErrorReason(nil) = %q", got)
	}
}

// A real transport failure: the request URL carries a resource key, and
// the error text must not.
func TestWithoutURLDropsTheRequestURL(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	const secret = "0-SECRETRESOURCEKEY"
	_, err := http.Get(addr + "/drive/v3/files/1abc?resourcekey=" + secret)
	var ue *url.Error
	if !errors.As(err, &ue) {
		t.Fatalf("GET a closed server: err = %v, want a *url.Error", err)
	}
	for name, in := range map[string]error{
		"bare":    err,
		"wrapped": fmt.Errorf("files.get: %w", err),
	} {
		got := WithoutURL(in)
		if strings.Contains(got.Error(), secret) || strings.Contains(got.Error(), "/drive/v3/files") {
			t.Errorf("%s: WithoutURL text %q keeps the URL", name, got)
		}
		if !strings.HasPrefix(got.Error(), "Get request: ") {
			t.Errorf("%s: WithoutURL text %q does not say which request failed", name, got)
		}
		var ne net.Error
		if !errors.As(got, &ne) || !errors.Is(got, ue.Err) {
			t.Errorf("%s: WithoutURL(%v) lost the cause", name, in)
		}
	}
}

func TestWithoutURLLeavesOtherErrors(t *testing.T) {
	plain := errors.New("digest mismatch")
	if got := WithoutURL(plain); got != plain {
		t.Errorf("WithoutURL(plain) = %v, want it unchanged", got)
	}
	if got := WithoutURL(nil); got != nil {
		t.Errorf("WithoutURL(nil) = %v, want nil", got)
	}
}

func TestErrorText(t *testing.T) {
	cause := errors.New("file not found")
	tests := []struct {
		name   string
		code   int
		reason string
		cause  error
		want   string
	}{
		{"everything", 404, "notFound", cause, "drive files.get: HTTP 404 notFound: file not found"},
		{"no reason", 503, "", cause, "drive files.get: HTTP 503: file not found"},
		{"transport failure", 0, "", io.ErrUnexpectedEOF, "drive files.get: unexpected EOF"},
		{"reason without a code", 0, "badRequest", nil, "drive files.get badRequest"},
		{"nothing known", 0, "", nil, "drive files.get"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ErrorText("drive", "files.get", tt.code, tt.reason, tt.cause); got != tt.want {
				t.Errorf("ErrorText = %q, want %q", got, tt.want)
			}
		})
	}
}
