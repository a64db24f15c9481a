package server

import (
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestDemoGuideLines(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:8080")
	g := demoGuide{
		Base: base, Emulator: "http://127.0.0.1:9999", Token: "dm_at_TOKEN", TokenTTL: 12 * time.Hour,
		User: "demo@example.com", FileID: "1FILEID", FileName: "Q3 Report.pdf", Inspector: "npx -y inspector",
		Upload: "/tmp/drivemail-demo-1/drivemail-demo-upload.txt",
	}
	var b strings.Builder
	g.write(&b)
	out := b.String()
	for _, want := range []string{
		"  MCP endpoint  http://127.0.0.1:8080/mcp\n",
		"  Sent mail     http://127.0.0.1:9999/_emulator/outbox",
		"valid for 12 hours",
		`npx -y inspector --cli http://127.0.0.1:8080/mcp --transport http --header "Authorization: Bearer dm_at_TOKEN" --method tools/list` + "\n",
		`npx -y inspector --cli http://127.0.0.1:8080/mcp --transport http --header "Authorization: Bearer dm_at_TOKEN" --method tools/call --tool-name drive_search --tool-args-json '{"query":""}'` + "\n",
		`npx -y inspector --web --transport http --server-url http://127.0.0.1:8080/mcp --header "Authorization: Bearer dm_at_TOKEN"` + "\n",
		`claude mcp add --transport http drivemail http://127.0.0.1:8080/mcp --header "Authorization: Bearer dm_at_TOKEN"` + "\n",
		`curl -H "Authorization: Bearer dm_at_TOKEN" -F file=@/tmp/drivemail-demo-1/drivemail-demo-upload.txt http://127.0.0.1:8080/upload` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the guide lacks %q:\n%s", want, out)
		}
	}
	m := regexp.MustCompile(`--tool-name send_email --tool-args-json '([^']*)'\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no send_email line:\n%s", out)
	}
	var args struct {
		To          string   `json:"to"`
		Subject     string   `json:"subject"`
		Attachments []string `json:"attachments"`
	}
	if err := json.Unmarshal([]byte(m[1]), &args); err != nil {
		t.Fatalf("the send_email arguments are not JSON: %v", err)
	}
	if args.To == "" || args.Subject == "" || len(args.Attachments) != 1 || args.Attachments[0] != "1FILEID" {
		t.Errorf("send_email arguments %+v: want a recipient, a subject and the seeded file", args)
	}
}

func TestDemoGuideWithoutAPDF(t *testing.T) {
	base, _ := url.Parse("http://localhost:8080")
	var b strings.Builder
	demoGuide{Base: base, Emulator: "http://127.0.0.1:1", Token: "t", TokenTTL: time.Hour, Inspector: "i"}.write(&b)
	if strings.Contains(b.String(), "send_email") {
		t.Errorf("with no seeded PDF the guide still offers a send line:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "valid for 1 hour;") || !strings.Contains(b.String(), "--method tools/list") ||
		!strings.Contains(b.String(), "--tool-name drive_search --tool-args-json '{\"query\":\"\"}'\n") ||
		!strings.Contains(b.String(), "--tool-name search_mail --tool-args-json '{\"query\":\"has:attachment\"}'\n") {
		t.Errorf("guide:\n%s", b.String())
	}
}

// TestDemoUploadLineWorksFromAnyFolder: the guide's curl line names a file
// by an absolute path, which exists while the demo runs and is gone after.
func TestDemoUploadLineWorksFromAnyFolder(t *testing.T) {
	d, err := startDemoGoogle(Config{Demo: true}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("http://127.0.0.1:8080")
	g := d.guide(base, "t", false)
	if !strings.Contains(g.Inspector, " -p node@22 ") {
		t.Errorf("the Inspector line %q does not run it on Node 22, which it needs", g.Inspector)
	}
	if !filepath.IsAbs(g.Upload) {
		t.Errorf("upload path %q is relative: it works only from one folder", g.Upload)
	}
	if b, err := os.ReadFile(g.Upload); err != nil || len(b) == 0 {
		t.Errorf("upload file %q: %v", g.Upload, err)
	}
	var out strings.Builder
	g.write(&out)
	if !strings.Contains(out.String(), " -F file=@"+shellQuote(g.Upload)+" ") {
		t.Errorf("the curl line does not send %s:\n%s", g.Upload, out.String())
	}
	d.close()
	if _, err := os.Stat(g.Upload); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after the demo, %s is still there (%v)", g.Upload, err)
	}
}

// TestDemoGuideInFileMode: with --drive-scope file the guide picks files
// first, where a send by id of a file never picked would be refused.
func TestDemoGuideInFileMode(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:8080")
	var out strings.Builder
	demoGuide{Base: base, Token: "t", FileID: "1pdfpdfpdfpdfpdf", FileName: "Q3 Report.pdf", FileMode: true}.write(&out)
	if !strings.Contains(out.String(), "--tool-name drive_pick") || strings.Contains(out.String(), "--tool-name send_email") {
		t.Errorf("the file-mode guide does not start with drive_pick:\n%s", out.String())
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/a/b.txt":       "/tmp/a/b.txt",
		"/Users/Ann Lee/x":   "'/Users/Ann Lee/x'",
		"/tmp/it's":          `'/tmp/it'\''s'`,
		"/tmp/$HOME`x`":      "'/tmp/$HOME`x`'",
		"C:/Temp/x.txt":      "C:/Temp/x.txt",
		"/tmp/with,comma.md": "'/tmp/with,comma.md'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
