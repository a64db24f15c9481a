package tools

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/drivemail/drivemail/internal/doctest"
)

// The parts of the docs made from the tool definitions: the README's
// table of the tools, and docs/reference.md's description of each.
var (
	readmeTable = doctest.Part{
		Path:  "../README.md",
		Start: "<!-- tools table: made from the tool definitions; go test ./tools -run TestReadmeToolTable -update -->",
		End:   "<!-- end of tools table -->",
	}
	referenceTools = doctest.Part{
		Path:  "../docs/reference.md",
		Start: "<!-- tools: made from the tool definitions; go test ./tools -run TestReferenceTools -update -->",
		End:   "<!-- end of tools -->",
	}
)

// TestReferenceTools compares docs/reference.md's description of every
// tool (its description, hints, arguments in every configuration, and
// result) with the one the definitions make. Rewrite it with:
// go test ./tools -run TestReferenceTools -update
func TestReferenceTools(t *testing.T) {
	referenceTools.Check(t, toolsReference(t), *update)
}

// viewOnlyNote says who is listed a tool only a view calls.
const viewOnlyNote = "Listed to a client that renders MCP App views, for the compose view to call (hidden from the model)."

// toolsReference renders every tool: the default definition, with what
// --read-mail, --file-transfer and --drive-scope file change in it.
func toolsReference(t *testing.T) string {
	mail := map[string]mcp.Tool{}
	for _, tool := range []mcp.Tool{sendEmailTool(false, true), createDraftTool(false, true), saveToDriveTool(true)} {
		mail[tool.Name] = tool
	}
	transfer := map[string]mcp.Tool{}
	for _, tool := range []mcp.Tool{sendEmailTool(true, false), createDraftTool(true, false)} {
		transfer[tool.Name] = tool
	}
	fileMode := map[string]mcp.Tool{"drive_search": driveSearchFileTool()}
	var b strings.Builder
	var send, sendResult []argRow // send_email's, which create_draft's repeat
	for _, st := range withFileMode(Tools(Deps{})) {
		tool := st.Tool
		fmt.Fprintf(&b, "### `%s`: %s\n\n", tool.Name, tool.Title)
		if mailOnly[tool.Name] {
			b.WriteString("Listed with `--read-mail`, to a user who allowed reading mail.\n\n")
		}
		if draftsOnly[tool.Name] {
			b.WriteString("Listed with `--drafts`.\n\n")
		}
		if tool.Name == "drive_pick" {
			b.WriteString("Listed with `--drive-scope file`.\n\n")
		}
		if viewOnly[tool.Name] {
			b.WriteString(viewOnlyNote + "\n\n")
		}
		b.WriteString(quote(tool.Description))
		if mt, ok := mail[tool.Name]; ok && mt.Description != tool.Description {
			if extra, ok := strings.CutPrefix(mt.Description, tool.Description); ok {
				b.WriteString("\nWith `--read-mail`, it goes on:\n\n" + quote(strings.TrimSpace(extra)))
			} else {
				b.WriteString("\nWith `--read-mail`, it reads instead:\n\n" + quote(mt.Description))
			}
		}
		if ft, ok := fileMode[tool.Name]; ok {
			b.WriteString("\nWith `--drive-scope file`, it reads instead:\n\n" + quote(ft.Description))
		}
		fmt.Fprintf(&b, "\n%s.\n\n", hintsText(tool.Annotations))

		rows := argRows(t, tool.RawInputSchema)
		rows = mergeRows(rows, argRows(t, mail[tool.Name].RawInputSchema), "--read-mail")
		rows = mergeRows(rows, argRows(t, transfer[tool.Name].RawInputSchema), "--file-transfer")
		if tool.Name == "create_draft" && samePaths(rows, send) {
			b.WriteString("Arguments: those of `send_email`, in every configuration.\n")
		} else {
			b.WriteString(argTable(rows))
		}
		if len(tool.RawOutputSchema) > 0 {
			result := mergeRows(argRows(t, tool.RawOutputSchema), argRows(t, mail[tool.Name].RawOutputSchema), "--read-mail")
			result = mergeRows(result, argRows(t, fileMode[tool.Name].RawOutputSchema), "--drive-scope file")
			b.WriteString("\nResult (`structuredContent`):\n\n")
			if extra, ok := beyond(result, sendResult); ok && tool.Name == "create_draft" {
				fmt.Fprintf(&b, "`send_email`'s fields, and:\n\n%s", fieldTable(extra))
			} else {
				b.WriteString(fieldTable(result))
			}
			if tool.Name == "send_email" {
				sendResult = result
			}
		}
		if tool.Name == "send_email" {
			send = rows
		}
		b.WriteString("\n")
	}
	return b.String()
}

// quote is text as a Markdown block quote.
func quote(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		b.WriteString(strings.TrimRight("> "+line, " ") + "\n")
	}
	return b.String()
}

// hintsText says a tool's behaviour hints in words.
func hintsText(a mcp.ToolAnnotation) string {
	say := func(p *bool, yes, no string) string {
		if p != nil && *p {
			return yes
		}
		return no
	}
	return "Hints: " + strings.Join([]string{
		say(a.ReadOnlyHint, "read-only", "changes things"),
		say(a.DestructiveHint, "destructive", "not destructive"),
		say(a.IdempotentHint, "idempotent", "not idempotent"),
		say(a.OpenWorldHint, "reaches outside drivemail", "stays inside drivemail"),
	}, ", ")
}

// argRow is one argument, or one field of an argument's objects.
type argRow struct {
	path, kind, meaning string
	required            bool
	// own is the meaning the schema gave; a variant's extends meaning.
	own string
	// top is the argument the row is, or is a field of; topRequired
	// whether that argument is required. They order the table.
	top         string
	topRequired bool
}

// argRows lists the properties of an object schema, each followed by the
// fields of the objects it holds; nil for no schema.
func argRows(t *testing.T, raw json.RawMessage) []argRow {
	if len(raw) == 0 {
		return nil
	}
	var s schemaNode
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s.rows("", nil)
}

// schemaNode is the part of a JSON Schema the reference shows.
type schemaNode struct {
	Type        string                `json:"type"`
	Description string                `json:"description"`
	Properties  map[string]schemaNode `json:"properties"`
	Required    []string              `json:"required"`
	Items       *schemaNode           `json:"items"`
	AnyOf       []schemaNode          `json:"anyOf"`
	Enum        []string              `json:"enum"`
	Format      string                `json:"format"`
	Pattern     string                `json:"pattern"`
	MaxItems    *int                  `json:"maxItems"`
	Minimum     *int                  `json:"minimum"`
	Maximum     *int                  `json:"maximum"`
}

// rows lists s's properties below prefix; top is the argument they
// belong to (nil: they are the arguments).
func (s schemaNode) rows(prefix string, top *argRow) []argRow {
	var out []argRow
	for n, p := range s.Properties {
		r := argRow{path: prefix + n, kind: p.kind(), meaning: p.Description, own: p.Description, required: slices.Contains(s.Required, n)}
		if top == nil {
			r.top, r.topRequired = n, r.required
		} else {
			r.top, r.topRequired = top.top, top.topRequired
		}
		out = append(out, r)
		for _, obj := range p.objects() {
			out = append(out, obj.rows(prefix+n+p.elems(), &r)...)
		}
	}
	return out
}

// objects are the object schemas a property holds: itself, its items,
// or their anyOf branches.
func (s schemaNode) objects() []schemaNode {
	var out []schemaNode
	for _, n := range append([]schemaNode{s}, s.AnyOf...) {
		if n.Items != nil {
			out = append(out, n.Items.objects()...)
		} else if n.Type == "object" && len(n.Properties) > 0 {
			out = append(out, n)
		}
	}
	return out
}

// elems is how a field of the property's objects is named below it.
func (s schemaNode) elems() string {
	if s.Items != nil {
		return "[]."
	}
	return "."
}

// kind says a schema's type and constraints in words.
func (s schemaNode) kind() string {
	var k string
	switch {
	case len(s.AnyOf) > 0:
		var alts []string
		for _, a := range s.AnyOf {
			alts = append(alts, a.kind())
		}
		k = strings.Join(alts, " or ")
	case s.Type == "array" && s.Items != nil:
		k = "list of " + s.Items.kind()
		if s.MaxItems != nil {
			k += fmt.Sprintf(", at most %d", *s.MaxItems)
		}
	default:
		k = s.Type
	}
	switch {
	case s.Minimum != nil && s.Maximum != nil:
		k += fmt.Sprintf(", %d to %d", *s.Minimum, *s.Maximum)
	case s.Minimum != nil:
		k += fmt.Sprintf(", at least %d", *s.Minimum)
	}
	if len(s.Enum) > 0 {
		k += ": " + strings.Join(s.Enum, " or ")
	}
	if s.Format != "" {
		k += " (" + s.Format + ")"
	}
	if s.Pattern != "" {
		k += ", matching `" + s.Pattern + "`"
	}
	return k
}

// mergeRows adds the rows of a variant's schema (given with flag) that
// rows lack, and says where the variant gives a row another meaning or
// makes it optional; the result is in table order: the required
// arguments first, each argument followed by its fields, required first.
func mergeRows(rows, variant []argRow, flag string) []argRow {
	at := map[string]int{}
	for i, r := range rows {
		at[r.path] = i
	}
	out := slices.Clone(rows)
	for _, v := range variant {
		i, ok := at[v.path]
		switch {
		case !ok:
			v.meaning = strings.TrimSpace("With `" + flag + "`. " + v.meaning)
			out = append(out, v)
		case v.meaning != "" && v.meaning != rows[i].own:
			if more, ok := strings.CutPrefix(v.meaning, rows[i].own); ok && rows[i].own != "" {
				out[i].meaning += " With `" + flag + "`, also:" + more
			} else {
				out[i].meaning += " With `" + flag + "`: " + v.meaning
			}
		}
		if ok && rows[i].required && !v.required {
			out[i].kind += ", required (not with `" + flag + "`)"
			out[i].required = false
		}
	}
	slices.SortStableFunc(out, func(a, b argRow) int {
		return cmpRows(a, b)
	})
	return out
}

// cmpRows orders two rows as the tables list them.
func cmpRows(a, b argRow) int {
	rank := func(r argRow) int {
		if r.topRequired {
			return 0
		}
		return 1
	}
	if c := rank(a) - rank(b); c != 0 {
		return c
	}
	if c := strings.Compare(a.top, b.top); c != 0 {
		return c
	}
	aField, bField := a.path != a.top, b.path != b.top
	if aField != bField {
		if aField {
			return 1
		}
		return -1
	}
	if a.required != b.required {
		if a.required {
			return -1
		}
		return 1
	}
	return strings.Compare(a.path, b.path)
}

// samePaths reports whether two tables list the same rows.
func samePaths(a, b []argRow) bool {
	return len(a) == len(b) && slices.EqualFunc(a, b, func(x, y argRow) bool { return x.path == y.path && x.kind == y.kind })
}

// beyond returns the rows of a not in base, when a holds all of base.
func beyond(a, base []argRow) ([]argRow, bool) {
	if len(base) == 0 {
		return nil, false
	}
	var extra []argRow
	for _, r := range a {
		if !slices.ContainsFunc(base, func(b argRow) bool { return b.path == r.path && b.kind == r.kind }) {
			extra = append(extra, r)
		}
	}
	return extra, len(a)-len(extra) == len(base)
}

func argTable(rows []argRow) string {
	var b strings.Builder
	b.WriteString("| argument | type | meaning |\n|---|---|---|\n")
	for _, r := range rows {
		kind := r.kind
		if r.required {
			kind += ", required"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.path, cell(kind), cell(r.meaning))
	}
	return b.String()
}

// fieldTable lists a result's fields.
func fieldTable(rows []argRow) string {
	var b strings.Builder
	b.WriteString("| field | type |\n|---|---|\n")
	for _, r := range rows {
		kind := r.kind
		if !r.required {
			kind += ", when there is one"
		}
		if r.meaning != "" {
			kind += ". " + r.meaning
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", r.path, cell(kind))
	}
	return b.String()
}

// cell makes text fit one Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// TestReadmeToolTable compares the README's tool table with the one the
// definitions make. Rewrite it with:
// go test ./tools -run TestReadmeToolTable -update
func TestReadmeToolTable(t *testing.T) {
	readmeTable.Check(t, toolTable(t), *update)
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
	for _, st := range withFileMode(Tools(Deps{})) {
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
		if draftsOnly[st.Tool.Name] {
			what += " Listed with `--drafts`."
		}
		if st.Tool.Name == "drive_pick" {
			what += " Listed with `--drive-scope file`."
		}
		if viewOnly[st.Tool.Name] {
			what += " " + viewOnlyNote
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

// withFileMode is the default tools with drive_pick, which is listed in
// file mode only, after drive_get_file.
func withFileMode(list []server.ServerTool) []server.ServerTool {
	return slices.Insert(list, 2, server.ServerTool{Tool: drivePickTool()})
}
