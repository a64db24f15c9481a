package tools

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drivemail/drivemail/upload"
)

func TestRequestUpload(t *testing.T) {
	h := newHarness(t, nil)
	exp := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	h.uploads.ticket = upload.Ticket{UploadURL: "https://dm.example.com/upload/tkt", Method: "PUT", ExpiresAt: exp, Handle: "mcp-file://dm.example.com/pending"}
	sum := strings.Repeat("AB", 32)
	res := h.call("request_upload", map[string]any{"name": " Q3 it's.pdf ", "size": 1234, "sha256": sum})
	if res.IsError {
		t.Fatalf("refused: %s", res.text())
	}
	if h.uploads.req.Name != "Q3 it's.pdf" || h.uploads.req.Size == nil || *h.uploads.req.Size != 1234 || h.uploads.req.SHA256 != strings.ToLower(sum) {
		t.Errorf("request = %+v", h.uploads.req)
	}
	var out UploadResult
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
		t.Fatal(err)
	}
	wantCurl := `curl -sS --fail-with-body --globoff -T 'Q3 it'\''s.pdf' 'https://dm.example.com/upload/tkt'`
	if out.Curl != wantCurl {
		t.Errorf("curl = %s, want %s", out.Curl, wantCurl)
	}
	if !strings.Contains(res.text(), wantCurl) || !strings.Contains(res.text(), "mcp-file://dm.example.com/pending") {
		t.Errorf("text = %q", res.text())
	}
}

// A size of 0 is an empty file's size; no size at all is "unknown".
func TestRequestUploadSizeZeroIsNotAbsent(t *testing.T) {
	cases := map[string]*int64{
		`{"name":"empty.txt","size":0}`: new(int64(0)),
		`{"name":"a.txt","size":1}`:     new(int64(1)),
		`{"name":"a.txt"}`:              nil,
		`{"name":"a.txt","size":null}`:  nil,
	}
	for args, want := range cases {
		h := newHarness(t, nil)
		h.uploads.ticket = upload.Ticket{UploadURL: "https://dm.example.com/upload/t", Method: "PUT", ExpiresAt: time.Now()}
		if res := h.call("request_upload", args); res.IsError {
			t.Fatalf("%s refused: %s", args, res.text())
		}
		got := h.uploads.req.Size
		if (got == nil) != (want == nil) || (got != nil && *got != *want) {
			t.Errorf("%s: size = %v, want %v", args, got, want)
		}
	}
}

func TestRequestUploadRefuses(t *testing.T) {
	cases := map[string]string{
		`{}`:                     `"name" is required`,
		`{"name":"a/b.pdf"}`:     "without folders",
		`{"name":"a\u0007.pdf"}`: "control characters",
		`{"name":"` + strings.Repeat("n", 256) + `"}`:                                 "at most 255 bytes",
		`{"name":"a.pdf","size":-1}`:                                                  `"size" is -1`,
		`{"name":"a.pdf","sha256":"abc"}`:                                             "64 hexadecimal",
		`{"name":"a.pdf","folder_id":"My Folder"}`:                                    `"folder_id": "My Folder" is not a Drive file id`,
		`{"name":"a.pdf","path":"/tmp"}`:                                              `unknown field "path"`,
		`{"name":"a.pdf","folder_id":"mcp-file://h/transfer/k3Jx9_Qw-2bN7vLpZs0aYe"}`: "is a file-transfer URI, not a folder",
	}
	for args, want := range cases {
		h := newHarness(t, nil)
		h.mustRefuse("request_upload", args, want)
		if h.uploads.called != 0 {
			t.Errorf("%s: uploads called", args)
		}
	}
	// The name limit at its edge is accepted; a ticket without a handle
	// says where the handle will come from.
	h := newHarness(t, nil)
	h.uploads.ticket = upload.Ticket{UploadURL: "https://dm.example.com/upload/t", Method: "PUT", ExpiresAt: time.Now()}
	res := h.call("request_upload", `{"name":"`+strings.Repeat("n", 255)+`"}`)
	if res.IsError {
		t.Errorf("255-byte name refused: %s", res.text())
	}
	if !strings.Contains(res.text(), "answers with JSON holding the file's file_id and handle") {
		t.Errorf("text = %q", res.text())
	}
}

func TestRequestUploadWithoutUploads(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.Uploads = nil })
	h.mustRefuse("request_upload", `{"name":"a.pdf"}`, "does not offer uploads", "drive_search")
}

func TestProgressThrottles(t *testing.T) {
	var sent []map[string]any
	now := time.Unix(0, 0)
	p := &progress{token: "tok", send: func(m map[string]any) { sent = append(sent, m) }, now: func() time.Time { return now }}
	const total = 10 << 20
	for done := int64(64 << 10); done <= total; done += 64 << 10 {
		p.report(done, total)
	}
	// 160 callbacks of 64 KiB: one at the start, one per MiB, the final one.
	if len(sent) < 10 || len(sent) > 12 {
		t.Fatalf("sent %d notifications for 10 MiB", len(sent))
	}
	last := sent[len(sent)-1]
	if last["progress"] != int64(total) || last["total"] != int64(total) || last["progressToken"] != "tok" {
		t.Errorf("last = %v", last)
	}
	if !strings.Contains(last["message"].(string), "10.0 MiB of 10.0 MiB") {
		t.Errorf("message = %v", last["message"])
	}
	var prev int64 = -1
	for _, m := range sent {
		if m["progress"].(int64) <= prev {
			t.Fatalf("progress not increasing: %v", sent)
		}
		prev = m["progress"].(int64)
	}
	// Time also releases a notification, and a repeat of the same figure is dropped.
	n := len(sent)
	p.report(total+1, 0)
	now = now.Add(progressEvery)
	p.report(total+2, 0)
	p.report(total+2, 0)
	if len(sent) != n+1 || sent[n]["progress"] != int64(total+2) {
		t.Errorf("after time passed: %v", sent[n:])
	}
	if _, ok := sent[n]["total"]; ok {
		t.Error("unknown total must be left out")
	}
}

// TestCurlLineUploadsAnyName runs the curl line request_upload gives, as
// a user pastes it into a shell, for names curl would otherwise read as
// patterns ([…] ranges, {…} lists) or options.
func TestCurlLineUploadsAnyName(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	got := map[string]string{}
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[r.URL.Path] = r.Method + " " + string(b)
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	dir := t.TempDir()
	for i, name := range []string{"report [final].pdf", "a{b,c}.txt", "Q3 it's.pdf", "-v.txt", "notes;type=text.html"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("bytes of "+name), 0o644); err != nil {
			t.Fatal(err)
		}
		url := fmt.Sprintf("%s/upload/t%d", srv.URL, i)
		cmd := exec.Command("sh", "-c", curlCommand(url, name))
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%q: %v\n%s", name, err, out)
			continue
		}
		if want := "PUT bytes of " + name; got[fmt.Sprintf("/upload/t%d", i)] != want {
			t.Errorf("%q: the server got %q, want %q", name, got[fmt.Sprintf("/upload/t%d", i)], want)
		}
	}
}
