package upload_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/clientfile"
	"github.com/drivemail/drivemail/clientfile/clientfiletest"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/internal/memnet"
	"github.com/drivemail/drivemail/upload"
)

func saveEnv(t *testing.T, tune ...func(*upload.Config)) (*env, *clientfiletest.Host) {
	t.Helper()
	return saveEnvOn(t, nil, nil, tune...)
}

// saveBubbleEnv is saveEnv for a test inside a testing/synctest bubble
// (see newBubbleEnv): the file host too is on the in-memory network.
func saveBubbleEnv(t *testing.T, tune ...func(*upload.Config)) (*env, *clientfiletest.Host) {
	t.Helper()
	return saveEnvOn(t, memnet.New(), nil, tune...)
}

// saveEnvOver is saveEnv with the users' Google clients made by wrap (see
// startEnv).
func saveEnvOver(t *testing.T, wrap func(account.Tokens) account.Tokens, tune ...func(*upload.Config)) (*env, *clientfiletest.Host) {
	t.Helper()
	return saveEnvOn(t, nil, wrap, tune...)
}

// saveEnvOn is saveEnvOver with everything on network n (nil: loopback).
func saveEnvOn(t *testing.T, n *memnet.Network, wrap func(account.Tokens) account.Tokens, tune ...func(*upload.Config)) (*env, *clientfiletest.Host) {
	t.Helper()
	host := clientfiletest.NewHostOn(t, n)
	tune = append([]func(*upload.Config){func(c *upload.Config) {
		c.Files = host.Fetcher(t, func(fc *clientfile.Config) { fc.IdleTimeout = 500 * time.Millisecond })
	}}, tune...)
	return startEnvOn(t, n, wrap, tune...), host
}

func wantSaveRefusal(t *testing.T, err error, kind string, says string) {
	t.Helper()
	var ue *upload.Error
	if !errors.As(err, &ue) || string(ue.Kind) != kind || !strings.Contains(ue.Text, says) {
		t.Fatalf("err = %v, want %s saying %q", err, kind, says)
	}
}

// TestSaveClientFile: a file from the conversation streams into the
// user's Drive (in resumable chunks), under the client's name, byte for
// byte, and its handle comes back.
func TestSaveClientFile(t *testing.T) {
	e, host := saveEnv(t)
	ana := e.signIn("ana@example.com")
	data := pattern(12 << 20)
	host.Handle("/file-1", clientfiletest.Serve(data, "application/octet-stream", ""))
	res, err := e.svc.SaveClientFile(context.Background(), ana.acct, upload.SaveRequest{URL: host.URL("", "/file-1?sig=x"), Name: "site video.mp4", MimeType: "video/mp4"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Name != "site video.mp4" || res.MimeType != "video/mp4" || res.Size != int64(len(data)) || res.SHA256 != sha(data) || !strings.HasSuffix(res.Handle, "/"+res.FileID) {
		t.Fatalf("result = %+v", res)
	}
	if got := e.stored(res.FileID); !bytes.Equal(got, data) {
		t.Fatal("Drive holds other bytes than the file served")
	}
	for _, r := range host.Requests() {
		if r.Header.Get("Authorization") != "" {
			t.Fatal("the file host was sent an Authorization header")
		}
	}
}

func TestSaveClientFileRefusals(t *testing.T) {
	e, host := saveEnv(t, func(c *upload.Config) { c.MaxBytes = 1 << 20 })
	ana := e.signIn("ana@example.com")
	host.Handle("/old", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "expired", http.StatusForbidden) })
	held := make(chan int, 1)
	host.Handle("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(1<<20+1))
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		held <- 0
	})
	host.Handle("/stall", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "900000")
		w.Write(make([]byte, 300000))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	_, err := e.svc.SaveClientFile(context.Background(), ana.acct, upload.SaveRequest{URL: host.URL("", "/old")})
	wantSaveRefusal(t, err, "client_file_expired", "attach the file to the conversation again")
	_, err = e.svc.SaveClientFile(context.Background(), ana.acct, upload.SaveRequest{URL: host.URL("", "/big")})
	wantSaveRefusal(t, err, "client_file_too_large", "1 MiB")
	<-held
	_, err = e.svc.SaveClientFile(context.Background(), ana.acct, upload.SaveRequest{URL: host.URL("", "/stall"), Name: "a.bin"})
	wantSaveRefusal(t, err, "client_file_stalled", "Nothing was saved")
	_, err = e.svc.SaveClientFile(context.Background(), ana.acct, upload.SaveRequest{URL: host.URL(clientfiletest.PrivateHost, "/x")})
	wantSaveRefusal(t, err, "client_file_refused", "public address")
	if n := len(e.files(ana)); n != 0 {
		t.Fatalf("%d files in Drive after refusals", n)
	}
	off := newEnv(t)
	_, err = off.svc.SaveClientFile(context.Background(), off.signIn("bob@example.com").acct, upload.SaveRequest{URL: "https://files.oaiusercontent.com/x"})
	wantSaveRefusal(t, err, "client_files_off", "request_upload")
}

// TestSaveClientFileChecksBeforeItFetches: a client file goes through
// Save's path, so a folder drivemail may not write to, a bad folder id,
// or a Google type the client declared is refused before the file's host
// is asked for anything; a Google type its headers declare is refused
// before its body is read, and the file is fetched again only when it
// passes.
func TestSaveClientFileChecksBeforeItFetches(t *testing.T) {
	e, host := saveEnv(t)
	ana := e.signIn("ana@example.com")
	handMade, err := e.emu.Drive().PutFile(ana.email, drivesvc.FileSpec{Name: "Reports", Kind: drivesvc.KindFolder})
	if err != nil {
		t.Fatal(err)
	}
	host.Handle("/f", clientfiletest.Serve([]byte("%PDF-1.7"), "application/pdf", "scan.pdf"))
	host.Handle("/doc", clientfiletest.Serve([]byte("{}"), "application/vnd.google-apps.document", "notes"))
	for _, tt := range []struct {
		name string
		req  upload.SaveRequest
		kind string
	}{
		{"foreign folder", upload.SaveRequest{URL: host.URL("", "/f"), FolderID: handMade.ID}, "folder_not_writable"},
		{"bad folder id", upload.SaveRequest{URL: host.URL("", "/f"), FolderID: "a/b"}, "bad_folder_id"},
		{"a Google type from the client", upload.SaveRequest{URL: host.URL("", "/f"), MimeType: "application/vnd.google-apps.document"}, "google_type"},
	} {
		_, err := e.svc.SaveClientFile(context.Background(), ana.acct, tt.req)
		wantSaveRefusal(t, err, tt.kind, "")
	}
	if n := len(host.Requests()); n != 0 {
		t.Fatalf("the file host was asked %d times before the checks passed", n)
	}
	_, err = e.svc.SaveClientFile(context.Background(), ana.acct, upload.SaveRequest{URL: host.URL("", "/doc")})
	wantSaveRefusal(t, err, "google_type", "")
	res, err := e.svc.SaveClientFile(context.Background(), ana.acct, upload.SaveRequest{URL: host.URL("", "/f")})
	if err != nil || res.Name != "scan.pdf" || res.MimeType != "application/pdf" {
		t.Fatalf("a file that passes: %+v, %v", res, err)
	}
	if n := len(e.files(ana)); n != 1 {
		t.Fatalf("%d files in Drive, want the one that passed", n)
	}
}

// TestSaveClientFileNamedByItsURL: a file whose client and host give no
// name is saved under its URL's last segment, without the query or the
// fragment (neither is part of the file's name), as send_email names it.
func TestSaveClientFileNamedByItsURL(t *testing.T) {
	e, host := saveEnv(t)
	ana := e.signIn("ana@example.com")
	host.Handle("/files/report.pdf", clientfiletest.Serve([]byte("%PDF-1.7"), "application/pdf", ""))
	for _, suffix := range []string{"?sig=x", "#page=2", "?sig=x#page=2"} {
		res, err := e.svc.SaveClientFile(context.Background(), ana.acct, upload.SaveRequest{URL: host.URL("", "/files/report.pdf") + suffix})
		if err != nil || res.Name != "report.pdf" {
			t.Errorf("URL ending %q: saved as %q, %v; want report.pdf", suffix, res.Name, err)
		}
	}
}
