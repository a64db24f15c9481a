package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/drivemail/drivemail/store"
)

// testTransfers: a file-transfer URI is stored under its hash, finished
// once, and gone when it expires.
func testTransfers(t *testing.T, b Backend) {
	c := NewClock()
	s := open(t, b, c)
	ctx := context.Background()
	exp := c.Now().Add(time.Hour)
	must(t, s.CreateTransfer(ctx, "TRANSFER-ID-1", store.Transfer{UserID: "u1", ExpiresAt: exp}))
	wantErr(t, "the same id again", s.CreateTransfer(ctx, "TRANSFER-ID-1", store.Transfer{UserID: "u2", ExpiresAt: exp}), store.ErrDuplicate)
	if b.Contains(t, "TRANSFER-ID-1") {
		t.Error("the transfer id is stored in the clear")
	}
	got, err := s.GetTransfer(ctx, "TRANSFER-ID-1")
	must(t, err)
	if got.UserID != "u1" || got.FileID != "" || !got.ExpiresAt.Equal(exp) {
		t.Fatalf("transfer = %+v", got)
	}
	must(t, s.CompleteTransfer(ctx, "TRANSFER-ID-1", "drive-file-1"))
	wantErr(t, "a second completion", s.CompleteTransfer(ctx, "TRANSFER-ID-1", "drive-file-2"), store.ErrUsed)
	got, err = s.GetTransfer(ctx, "TRANSFER-ID-1")
	must(t, err)
	if got.FileID != "drive-file-1" {
		t.Fatalf("file id = %q after completion, want the first", got.FileID)
	}
	wantErr(t, "an unknown id", s.CompleteTransfer(ctx, "nope", "f"), store.ErrNotFound)
	_, err = s.GetTransfer(ctx, "nope")
	wantErr(t, "get of an unknown id", err, store.ErrNotFound)

	must(t, s.CreateTransfer(ctx, "TRANSFER-ID-2", store.Transfer{UserID: "u1", ExpiresAt: c.Now().Add(time.Minute)}))
	c.Advance(time.Minute)
	_, err = s.GetTransfer(ctx, "TRANSFER-ID-2")
	wantErr(t, "get at expiry", err, store.ErrNotFound)
	wantErr(t, "completion at expiry", s.CompleteTransfer(ctx, "TRANSFER-ID-2", "f"), store.ErrNotFound)
	n, err := s.Sweep(ctx)
	must(t, err)
	if n != 1 {
		t.Errorf("sweep deleted %d rows, want the expired transfer", n)
	}
	if _, err := s.GetTransfer(ctx, "TRANSFER-ID-1"); err != nil {
		t.Errorf("the live transfer was swept: %v", err)
	}
}
