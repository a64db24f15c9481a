package core

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

func TestBlobsRoundTripAndCleanup(t *testing.T) {
	b, err := NewBlobs("")
	if err != nil {
		t.Fatal(err)
	}
	content := strings.Repeat("drivemail ", 1000)
	bl, err := b.Put(strings.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(content))
	if bl.Size != int64(len(content)) || bl.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("blob = %+v", bl)
	}
	got, err := b.ReadAll(bl.ID)
	if err != nil || string(got) != content {
		t.Fatalf("read back %d bytes, err %v", len(got), err)
	}
	if _, err := b.Open("../../etc/passwd"); err == nil {
		t.Error("opened a path that is not a committed blob")
	}
	w, _ := b.Create()
	_, _ = w.Write([]byte("half"))
	w.Abort()
	dir := b.dir
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("temporary blob dir survives Close: %v", err)
	}
}
