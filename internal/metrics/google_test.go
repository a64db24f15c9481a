package metrics

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAPIOf(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"/drive/v3/files", APIDrive},
		{"/drive/v3/files/1AbC/export", APIDrive},
		{"/upload/drive/v3/files", APIDriveUpload},
		{"/gmail/v1/users/me/messages/send", APIGmail},
		{"/upload/gmail/v1/users/me/messages/send", APIGmailUpload},
		{"/v4/spreadsheets/1AbC", APISheets},
		{"/feeds/download/documents/export/Export", APIExportLink},
		{"/download", APIDriveDownload},
		{"/spreadsheets/d/1AbC/export", APIExportLink},
		{"/token", APIToken},
		{"/revoke", APIRevoke},
		{"/oauth2/v3/userinfo", APIUserinfo},
		{"/v1/userinfo", APIUserinfo},
		{"/", APIOther},
		{"/driveX", APIOther},
	} {
		if got := APIOf(c.path); got != c.want {
			t.Errorf("APIOf(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}

func TestGoogleTransportCountsCallsErrorsAndBytes(t *testing.T) {
	var gotLength []int64
	google := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		gotLength = append(gotLength, r.ContentLength)
		switch {
		case strings.HasPrefix(r.URL.Path, "/drive/v3/files/missing"):
			w.WriteHeader(http.StatusNotFound)
		case strings.HasPrefix(r.URL.Path, "/drive/"):
			_, _ = io.WriteString(w, strings.Repeat("d", 700))
		case strings.HasPrefix(r.URL.Path, "/upload/gmail/"):
			_, _ = io.WriteString(w, `{"id":"m1"}`)
		}
	}))
	defer google.Close()

	m := New("test")
	hc := &http.Client{Transport: m.GoogleTransport(nil)}

	res, err := hc.Get(google.URL + "/drive/v3/files/abc?alt=media")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if len(body) != 700 {
		t.Fatalf("read %d bytes through the transport, want 700", len(body))
	}

	msg := bytes.Repeat([]byte("m"), 5000)
	req, _ := http.NewRequest("POST", google.URL+"/upload/gmail/v1/users/me/messages/send?uploadType=multipart", bytes.NewReader(msg))
	req.Header.Set("Authorization", "Bearer ya29.very-secret")
	res, err = hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if req.Body == nil || req.ContentLength != 5000 {
		t.Error("the transport changed the caller's request")
	}

	res, err = hc.Get(google.URL + "/drive/v3/files/missing")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()

	dead := &http.Client{Transport: m.GoogleTransport(errRoundTripper{})}
	if _, err := dead.Get(google.URL + "/token"); err == nil {
		t.Fatal("want the transport's error back")
	}

	if len(gotLength) != 3 || gotLength[1] != 5000 {
		t.Errorf("Google saw Content-Length %v, want the upload's 5000 kept (not chunked)", gotLength)
	}
	text := scrape(t, m)
	for series, want := range map[string]float64{
		`drivemail_google_requests_total{api="drive",code="200"}`:                   1,
		`drivemail_google_requests_total{api="drive",code="404"}`:                   1,
		`drivemail_google_requests_total{api="gmail_upload",code="200"}`:            1,
		`drivemail_google_requests_total{api="oauth_token",code="transport_error"}`: 1,
		`drivemail_google_errors_total{api="drive"}`:                                1,
		`drivemail_google_errors_total{api="oauth_token"}`:                          1,
		`drivemail_google_errors_total{api="gmail_upload"}`:                         -1,
		`drivemail_bytes_streamed_total{api="drive",direction="received"}`:          700,
		`drivemail_bytes_streamed_total{api="gmail_upload",direction="sent"}`:       5000,
		`drivemail_bytes_streamed_total{api="gmail_upload",direction="received"}`:   11,
		`drivemail_google_request_duration_seconds_count{api="drive"}`:              2,
	} {
		if got := value(t, text, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if strings.Contains(text, "very-secret") || strings.Contains(text, "alt=media") {
		t.Error("/metrics shows a token or a query string")
	}
}
