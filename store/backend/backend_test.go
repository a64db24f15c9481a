package backend_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/store/backend"
	"github.com/drivemail/drivemail/store/storetest"
)

func TestOpenSQLite(t *testing.T) {
	ctx := context.Background()
	s, err := backend.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "a b?.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestOpenPostgres(t *testing.T) {
	ctx := context.Background()
	s, err := backend.Open(ctx, storetest.PostgresURL(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRefusals(t *testing.T) {
	tests := []struct {
		url      string
		wantText string
	}{
		{"sqlite:", "empty path"},
		{"mysql://admin:hunter2@db.example/x", "want sqlite:PATH"},
		{"drivemail.db", "want sqlite:PATH"},
		{"postgres://admin:hunter2@127.0.0.1:1/x?connect_timeout=1", "cannot reach"},
		{"postgres://admin:hunter2@[::1/x", "not a valid postgres"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			_, err := backend.Open(context.Background(), tc.url, store.Options{})
			if err == nil {
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error %q does not say %q", err, tc.wantText)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}
