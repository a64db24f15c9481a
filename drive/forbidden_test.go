package drive_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
)

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
	got, err := e.dc.Get(ctx, drive.Ref{ID: f.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			// Two: the download, then the Range read; neither is retried.
			e.Inject(emulator.Fault{Method: "GET", PathPrefix: "/drive/v3/files/" + f.ID, Times: 2,
				Status: 403, Reason: tt.reason, Message: "secret message naming the file"})
			_, err := e.dc.Download(ctx, got)
			if !errors.Is(err, tt.want) || !errors.Is(err, drive.ErrForbidden) || drive.IsTransient(err) {
				t.Fatalf("err = %v, want %v (an ErrForbidden, not transient)", err, tt.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error text %q carries Google's message", err)
			}
			_, err = e.dc.RangeReader(ctx, got, 1, 100).ReadAt(make([]byte, 10), 0)
			if !errors.Is(err, tt.want) {
				t.Errorf("range read: err = %v, want %v", err, tt.want)
			}
		})
	}
	// Every fault was used: the file downloads again.
	rc, err := e.dc.Download(ctx, got)
	if err != nil {
		t.Fatalf("after the 403s: %v", err)
	}
	defer rc.Close()
	if b, err := io.ReadAll(rc); err != nil || len(b) != 1000 {
		t.Errorf("after the 403s: read %d bytes, %v", len(b), err)
	}
}
