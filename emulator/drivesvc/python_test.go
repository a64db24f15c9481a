package drivesvc_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/emulator/drivesvc"
)

// pythonWithGoogleAPI finds a python3 that can import googleapiclient
// (Debian's python3-googleapi installs it for /usr/bin/python3).
func pythonWithGoogleAPI() (string, bool) {
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		path, err := exec.LookPath(py)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import googleapiclient, google_auth_httplib2").Run() == nil {
			return path, true
		}
	}
	return "", false
}

// driveDiscovery is drive/v3's discovery document as the Go client
// module ships it (it has files.download and operations.get).
func driveDiscovery(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "google.golang.org/api").Output()
	if err != nil {
		t.Skipf("cannot locate google.golang.org/api: %v", err)
	}
	p := filepath.Join(strings.TrimSpace(string(out)), "drive", "v3", "drive-api.json")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no drive/v3 discovery document: %v", err)
	}
	return p
}

// TestPythonGoogleAPIClient runs google-api-python-client, a second
// Google client nobody here wrote, against the emulator's Drive paths
// drivemail relies on: files.export (also from a shared drive, and its
// 10 MB cap), files.download's operation and downloadUri, an export link
// without a token, and a disabled API. It skips, saying so, where
// python3-googleapi is not installed.
func TestPythonGoogleAPIClient(t *testing.T) {
	py, ok := pythonWithGoogleAPI()
	if !ok {
		t.Skip("python3 with googleapiclient not found (apt-get install python3-googleapi): skipping the second-client check")
	}
	disc := driveDiscovery(t)
	e := newEnv(t)
	doc := e.put(ann, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "We ship the pelican feature."})
	big := e.put(ann, drivesvc.FileSpec{Name: "Big", Kind: drivesvc.KindDoc, DocFillBytes: drivesvc.ExportLimit + 1})
	d, err := e.drive.PutSharedDrive("Finance", ann)
	if err != nil {
		t.Fatal(err)
	}
	shared := e.put(ann, drivesvc.FileSpec{Name: "Shared plan", Kind: drivesvc.KindDoc, DocText: "shared plan", SharedDrive: d.ID})
	content := bytes.Repeat([]byte("drivemail"), 5000)
	bin := e.put(ann, drivesvc.FileSpec{Name: "data.bin", Content: content})
	e.drive.SetDownloadPolls(1)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "googleapi_client.py"))
	cmd.Env = append(os.Environ(), "EMU="+e.srv.URL, "TOKEN="+e.token(ann), "DISCOVERY="+disc,
		"DOC="+doc.ID, "BIG_DOC="+big.ID, "SHARED_DOC="+shared.ID, "BIN="+bin.ID, "BIN_SIZE="+strconv.Itoa(len(content)))
	out, err := cmd.CombinedOutput()
	t.Logf("google-api-python-client:\n%s", out)
	if err != nil {
		t.Fatalf("the Python client failed: %v", err)
	}
}
