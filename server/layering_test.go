package server

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestImportsFlowDown: imports go cmd → server → tools → the rest, so no
// package below the server imports server or tools (their tests may).
func TestImportsFlowDown(t *testing.T) {
	const module = "github.com/drivemail/drivemail"
	above := map[string][]string{ // package → who may import it
		module + "/server": {module + "/cmd/drivemail"},
		module + "/tools":  {module + "/cmd/drivemail", module + "/server"},
	}
	root := filepath.Join("..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here
		}
		rel, _ := filepath.Rel(root, path)
		importPath := module
		if rel != "." {
			importPath += "/" + filepath.ToSlash(rel)
		}
		checked++
		for _, imp := range pkg.Imports {
			if allowed, ok := above[imp]; ok && !slices.Contains(allowed, importPath) {
				t.Errorf("%s imports %s: only %v may; move what it needs below the tools", importPath, imp, allowed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("checked only %d packages; is the walk reading the module?", checked)
	}
}
