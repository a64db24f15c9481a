package core

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// Blob is stored file content: immutable once committed.
type Blob struct {
	ID     string
	Size   int64
	SHA256 string // hex
	MD5    string // hex, Drive's md5Checksum
}

// Blobs stores file content in a directory so large files never sit in
// memory. Content is written once, then only read, until Delete.
type Blobs struct {
	dir  string
	own  bool
	mu   sync.Mutex
	seen map[string]Blob
}

// NewBlobs stores content under dir; an empty dir makes (and Close removes) a temporary one.
func NewBlobs(dir string) (*Blobs, error) {
	own := false
	if dir == "" {
		d, err := os.MkdirTemp("", "drivemail-emulator-*")
		if err != nil {
			return nil, fmt.Errorf("blob dir: %w", err)
		}
		dir, own = d, true
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("blob dir: %w", err)
	}
	return &Blobs{dir: dir, own: own, seen: map[string]Blob{}}, nil
}

// Close removes a temporary blob directory.
func (b *Blobs) Close() error {
	if b.own {
		return os.RemoveAll(b.dir)
	}
	return nil
}

// BlobWriter receives content for a new blob.
type BlobWriter struct {
	b    *Blobs
	f    *os.File
	sha  hash.Hash
	md5  hash.Hash
	size int64
}

// Create starts a new blob.
func (b *Blobs) Create() (*BlobWriter, error) {
	f, err := os.CreateTemp(b.dir, "blob-*")
	if err != nil {
		return nil, fmt.Errorf("create blob: %w", err)
	}
	return &BlobWriter{b: b, f: f, sha: sha256.New(), md5: newMD5()}, nil
}

// Write appends content.
func (w *BlobWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.sha.Write(p[:n])
	w.md5.Write(p[:n])
	w.size += int64(n)
	return n, err
}

// Size is the number of bytes written so far.
func (w *BlobWriter) Size() int64 { return w.size }

// Commit finishes the blob and returns its description.
func (w *BlobWriter) Commit() (Blob, error) {
	if err := w.f.Close(); err != nil {
		return Blob{}, fmt.Errorf("commit blob: %w", err)
	}
	bl := Blob{
		ID:     filepath.Base(w.f.Name()),
		Size:   w.size,
		SHA256: hex.EncodeToString(w.sha.Sum(nil)),
		MD5:    hex.EncodeToString(w.md5.Sum(nil)),
	}
	w.b.mu.Lock()
	w.b.seen[bl.ID] = bl
	w.b.mu.Unlock()
	return bl, nil
}

// Abort discards the blob.
func (w *BlobWriter) Abort() {
	_ = w.f.Close()
	_ = os.Remove(w.f.Name())
}

// Put stores all of r as a blob.
func (b *Blobs) Put(r io.Reader) (Blob, error) {
	w, err := b.Create()
	if err != nil {
		return Blob{}, err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Abort()
		return Blob{}, fmt.Errorf("write blob: %w", err)
	}
	return w.Commit()
}

// PutBytes stores p as a blob.
func (b *Blobs) PutBytes(p []byte) (Blob, error) {
	w, err := b.Create()
	if err != nil {
		return Blob{}, err
	}
	if _, err := w.Write(p); err != nil {
		w.Abort()
		return Blob{}, fmt.Errorf("write blob: %w", err)
	}
	return w.Commit()
}

// Open returns the content of a committed blob. The caller closes it.
func (b *Blobs) Open(id string) (*os.File, error) {
	b.mu.Lock()
	_, ok := b.seen[id]
	b.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("blob %q: %w", id, os.ErrNotExist)
	}
	return os.Open(filepath.Join(b.dir, id))
}

// Delete removes a committed blob, once nothing refers to it any more.
// A reader that opened it before keeps reading to its end (the file is
// unlinked, not cut short); Open fails from now on.
func (b *Blobs) Delete(id string) error {
	b.mu.Lock()
	_, ok := b.seen[id]
	delete(b.seen, id)
	b.mu.Unlock()
	if !ok {
		return fmt.Errorf("delete blob %q: %w", id, os.ErrNotExist)
	}
	if err := os.Remove(filepath.Join(b.dir, id)); err != nil {
		return fmt.Errorf("delete blob: %w", err)
	}
	return nil
}

// ReadAll returns a committed blob's content; for small blobs only.
func (b *Blobs) ReadAll(id string) ([]byte, error) {
	f, err := b.Open(id)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
