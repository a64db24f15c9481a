package tools

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/oauth/googleauth"
)

// TestRefusalKindsAreDocumented: every kind a layer declares (the tools',
// compose's, clientfile's, upload's, googleauth's reconnect) is listed in docs/operations.md, the
// list has no kind that no layer declares, and no two constants of one
// layer share a code.
func TestRefusalKindsAreDocumented(t *testing.T) {
	declared := map[string]bool{}
	for _, path := range []string{"kinds.go", "../compose/kinds.go", "../clientfile/kinds.go", "../upload/kinds.go"} {
		for _, code := range kindsIn(t, path) {
			declared[code] = true
		}
	}
	reconnect, ok := refusal.As(googleauth.ErrReconnect)
	if !ok {
		t.Fatal("googleauth.ErrReconnect is not a refusal")
	}
	declared[string(reconnect.Kind)] = true

	b, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	row := regexp.MustCompile("(?m)^\\| (`[a-z0-9_]+`(?:, `[a-z0-9_]+`)*) \\|") // a row's first cell: one kind or several
	code := regexp.MustCompile("`([a-z0-9_]+)`")
	for _, heading := range []string{"### Why sends are refused", "### Sends the user did not confirm", "### Why other tool calls are refused", "### Why uploads and saves are refused"} {
		_, section, ok := strings.Cut(string(b), "\n"+heading+"\n")
		if !ok {
			t.Fatalf("docs/operations.md has no %q section", heading)
		}
		section, _, _ = strings.Cut(section, "\n#")
		for _, m := range row.FindAllStringSubmatch(section, -1) {
			for _, c := range code.FindAllStringSubmatch(m[1], -1) {
				documented[c[1]] = true
			}
		}
	}
	for code := range declared {
		if !documented[code] {
			t.Errorf("kind %q is not listed in docs/operations.md", code)
		}
	}
	for code := range documented {
		if !declared[code] {
			t.Errorf("docs/operations.md lists %q, which no layer declares", code)
		}
	}
}

// kindsIn reads the string constants of a kinds.go file, each code once.
func kindsIn(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	seen := map[string]string{} // code → constant
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s: %s is not a string literal", path, vs.Names[i].Name)
				}
				code, err := strconv.Unquote(lit.Value)
				if err != nil || code == "" {
					t.Fatalf("%s: %s = %s: want a non-empty string", path, vs.Names[i].Name, lit.Value)
				}
				if other, dup := seen[code]; dup {
					t.Errorf("%s: %s and %s share the code %q", path, other, vs.Names[i].Name, code)
				}
				seen[code] = vs.Names[i].Name
				codes = append(codes, code)
			}
		}
	}
	return codes
}
