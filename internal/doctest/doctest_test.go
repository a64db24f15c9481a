package doctest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPart: a current part passes, a stale one fails and -update
// rewrites only it, and a file without the markers is an error.
func TestPart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	doc := "# Title\n<!-- start -->\nold\n<!-- end -->\ntail\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Part{Path: path, Start: "<!-- start -->", End: "<!-- end -->"}

	if got, replaced, err := p.replace(doc, "new\n"); err != nil || got != "old\n" || replaced != "# Title\n<!-- start -->\nnew\n<!-- end -->\ntail\n" {
		t.Errorf("replace: %q, %q, %v", got, replaced, err)
	}
	rec := &recorder{TB: t}
	p.Check(rec, "old\n", false)
	if rec.failed {
		t.Errorf("a current part failed: %s", rec.msg)
	}
	rec = &recorder{TB: t}
	p.Check(rec, "new\n", false)
	if !rec.failed || !strings.Contains(rec.msg, "stale") {
		t.Errorf("a stale part passed (%q)", rec.msg)
	}
	p.Check(t, "new\n", true)
	if b, _ := os.ReadFile(path); string(b) != "# Title\n<!-- start -->\nnew\n<!-- end -->\ntail\n" {
		t.Errorf("after -update: %q", b)
	}
	if _, _, err := (Part{Path: path, Start: "<!-- other -->", End: "<!-- end -->"}).replace(doc, ""); err == nil {
		t.Error("a missing start marker was not an error")
	}
	if _, _, err := (Part{Path: path, Start: "<!-- start -->", End: "<!-- gone -->"}).replace(doc, ""); err == nil {
		t.Error("a missing end marker was not an error")
	}
}

// recorder keeps a Check's failure instead of failing the test.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.msg = format
}
