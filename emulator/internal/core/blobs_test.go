package core

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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

func TestBlobsDelete(t *testing.T) {
	b, err := NewBlobs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	content := strings.Repeat("x", 100_000)
	bl, err := b.Put(strings.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	reading, err := b.Open(bl.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer reading.Close()
	if err := b.Delete(bl.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(b.dir, bl.ID)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the blob's file is still on disk after Delete: %v", err)
	}
	if _, err := b.Open(bl.ID); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open after Delete: err %v, want not exist", err)
	}
	got, err := io.ReadAll(reading)
	if err != nil || string(got) != content {
		t.Errorf("a reader opened before Delete read %d of %d bytes, err %v", len(got), len(content), err)
	}
	for _, id := range []string{bl.ID, "blob-unknown", "../" + filepath.Base(b.dir)} {
		if err := b.Delete(id); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Delete(%q): err %v, want not exist", id, err)
		}
	}
	if _, err := os.Stat(b.dir); err != nil {
		t.Errorf("a refused Delete touched the blob dir: %v", err)
	}
}
