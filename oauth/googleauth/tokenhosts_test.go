package googleauth_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/oauth/googleauth"
	"github.com/drivemail/drivemail/oauth/keyring"
	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/store/storetest"
)

// headerLog is a foreign listener that records the Authorization header
// of every request that reaches it.
type headerLog struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func (h *headerLog) requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

// TestGoogleTokenReachesOnlyGoogle: a per-user Google client, built as
// drivemail builds it, never hands the user's token to a host that is
// not the configured Google endpoint, neither when an export link
// redirects there nor when an upload session's Location points there.
// Each call fails with an error that names the host.
func TestGoogleTokenReachesOnlyGoogle(t *testing.T) {
	foreign := &headerLog{}
	foreign.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		foreign.mu.Lock()
		foreign.seen = append(foreign.seen, r.Method+" "+r.URL.Path+" Authorization="+r.Header.Get("Authorization"))
		foreign.mu.Unlock()
		io.Copy(io.Discard, r.Body)
		http.Error(w, "stolen", http.StatusForbidden)
	}))
	defer foreign.srv.Close()
	foreignHost := strings.TrimPrefix(foreign.srv.URL, "http://")

	// A Google endpoint that sends a download's content and upload
	// sessions to the foreign listener: an export past files.export's cap
	// goes through files.download, whose downloadUri redirects there.
	var fake *httptest.Server
	fake = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/drive/v3/files/sheet1/export":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"error":{"code":403,"message":"This file is too large to be exported.",`+
				`"errors":[{"domain":"global","reason":"exportSizeLimitExceeded","message":"This file is too large to be exported."}]}}`)
		case r.URL.Path == "/drive/v3/files/sheet1/download":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"name":"op1","done":true,"response":{"@type":"type.googleapis.com/google.apps.drive.v3.DownloadFileResponse",`+
				`"downloadUri":"`+fake.URL+`/content?id=sheet1","partialDownloadAllowed":false}}`)
		case r.URL.Path == "/content":
			http.Redirect(w, r, foreign.srv.URL+"/content?"+r.URL.RawQuery, http.StatusTemporaryRedirect)
		case strings.HasPrefix(r.URL.Path, "/upload/") && r.URL.Query().Get("uploadType") == "resumable":
			w.Header().Set("Location", foreign.srv.URL+r.URL.Path+"?uploadType=resumable&upload_id=stolen")
		default:
			http.Error(w, "not here", http.StatusNotFound)
		}
	}))
	defer fake.Close()
	endpoints := google.Endpoints{Base: fake.URL}
	hc := userClient(t, endpoints)
	ctx := context.Background()

	dc, err := drive.New(ctx, hc, endpoints)
	if err != nil {
		t.Fatal(err)
	}
	sheet := drive.File{ID: "sheet1", CanDownload: true, MimeType: "application/vnd.google-apps.spreadsheet"}
	gc, err := gmail.New(ctx, hc, endpoints, 256<<10)
	if err != nil {
		t.Fatal(err)
	}
	message := func(n int) gmail.WriteFunc {
		return func(ctx context.Context, w io.Writer) error {
			_, err := w.Write(bytes.Repeat([]byte("a"), n))
			return err
		}
	}

	paths := []struct {
		name string
		call func() error
	}{
		{"download URI that redirects", func() error {
			rc, err := dc.Export(ctx, sheet, "text/csv", nil)
			if err == nil {
				rc.Close()
			}
			return err
		}},
		{"Gmail upload session elsewhere", func() error {
			_, err := gc.Send(ctx, "", message(600<<10))
			return err
		}},
		{"Drive upload session elsewhere", func() error {
			_, err := dc.Upload(ctx, drive.NewFile{Name: "x.bin"}, bytes.NewReader(make([]byte, drive.UploadChunkSize+1)))
			return err
		}},
	}
	for _, p := range paths {
		err := p.call()
		if err == nil || !errors.Is(err, google.ErrTokenHost) || !strings.Contains(err.Error(), foreignHost) {
			t.Errorf("%s: error %v; want one that names %s", p.name, err, foreignHost)
		}
		if drive.IsTransient(err) {
			t.Errorf("%s: a stopped request counts as transient, so a send would try it again: %v", p.name, err)
		}
		if err != nil && strings.Contains(err.Error(), "ya29") {
			t.Errorf("%s: the error shows the token: %v", p.name, err)
		}
	}
	if got := foreign.requests(); len(got) != 0 {
		t.Errorf("requests reached the foreign host:\n%s", strings.Join(got, "\n"))
	}
}

// userClient signs a user in with a fresh Google token and returns
// their client from googleauth.Service.Client.
func userClient(t *testing.T, endpoints google.Endpoints) *http.Client {
	t.Helper()
	st := storetest.SQLite(t).Open(t, store.Options{})
	t.Cleanup(func() { st.Close() })
	ring, err := keyring.New([][]byte{bytes.Repeat([]byte{7}, 32)}, googleauth.KeyPurpose)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := googleauth.New(googleauth.Config{Endpoints: endpoints, ClientID: "cid", ClientSecret: "csecret",
		RedirectURL: "https://mail.example/oauth/callback", Store: st, Keys: ring})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	u, err := svc.SaveGrant(ctx, googleauth.Grant{Subject: "10001", Email: "ana@example.com",
		Token: &oauth2.Token{AccessToken: "ya29.user-token", RefreshToken: "1//r", TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	hc, err := svc.Client(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	return hc
}
