package tools

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestToolHintsAreDocumented holds every tool definition's title and
// hints to the table in docs/tool-hints.md, which says why each is what
// it is: a changed hint fails until the page is edited with its reason,
// and the page cannot list a tool or a hint the code does not have.
func TestToolHintsAreDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/tool-hints.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, start := strings.Cut(string(b), "<!-- hints table:")
	table, _, end := strings.Cut(table, "<!-- end of hints table -->")
	if !start || !end {
		t.Fatal("docs/tool-hints.md lacks its hints table markers")
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)`( with `--[a-z-]+`)? \\| ([^|]+) \\| (true|false) \\| (true|false) \\| (true|false) \\| (true|false) \\|$")
	documented := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		documented[m[1]+m[2]] = strings.Join(m[3:], " | ")
	}
	defined := map[string]string{}
	for _, st := range Tools(Deps{}) {
		defined[st.Tool.Name] = hintsRow(st.Tool)
	}
	// The definitions Filter swaps in: where one differs from the default,
	// it has a row of its own.
	for _, v := range []struct {
		tool mcp.Tool
		flag string
	}{
		{sendEmailTool(false, true), "--read-mail"}, {createDraftTool(false, true), "--read-mail"}, {saveToDriveTool(true), "--read-mail"},
		{sendEmailTool(true, false), "--file-transfer"}, {createDraftTool(true, false), "--file-transfer"},
	} {
		if r := hintsRow(v.tool); r != defined[v.tool.Name] {
			defined[v.tool.Name+" with `"+v.flag+"`"] = r
		}
	}
	for name, want := range defined {
		if got, ok := documented[name]; !ok {
			t.Errorf("docs/tool-hints.md has no row for %s (%s): add one, and say why", name, want)
		} else if got != want {
			t.Errorf("%s: docs/tool-hints.md says %s, the definition %s: edit the table and the reasons below it", name, got, want)
		}
	}
	for name := range documented {
		if _, ok := defined[name]; !ok {
			t.Errorf("docs/tool-hints.md has a row for %s, which no definition has", name)
		}
	}
}

// hintsRow is a tool's title and hints as the table writes them.
func hintsRow(tool mcp.Tool) string {
	a := tool.Annotations
	say := func(p *bool) string {
		if p == nil {
			return "unset"
		}
		return fmt.Sprint(*p)
	}
	return strings.Join([]string{a.Title, say(a.ReadOnlyHint), say(a.DestructiveHint), say(a.IdempotentHint), say(a.OpenWorldHint)}, " | ")
}
