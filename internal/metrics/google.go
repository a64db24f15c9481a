package metrics

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The APIs Google calls are labelled with. Every Google (or emulator) URL
// drivemail calls maps to one of these by its path alone, so the labels
// are the same against the emulator and against Google.
const (
	APIDrive       = "drive"
	APIDriveUpload = "drive_upload"
	APIExportLink  = "drive_export_link"
	// APIDriveDownload is the content of files.download's operation
	// (its downloadUri, on Google's download host).
	APIDriveDownload = "drive_download"
	APIGmail         = "gmail"
	APIGmailUpload   = "gmail_upload"
	APISheets        = "sheets"
	APIToken         = "oauth_token"
	APIRevoke        = "oauth_revoke"
	APIUserinfo      = "userinfo"
	APIOther         = "other"
)

// APIOf names the Google API a request path belongs to.
func APIOf(path string) string {
	switch {
	case strings.HasPrefix(path, "/upload/drive/"):
		return APIDriveUpload
	case strings.HasPrefix(path, "/drive/"):
		return APIDrive
	case strings.HasPrefix(path, "/upload/gmail/"):
		return APIGmailUpload
	case strings.HasPrefix(path, "/gmail/"):
		return APIGmail
	case strings.HasPrefix(path, "/v4/spreadsheets"):
		return APISheets
	case path == "/download":
		return APIDriveDownload
	case strings.HasPrefix(path, "/feeds/download/"),
		strings.HasPrefix(path, "/spreadsheets/"),
		strings.HasPrefix(path, "/document/"),
		strings.HasPrefix(path, "/presentation/"),
		strings.HasPrefix(path, "/drawings/"):
		return APIExportLink
	case path == "/token" || path == "/o/oauth2/token":
		return APIToken
	case path == "/revoke" || path == "/o/oauth2/revoke":
		return APIRevoke
	case strings.HasSuffix(path, "/userinfo"):
		return APIUserinfo
	}
	return APIOther
}

// GoogleTransport wraps base (http.DefaultTransport when nil) so that
// every request to Google is counted and timed by API, failures are
// counted, and body bytes are counted in both directions as they stream.
// Give it as the transport under the per-user OAuth clients; it sees
// requests after the Authorization header is set, and records none of
// their headers, URLs or bodies.
func (m *Metrics) GoogleTransport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if m == nil {
		return base
	}
	return &googleTransport{m: m, base: base}
}

type googleTransport struct {
	m    *Metrics
	base http.RoundTripper
}

func (t *googleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	api := APIOf(req.URL.Path)
	if req.Body != nil && req.Body != http.NoBody {
		// A RoundTripper must not change the caller's request: count
		// through a shallow copy. ContentLength is kept, so the wire
		// framing (length or chunked) is what it would have been.
		r2 := req.Clone(req.Context())
		r2.Body = &countingBody{ReadCloser: req.Body, add: t.m.bytesStreamed.WithLabelValues(api, "sent").Add}
		req = r2
	}
	start := time.Now()
	res, err := t.base.RoundTrip(req)
	t.m.googleDuration.WithLabelValues(api).Observe(time.Since(start).Seconds())
	if err != nil {
		t.m.googleRequests.WithLabelValues(api, "transport_error").Inc()
		t.m.googleErrors.WithLabelValues(api).Inc()
		return nil, err
	}
	t.m.googleRequests.WithLabelValues(api, strconv.Itoa(res.StatusCode)).Inc()
	if res.StatusCode >= 400 {
		t.m.googleErrors.WithLabelValues(api).Inc()
	}
	if res.Body != nil && res.Body != http.NoBody {
		res.Body = &countingBody{ReadCloser: res.Body, add: t.m.bytesStreamed.WithLabelValues(api, "received").Add}
	}
	return res, nil
}
