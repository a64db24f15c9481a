package upload_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/oauth/googleauth"
	"github.com/drivemail/drivemail/upload"
)

// curl runs the real curl binary and returns its standard output.
func curl(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	path, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed; the curl-shaped requests are covered by the Go client tests")
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("curl %v: %v\n%s\n%s", args, err, out, stderr.String())
	}
	return out
}

func TestCurlUploadsLandInDriveWithTheSameBytes(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	dir := t.TempDir()
	data := pattern(3<<20 + 17)
	if err := os.WriteFile(filepath.Join(dir, "Q3 report.pdf"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	auth := "Authorization: Bearer " + u.token

	// The example docs/reference.md gives: curl -F file=@report.pdf.
	var form upload.Result
	out := curl(t, dir, "-sS", "--fail-with-body", "-H", auth, "-F", "file=@Q3 report.pdf", e.base+"/upload")
	if err := json.Unmarshal(out, &form); err != nil {
		t.Fatalf("curl output %q: %v", out, err)
	}
	e.mustStore(answer{status: http.StatusCreated, result: form}, data, "Q3 report.pdf", "application/pdf")

	// The raw file as the body, named in the query.
	var raw upload.Result
	out = curl(t, dir, "-sS", "--fail-with-body", "-H", auth, "-T", "Q3 report.pdf", e.base+"/upload?name=copy.pdf", "-X", "POST")
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatalf("curl output %q: %v", out, err)
	}
	e.mustStore(answer{status: http.StatusCreated, result: raw}, data, "copy.pdf", "application/pdf")
	if raw.FileID == form.FileID {
		t.Error("two uploads gave one file id")
	}
	// Both went to the one "drivemail uploads" folder at the top of My Drive.
	a, _ := e.emu.Drive().FileByID(form.FileID)
	b, _ := e.emu.Drive().FileByID(raw.FileID)
	folder, ok := e.emu.Drive().FileByID(a.Parents[0])
	if !ok || folder.Name != upload.DefaultFolderName || folder.MimeType != drive.MimeFolder || b.Parents[0] != folder.ID ||
		folder.Parents[0] != e.emu.Drive().RootID(u.email) {
		t.Errorf("uploads in %v and %v; folder %+v", a.Parents, b.Parents, folder)
	}
}

func TestUploadWithoutTokenIsChallenged(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	for name, token := range map[string]string{"no token": "", "unknown token": "dm_not_a_token", "Google token": "ya29.abc"} {
		a := e.postForm("/upload", token, part{field: "file", filename: "a.txt", data: []byte("hi")})
		if a.status != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, a.status)
		}
		want := `resource_metadata="` + e.base + `/.well-known/oauth-protected-resource/mcp"`
		if h := a.header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Bearer ") || !strings.Contains(h, want) {
			t.Errorf("%s: WWW-Authenticate = %q", name, h)
		}
	}
	if n := len(e.files(u)); n != 0 {
		t.Errorf("%d files created without a token", n)
	}
}

func TestDirectUploadNamesAndTypes(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	png := append([]byte("\x89PNG\r\n\x1a\n"), pattern(200)...)
	cases := []struct {
		name     string
		send     func() answer
		data     []byte
		wantName string
		wantType string
	}{
		{"form: type from the part", func() answer {
			return e.postForm("/upload", u.token, part{field: "file", filename: "notes", contentType: "text/markdown", data: []byte("# hi")})
		}, []byte("# hi"), "notes", "text/markdown"},
		{"form: generic part type, type from the name", func() answer {
			return e.postForm("/upload", u.token, part{field: "file", filename: "data.csv", contentType: "application/octet-stream", data: []byte("a,b\n")})
		}, []byte("a,b\n"), "data.csv", "text/csv"},
		{"form: name field first wins over the filename", func() answer {
			return e.postForm("/upload", u.token, part{field: "name", data: []byte("Final.docx")},
				part{field: "file", filename: "draft.docx", data: []byte("PK")})
		}, []byte("PK"), "Final.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
		{"form: no extension, type sniffed", func() answer {
			return e.postForm("/upload", u.token, part{field: "file", filename: "logo", data: png})
		}, png, "logo", "image/png"},
		{"form: a Windows path keeps only the file name", func() answer {
			return e.postForm("/upload", u.token, part{field: "file", filename: `C:\Users\ann\..\report.txt`, data: []byte("x")})
		}, []byte("x"), "report.txt", "text/plain"},
		{"form: control characters and bidi overrides cleaned", func() answer {
			return e.postForm("/upload", u.token, part{field: "file", filename: "a\u202egpj.exe\tb.txt", data: []byte("y")})
		}, []byte("y"), "agpj.exe b.txt", "text/plain"},
		{"raw: Content-Disposition names it", func() answer {
			return e.sendRaw(http.MethodPost, "/upload", u.token, []byte("%PDF-1.4"), "Content-Disposition", `attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`)
		}, []byte("%PDF-1.4"), "résumé.pdf", "application/pdf"},
		{"raw: query name with a path", func() answer {
			return e.sendRaw(http.MethodPost, "/upload?name=../../etc/passwd", u.token, []byte("root"), "Content-Type", "text/plain")
		}, []byte("root"), "passwd", "text/plain"},
		{"raw: curl --data-binary's form type is ignored", func() answer {
			return e.sendRaw(http.MethodPost, "/upload?name=pic", u.token, png, "Content-Type", "application/x-www-form-urlencoded")
		}, png, "pic", "image/png"},
		{"raw: empty file", func() answer {
			return e.sendRaw(http.MethodPost, "/upload?name=empty.txt", u.token, nil)
		}, []byte{}, "empty.txt", "text/plain"},
		{"form: empty file", func() answer {
			return e.postForm("/upload", u.token, part{field: "file", filename: "empty.bin", data: nil})
		}, []byte{}, "empty.bin", "application/octet-stream"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			e.mustStore(tc.send(), tc.data, tc.wantName, tc.wantType)
		})
	}
}

func TestDirectUploadRefusals(t *testing.T) {
	cases := []struct {
		name   string
		send   func(e *env, u user) answer
		status int
		wants  []string
	}{
		{"no name", func(e *env, u user) answer {
			return e.sendRaw(http.MethodPost, "/upload", u.token, []byte("x"))
		}, http.StatusBadRequest, []string{"no name", "-F file=@"}},
		{"no file part", func(e *env, u user) answer {
			return e.postForm("/upload", u.token, part{field: "name", data: []byte("a.txt")})
		}, http.StatusBadRequest, []string{"no file part"}},
		{"two files", func(e *env, u user) answer {
			return e.postForm("/upload", u.token, part{field: "file", filename: "a.txt", data: []byte("a")}, part{field: "file", filename: "b.txt", data: []byte("b")})
		}, http.StatusBadRequest, []string{"more than one file", "nothing was saved"}},
		{"name after the file", func(e *env, u user) answer {
			return e.postForm("/upload", u.token, part{field: "file", filename: "a.txt", data: []byte("a")}, part{field: "name", data: []byte("b.txt")})
		}, http.StatusBadRequest, []string{"comes after the file", "?name="}},
		{"unknown field", func(e *env, u user) answer {
			return e.postForm("/upload", u.token, part{field: "color", data: []byte("red")}, part{field: "file", filename: "a.txt", data: []byte("a")})
		}, http.StatusBadRequest, []string{`"color"`, "name and folder_id"}},
		{"unknown query parameter", func(e *env, u user) answer {
			return e.sendRaw(http.MethodPost, "/upload?name=a.txt&path=/tmp", u.token, []byte("x"))
		}, http.StatusBadRequest, []string{`"path"`}},
		{"oversized field", func(e *env, u user) answer {
			return e.postForm("/upload", u.token, part{field: "name", data: bytes.Repeat([]byte("n"), 1025)}, part{field: "file", filename: "a.txt", data: []byte("a")})
		}, http.StatusBadRequest, []string{"longer than 1024 bytes"}},
		{"fields before the file past their budget", func(e *env, u user) answer {
			return e.postForm("/upload", u.token, part{field: "name", data: []byte("a.txt"), contentType: "text/plain; x=" + strings.Repeat("y", 70<<10)},
				part{field: "file", filename: "a.txt", data: []byte("a")})
		}, http.StatusRequestEntityTooLarge, []string{"form fields before the file"}},
		{"bad folder id", func(e *env, u user) answer {
			return e.postForm("/upload?folder_id=My%20Folder", u.token, part{field: "file", filename: "a.txt", data: []byte("a")})
		}, http.StatusBadRequest, []string{"not a Drive folder id"}},
		{"folder drivemail cannot see", func(e *env, u user) answer {
			return e.postForm("/upload", u.token, part{field: "folder_id", data: []byte("1AbCdEfGhIjKlMnOpQrStUvWxYz012345")}, part{field: "file", filename: "a.txt", data: []byte("a")})
		}, http.StatusNotFound, []string{"folder", "drive.file"}},
		{"Google Docs type", func(e *env, u user) answer {
			return e.sendRaw(http.MethodPost, "/upload?name=a", u.token, []byte("x"), "Content-Type", "application/vnd.google-apps.document")
		}, http.StatusUnsupportedMediaType, []string{"Google Docs type"}},
		{"multipart that is not a form", func(e *env, u user) answer {
			return e.sendRaw(http.MethodPost, "/upload?name=a", u.token, []byte("x"), "Content-Type", "multipart/related; boundary=x")
		}, http.StatusUnsupportedMediaType, []string{"multipart/form-data"}},
		{"form without boundary", func(e *env, u user) answer {
			return e.sendRaw(http.MethodPost, "/upload", u.token, []byte("x"), "Content-Type", "multipart/form-data")
		}, http.StatusBadRequest, []string{"no boundary"}},
		{"truncated form", func(e *env, u user) answer {
			body, ct := formBody(part{field: "file", filename: "a.txt", data: pattern(5000)})
			b := new(bytes.Buffer)
			b.ReadFrom(body)
			return e.sendRaw(http.MethodPost, "/upload", u.token, b.Bytes()[:b.Len()-60], "Content-Type", ct)
		}, http.StatusBadRequest, []string{"cut off"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			u := e.signIn("ann@example.com")
			e.mustRefuse(tc.send(e, u), tc.status, u, tc.wants...)
		})
	}
}

func TestDirectUploadNeedsDriveScope(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("mail-only@example.com", "openid", googleauth.ScopeUserinfoEmail, googleauth.ScopeGmailSend)
	a := e.postForm("/upload", u.token, part{field: "file", filename: "a.txt", data: []byte("a")})
	e.mustRefuse(a, http.StatusForbidden, u, "Reconnect drivemail")
}

func TestUploadIntoAFolderTheAppMade(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	first := e.postForm("/upload", u.token, part{field: "file", filename: "a.txt", data: []byte("a")})
	f := e.mustStore(first, []byte("a"), "a.txt", "text/plain")
	folder := f.Parents[0]
	a := e.postForm("/upload?folder_id="+folder, u.token, part{field: "file", filename: "b.txt", data: []byte("b")})
	g := e.mustStore(a, []byte("b"), "b.txt", "text/plain")
	if len(g.Parents) != 1 || g.Parents[0] != folder {
		t.Errorf("parents = %v, want [%s]", g.Parents, folder)
	}
	// folder_id in the query and the form must agree.
	c := e.postForm("/upload?folder_id="+folder, u.token, part{field: "folder_id", data: []byte("1AbCdEfGhIjKlMnOpQrStUvWxYz012345")},
		part{field: "file", filename: "c.txt", data: []byte("c")})
	if c.status != http.StatusBadRequest || !strings.Contains(c.errMsg, "given twice") {
		t.Errorf("conflicting folder_id: %d %s", c.status, c.raw)
	}
}
