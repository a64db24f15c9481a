package drive_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/internal/logtest"
)

// foreignDownloads rewrites the downloadUri of every files.download
// operation to a host off Google's download hosts.
type foreignDownloads struct{ base http.RoundTripper }

var downloadURI = regexp.MustCompile(`"downloadUri":\s*"http://[^/"]+`)

func (f foreignDownloads) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := f.base.RoundTrip(r)
	if err != nil || !strings.Contains(r.URL.Path, "/operations/") {
		return res, err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	b = downloadURI.ReplaceAll(b, []byte(`"downloadUri": "https://dl9.example.org`))
	res.Body, res.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	res.Header.Del("Content-Length")
	return res, nil
}

// TestRefusedDownloadHostIsLogged: a downloadUri off Google's download
// hosts is not fetched (the export fails as such) and the operator is
// told at ERROR which origin Google named and which flag extends the
// list; the signed URL itself is not logged.
func TestRefusedDownloadHostIsLogged(t *testing.T) {
	e := &env{Env: emutest.Start(t)}
	hc := e.Client(user, emutest.ScopeDriveReadonly)
	hc.Transport = foreignDownloads{base: hc.Transport}
	var logs logtest.Buffer
	dc, err := drive.New(context.Background(), hc, e.Endpoints, fastPolls, drive.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	e.dc = dc
	e.Emu.Drive().SetDownloadPolls(1)
	_, err = dc.Export(context.Background(), longDoc(t, e), "text/plain", nil)
	if !errors.Is(err, drive.ErrBadContentURL) {
		t.Fatalf("err = %v, want ErrBadContentURL", err)
	}
	out := logs.String()
	for _, want := range []string{"level=ERROR", "origin=https://dl9.example.org", "--download-hosts"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "/download?") || strings.Contains(out, "id=") {
		t.Errorf("the log carries the signed URL:\n%s", out)
	}
}
