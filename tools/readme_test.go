package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The README's tool table is made from the tool definitions, between
// these two lines, so the two cannot drift.
const (
	readmeTableStart = "<!-- tools table: made from the tool definitions; go test ./tools -run TestReadmeToolTable -update -->"
	readmeTableEnd   = "<!-- end of tools table -->"
)

// TestReadmeToolTable compares the README's tool table with the one the
// definitions make. Rewrite it with:
// go test ./tools -run TestReadmeToolTable -update
func TestReadmeToolTable(t *testing.T) {
	const path = "../README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	head, rest, ok := strings.Cut(readme, readmeTableStart+"\n")
	if !ok {
		t.Fatalf("README.md lacks the line %q", readmeTableStart)
	}
	got, tail, ok := strings.Cut(rest, readmeTableEnd)
	if !ok {
		t.Fatalf("README.md lacks the line %q", readmeTableEnd)
	}
	want := toolTable(t)
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(head+readmeTableStart+"\n"+want+readmeTableEnd+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's tool table differs from the definitions; run: go test ./tools -run TestReadmeToolTable -update\ngot:\n%s\nwant:\n%s", got, want)
}

// toolTable is the Markdown table of every tool: its name, the first
// paragraph of its description, and its arguments (required first, then
// the optional ones, marked ?), and those it gains where mail is read.
func toolTable(t *testing.T) string {
	var b strings.Builder
	b.WriteString("| tool | what it does | arguments |\n|---|---|---|\n")
	withMail := map[string]mcp.Tool{}
	for _, tool := range []mcp.Tool{sendEmailTool(false, true), createDraftTool(false, true), saveToDriveTool(true)} {
		withMail[tool.Name] = tool
	}
	// drive_pick is listed in file mode only; its row follows drive_get_file.
	list := slices.Insert(Tools(Deps{}), 2, server.ServerTool{Tool: drivePickTool()})
	for _, st := range list {
		var in struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(st.Tool.RawInputSchema, &in); err != nil {
			t.Fatal(err)
		}
		args := make([]string, 0, len(in.Properties))
		for _, r := range in.Required {
			args = append(args, "`"+r+"`")
		}
		var optional []string
		for k := range in.Properties {
			if !slices.Contains(in.Required, k) {
				optional = append(optional, "`"+k+"`?")
			}
		}
		slices.Sort(optional)
		args = append(args, optional...)
		what, _, _ := strings.Cut(st.Tool.Description, "\n\n")
		if mailOnly[st.Tool.Name] {
			what += " Listed with `--read-mail`, to a user who allowed reading mail."
		}
		if st.Tool.Name == "drive_pick" {
			what += " Listed with `--drive-scope file`."
		}
		if mt, ok := withMail[st.Tool.Name]; ok {
			var mail struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(mt.RawInputSchema, &mail); err != nil {
				t.Fatal(err)
			}
			var extra []string
			for k := range mail.Properties {
				if _, ok := in.Properties[k]; !ok {
					extra = append(extra, "`"+k+"`?")
				}
			}
			slices.Sort(extra)
			args = append(args, "and with `--read-mail` "+strings.Join(extra, ", "))
		}
		if len(args) == 0 {
			args = []string{"none"}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", st.Tool.Name, strings.ReplaceAll(what, "|", `\|`), strings.Join(args, ", "))
	}
	return b.String()
}
