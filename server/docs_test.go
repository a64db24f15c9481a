package server

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsCiteTestsThatExist: every test the docs name as holding a
// behaviour (security.md's threats, emulator.md's Google behaviours …)
// is a test function of the module; "TestX*" names a family. A test
// renamed or moved without its docs leaves a claim nothing holds.
func TestDocsCiteTestsThatExist(t *testing.T) {
	root := ".."
	funcs := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]+)\(`)
	var docs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") && path != root {
			return filepath.SkipDir
		}
		switch {
		case strings.HasSuffix(path, "_test.go"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
				funcs[m[1]] = true
			}
		case strings.HasSuffix(path, ".md") && (filepath.Dir(path) == filepath.Join(root, "docs") || path == filepath.Join(root, "README.md")):
			docs = append(docs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(funcs) < 100 || len(docs) < 5 {
		t.Fatalf("read %d test functions and %d docs; is the walk reading the module?", len(funcs), len(docs))
	}
	cited := regexp.MustCompile(`\b(Test[A-Z][A-Za-z0-9_]*)(\*?)`)
	for _, path := range docs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range cited.FindAllStringSubmatch(string(b), -1) {
			if !exists(funcs, m[1], m[2] == "*") {
				t.Errorf("%s cites %s%s, which no test declares", filepath.Base(path), m[1], m[2])
			}
		}
	}
}

func exists(funcs map[string]bool, name string, family bool) bool {
	if !family {
		return funcs[name]
	}
	for f := range funcs {
		if strings.HasPrefix(f, name) {
			return true
		}
	}
	return false
}

// TestRepositoryStandsAlone: no doc, comment, script or test name sends a
// reader to something outside the repository (a contract or design file
// kept elsewhere, a research folder or its notes, an issue tracker's
// numbers): what the public surface is lives in docs/reference.md, what
// each client does in docs/clients.md, and why a choice was made lives
// beside it.
func TestRepositoryStandsAlone(t *testing.T) {
	// (Spelt so that this line does not match itself.)
	outside := regexp.MustCompile(`CONTRACT\.md|DESIGN\.md|shared/researc[h]|\.\./shared/|(?i:\bissues? \d+\b|\bissue #\d+|_issu[e]\d+|researc[h] notes)`)
	root := ".."
	read := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") && name != ".ci" || name == "node_modules" || name == "testdata" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(name)
		if ext != ".go" && ext != ".md" && ext != ".sh" && name != "run" && name != "Makefile" && name != "Dockerfile" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		read++
		for i, line := range strings.Split(string(b), "\n") {
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q, which is not in the repository: say it here, or point at the doc that does", path, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if read < 100 {
		t.Fatalf("read %d files; is the walk reading the module?", read)
	}
}
