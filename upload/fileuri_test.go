package upload_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/upload"
)

// TestTransferFlow: a prepared transfer is pending until its bytes come
// by the descriptor (a form with its token field), then resolves to the
// Drive file for its user only; its ticket works once.
func TestTransferFlow(t *testing.T) {
	e := newEnv(t)
	ana, bob := e.signIn("ana@example.com"), e.signIn("bob@example.com")
	data := pattern(70_000)
	size := int64(len(data))
	tt, err := e.svc.PrepareTransfer(context.Background(), ana.acct, upload.TransferRequest{Name: "scan.pdf", MimeType: "application/pdf", Size: &size, SHA256: sha(data)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := handle.Parse(tt.URI)
	tr, ok := h.(handle.Transfer)
	if err != nil || !ok || tr.Host != strings.TrimPrefix(e.base, "http://") {
		t.Fatalf("URI %q is not a transfer handle of this server: %v", tt.URI, err)
	}
	if _, err := e.svc.ResolveTransfer(context.Background(), ana.acct, tr.ID); !errors.Is(err, handle.ErrTransferPending) {
		t.Fatalf("before the upload: %v, want pending", err)
	}
	path := mustPath(t, tt.UploadURL)
	// A wrong token field is refused, and the ticket still works after.
	e.mustRefuse(e.postForm(path, "", part{field: "token", data: []byte("t1.wrong")}, part{field: "file", filename: "scan.pdf", contentType: "application/pdf", data: data}),
		http.StatusForbidden, ana, "token field")
	a := e.postForm(path, "", part{field: "token", data: []byte(tt.Token)}, part{field: "file", filename: "scan.pdf", contentType: "application/pdf", data: data})
	f := e.mustStore(a, data, "scan.pdf", "application/pdf")

	ref, err := e.svc.ResolveTransfer(context.Background(), ana.acct, tr.ID)
	if err != nil || ref.ID != f.ID {
		t.Fatalf("after the upload: %+v, %v; want file %s", ref, err, f.ID)
	}
	if _, err := e.svc.ResolveTransfer(context.Background(), bob.acct, tr.ID); !errors.Is(err, handle.ErrUnknownTransfer) {
		t.Fatalf("another user's resolve: %v, want unknown", err)
	}
	if _, err := e.svc.ResolveTransfer(context.Background(), ana.acct, "AAAAAAAAAAAAAAAAAAAAAA"); !errors.Is(err, handle.ErrUnknownTransfer) {
		t.Fatalf("an unknown id: %v, want unknown", err)
	}
	again := e.postForm(path, "", part{field: "token", data: []byte(tt.Token)}, part{field: "file", filename: "scan.pdf", contentType: "application/pdf", data: data})
	if again.status != http.StatusConflict {
		t.Fatalf("second use of the ticket: %d %s", again.status, again.raw)
	}
}

// TestTransferByPut: the descriptor's URL takes the raw body too.
func TestTransferByPut(t *testing.T) {
	e := newEnv(t)
	ana := e.signIn("ana@example.com")
	data := pattern(5000)
	tt, err := e.svc.PrepareTransfer(context.Background(), ana.acct, upload.TransferRequest{Name: "notes.txt"})
	if err != nil {
		t.Fatal(err)
	}
	f := e.mustStore(e.sendRaw(http.MethodPut, mustPath(t, tt.UploadURL), "", data, "Content-Type", "text/plain"), data, "notes.txt", "text/plain")
	h, _ := handle.Parse(tt.URI)
	if ref, err := e.svc.ResolveTransfer(context.Background(), ana.acct, h.(handle.Transfer).ID); err != nil || ref.ID != f.ID {
		t.Fatalf("resolve: %+v, %v", ref, err)
	}
}

func TestTransfersOff(t *testing.T) {
	e := newEnv(t, func(c *upload.Config) { c.Transfers = nil })
	ana := e.signIn("ana@example.com")
	_, err := e.svc.PrepareTransfer(context.Background(), ana.acct, upload.TransferRequest{Name: "a.pdf"})
	var ue *upload.Error
	if !errors.As(err, &ue) || ue.Kind != "transfers_off" {
		t.Fatalf("err = %v", err)
	}
}

func TestSHA256FromDigest(t *testing.T) {
	sum := sha256.Sum256([]byte("hello"))
	b64 := base64.RawURLEncoding.EncodeToString(sum[:])
	if got, err := upload.SHA256FromDigest("sha-256", b64); err != nil || got != sha([]byte("hello")) {
		t.Fatalf("got %q, %v", got, err)
	}
	if got, err := upload.SHA256FromDigest("md5", "x"); err != nil || got != "" {
		t.Fatalf("another algorithm: %q, %v", got, err)
	}
	if _, err := upload.SHA256FromDigest("SHA-256", "not base64!"); err == nil {
		t.Fatal("a malformed digest was accepted")
	}
}

func mustPath(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}
