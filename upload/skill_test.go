package upload_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/upload"
)

// skillScript runs docs/skills/drivemail-upload/upload.sh with args and
// env, returning its standard output, standard error and exit code.
func skillScript(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	for _, tool := range []string{"sh", "curl", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed; the skill script needs it", tool)
		}
	}
	script, err := filepath.Abs("../docs/skills/drivemail-upload/upload.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// The skill's whole flow: describe the file, ask request_upload with what
// it printed, send it with the URL, attach by the printed handle.
func TestSkillScriptWithATicket(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	dir := t.TempDir()
	name := `Q3 "final"; v2 [draft] {a,b}.pdf`
	data := pattern(200_000)
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := skillScript(t, dir, nil, "--describe", name)
	var d struct {
		Name   string `json:"name"`
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil {
		t.Fatalf("--describe: exit %d, %q %q", code, out, stderr)
	}
	if d.Name != name || d.Size != int64(len(data)) || d.SHA256 != sha(data) {
		t.Fatalf("--describe = %+v", d)
	}
	tk := e.ticket(u, upload.Request{Name: d.Name, Size: &d.Size, SHA256: d.SHA256})
	out, stderr, code = skillScript(t, dir, nil, name, tk.UploadURL)
	if code != 0 {
		t.Fatalf("upload: exit %d, %q %q", code, out, stderr)
	}
	files := e.files(u)
	if len(files) != 1 {
		t.Fatalf("%d files in Drive", len(files))
	}
	want := "file_id=" + files[0].ID + "\nhandle=mcp-file://" + strings.TrimPrefix(e.base, "http://") + "/" + files[0].ID + "\n"
	if out != want || files[0].Name != name || files[0].SHA256 != sha(data) {
		t.Errorf("printed %q, want %q; Drive holds %+v", out, want, files[0])
	}
	// The same URL again: drivemail's sentence, exit 1.
	out, stderr, code = skillScript(t, dir, nil, name, tk.UploadURL)
	if code != 1 || out != "" || !strings.Contains(stderr, "HTTP 409") || !strings.Contains(stderr, "already used") {
		t.Errorf("second use: exit %d, %q %q", code, out, stderr)
	}
}

func TestSkillScriptWithABearerToken(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	dir := t.TempDir()
	name := "a,b;c.txt"
	if err := os.WriteFile(filepath.Join(dir, name), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"DRIVEMAIL_URL=" + e.base + "/", "DRIVEMAIL_TOKEN=" + u.token}
	out, stderr, code := skillScript(t, dir, env, name)
	if code != 0 || !strings.HasPrefix(out, "file_id=") {
		t.Fatalf("exit %d, %q %q", code, out, stderr)
	}
	if files := e.files(u); len(files) != 1 || files[0].Name != name {
		t.Errorf("files = %+v", files)
	}
	_, stderr, code = skillScript(t, dir, []string{"DRIVEMAIL_URL=" + e.base, "DRIVEMAIL_TOKEN=dm_wrong"}, name)
	if code != 1 || !strings.Contains(stderr, "HTTP 401") {
		t.Errorf("bad token: exit %d, %q", code, stderr)
	}
	_, stderr, code = skillScript(t, dir, []string{"DRIVEMAIL_URL="}, name)
	if code != 1 || !strings.Contains(stderr, "request_upload") {
		t.Errorf("no URL and no token: exit %d, %q", code, stderr)
	}
}
