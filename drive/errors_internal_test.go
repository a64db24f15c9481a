package drive

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"

	"google.golang.org/api/googleapi"
)

// TestWrapErrDisabledAPI: Google's "API not enabled" answer in each shape
// it sends is ErrAPIDisabled naming the service (Google's, or the one the
// call belongs to), and a Drive-only 403 reason keeps its meaning.
func TestWrapErrDisabledAPI(t *testing.T) {
	const info = `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"SERVICE_DISABLED","domain":"googleapis.com","metadata":{"service":"drive.googleapis.com"}}`
	tests := []struct {
		name, op, body string
		want           error
		service        string
	}{
		{"legacy item", "files.get", `{"error":{"code":403,"errors":[{"reason":"accessNotConfigured"}]}}`, ErrAPIDisabled, DriveService},
		{"legacy item on a Sheets call", "spreadsheets.values.get", `{"error":{"code":403,"errors":[{"reason":"accessNotConfigured"}]}}`, ErrAPIDisabled, SheetsService},
		{"ErrorInfo only", "spreadsheets.get", `{"error":{"code":403,"details":[` + info + `]}}`, ErrAPIDisabled, DriveService},
		{"ErrorInfo after a generic item", "files.get", `{"error":{"code":403,"errors":[{"reason":"forbidden"}],"details":[` + info + `]}}`, ErrAPIDisabled, DriveService},
		{"a Drive reason first", "files.get", `{"error":{"code":403,"errors":[{"reason":"domainPolicy"}],"details":[` + info + `]}}`, ErrDomainPolicy, ""},
		{"a plain 403", "files.get", `{"error":{"code":403,"errors":[{"reason":"forbidden"}]}}`, ErrForbidden, ""},
	}
	for _, tt := range tests {
		res := &http.Response{StatusCode: 403, Header: http.Header{}, Body: io.NopCloser(bytes.NewBufferString(tt.body))}
		err := wrapErr(tt.op, googleapi.CheckResponse(res))
		service, _ := DisabledAPI(err)
		if !errors.Is(err, tt.want) || service != tt.service {
			t.Errorf("%s: %v, service %q; want %v, service %q", tt.name, err, service, tt.want, tt.service)
		}
	}
}
