package server

import (
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// patternRecorder keeps the patterns addRoutes registers.
type patternRecorder []string

func (p *patternRecorder) Handle(pattern string, _ http.Handler) { *p = append(*p, pattern) }

// TestReferenceRoutes holds docs/reference.md's table of HTTP routes to
// the routes addRoutes registers: each registered pattern is a row, and
// each row is registered (the authorization server's own paths sit under
// its /oauth/ route).
func TestReferenceRoutes(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:8080")
	var got patternRecorder
	addRoutes(&got, Deps{BaseURL: base, Auth: fakeAuth{base: base.String()}, Store: fakeStore{}}, http.NotFoundHandler())

	b, err := os.ReadFile("../docs/reference.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## HTTP routes\n")
	if !ok {
		t.Fatal(`docs/reference.md has no "## HTTP routes" section`)
	}
	_, table, ok := strings.Cut(section, "| route |")
	if !ok {
		t.Fatal(`docs/reference.md's HTTP routes have no "| route |" table`)
	}
	table, _, _ = strings.Cut(table, "\n\n")
	row := regexp.MustCompile("(?m)^\\| `([^`]+)`")
	var documented []string
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		documented = append(documented, m[1])
	}
	for _, p := range got {
		if !slices.Contains(documented, p) {
			t.Errorf("route %q is served but docs/reference.md's HTTP routes do not list it", p)
		}
	}
	for _, d := range documented {
		if !slices.Contains(got, d) && !(slices.Contains(got, "/oauth/") && strings.Contains(d, "/oauth/")) {
			t.Errorf("docs/reference.md lists route %q, which is not served", d)
		}
	}
	if len(got) < 10 {
		t.Fatalf("addRoutes registered %d patterns: %v", len(got), got)
	}
}
