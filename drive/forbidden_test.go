package drive_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
)

// forbiddingMedia answers every content request (alt=media) with Drive's
// 403 for reason, as Google words it.
type forbiddingMedia struct {
	base   http.RoundTripper
	reason string
}

func (f forbiddingMedia) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Query().Get("alt") != "media" {
		return f.base.RoundTrip(r)
	}
	body := `{"error":{"code":403,"message":"secret message naming the file","errors":[{"domain":"global","reason":"` + f.reason + `","message":"secret message naming the file"}]}}`
	return &http.Response{StatusCode: 403, Status: "403 Forbidden", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

// TestDownloadForbiddenReasons: Drive's 403 reasons for a download are
// told apart, each still an ErrForbidden for callers that know only that,
// none transient, and no error text carries Google's message.
func TestDownloadForbiddenReasons(t *testing.T) {
	tests := []struct {
		reason string
		want   error
	}{
		{"cannotDownloadAbusiveFile", drive.ErrAbusive},
		{"downloadQuotaExceeded", drive.ErrDownloadQuota},
		{"quotaExceeded", drive.ErrDownloadQuota},
		{"domainPolicy", drive.ErrDomainPolicy},
		{"appNotAuthorizedToFile", drive.ErrAppNotAuthorized},
		{"insufficientFilePermissions", drive.ErrFilePermission},
		{"somethingNew", drive.ErrForbidden},
	}
	e := newEnv(t)
	ctx := context.Background()
	f := e.Put(user, drivesvc.FileSpec{Name: "a.bin", Content: random(1000)})
	got, err := e.dc.Get(ctx, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			hc := *e.Client(user, emutest.ScopeDriveReadonly)
			hc.Transport = forbiddingMedia{base: hc.Transport, reason: tt.reason}
			dc, err := drive.New(ctx, &hc, e.Endpoints)
			if err != nil {
				t.Fatal(err)
			}
			_, err = dc.Download(ctx, got)
			if !errors.Is(err, tt.want) || !errors.Is(err, drive.ErrForbidden) || drive.IsTransient(err) {
				t.Fatalf("err = %v, want %v (an ErrForbidden, not transient)", err, tt.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error text %q carries Google's message", err)
			}
			_, err = dc.RangeReader(ctx, got, 1, 100).ReadAt(make([]byte, 10), 0)
			if !errors.Is(err, tt.want) {
				t.Errorf("range read: err = %v, want %v", err, tt.want)
			}
		})
	}
}
