package compose

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// TestKindsAreDocumented: every kind declared in kinds.go is listed in
// docs/operations.md, the list has no kind the code lacks, and no two
// constants share a code.
func TestKindsAreDocumented(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "kinds.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]string{} // code → constant
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s is not a string literal", name.Name)
				}
				code, err := strconv.Unquote(lit.Value)
				if err != nil || code == "" {
					t.Fatalf("%s = %s: want a non-empty string", name.Name, lit.Value)
				}
				if other, dup := declared[code]; dup {
					t.Errorf("%s and %s share the code %q", other, name.Name, code)
				}
				declared[code] = name.Name
			}
		}
	}
	documented := DocumentedKinds(t)
	for code, name := range declared {
		if !documented[code] {
			t.Errorf("%s (%q) is not listed in docs/operations.md", name, code)
		}
	}
	for code := range documented {
		if _, ok := declared[code]; !ok {
			t.Errorf("docs/operations.md lists %q, which compose never logs", code)
		}
	}
}
