package tools

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// portableKeywords are the schema keywords both dialects that a client
// may map a tool schema onto accept, so a tool is neither rejected nor
// silently loosened by either:
//
//   - Gemini's function declarations: the Schema of FunctionDeclaration's
//     parameters, "a subset of the OpenAPI 3.0 Schema Object", whose fields
//     are listed in Google's Vertex AI discovery document
//     (google.golang.org/api aiplatform/v1, GoogleCloudAiplatformV1Schema):
//     type, format, title, description, nullable, default, items, minItems,
//     maxItems, enum, properties, propertyOrdering, required, minProperties,
//     maxProperties, minLength, maxLength, pattern, example, anyOf,
//     additionalProperties, defs, ref, minimum, maximum. Its type is one
//     name, never a list.
//   - OpenAI's strict mode (platform.openai.com, Structured Outputs,
//     "Supported schemas"): the types string, number, boolean, integer,
//     object, array, enum and anyOf, with properties, required,
//     additionalProperties, items, description and title, $defs and $ref,
//     and the constraints pattern and format (strings), multipleOf,
//     minimum, maximum and their exclusive forms (numbers), minItems and
//     maxItems (arrays). It names no maxLength and no default; Azure's
//     strict mode refuses default.
//
// What both accept is below. The definitions and references of both are
// spelt differently (defs/ref, $defs/$ref), so neither is portable.
var portableKeywords = []string{
	"type", "description", "title", "enum", "format", "pattern", "minimum", "maximum",
	"properties", "required", "additionalProperties", "items", "minItems", "maxItems", "anyOf",
}

// portableExtensions are the two x- keys our schemas carry: marks that
// chat-client middlewares (x-file) and the MCP file-transfer draft
// (x-mcp-file) look for by name. OpenAPI 3.0 lets a Schema Object carry
// x- extensions; a client translating to a dialect without them drops
// them, as it drops every mark it does not know. Their values are not
// schemas, so the check does not look inside.
var portableExtensions = []string{"x-file", "x-mcp-file"}

// portableTypes are the type names both dialects share.
var portableTypes = []string{"string", "number", "integer", "boolean", "object", "array"}

// portableFormats are the string formats both accept: Gemini's
// Developer API takes only enum and date-time on a string, OpenAI's
// strict mode date-time, time, date, duration, email, hostname, ipv4,
// ipv6 and uuid.
var portableFormats = []string{"date-time"}

// portabilityProblems lists what in schema (at path) a client that maps
// tool schemas onto Gemini's or OpenAI's strict dialect could reject or
// drop: a type given as a list, a keyword outside portableKeywords, a
// schema that is a bare boolean or declares neither a type nor anyOf
// (it constrains nothing), a type or format neither shares.
func portabilityProblems(path string, schema any) []string {
	node, ok := schema.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: %v where a schema object belongs", path, schema)}
	}
	var out []string
	add := func(format string, args ...any) { out = append(out, path+": "+fmt.Sprintf(format, args...)) }
	keys := make([]string, 0, len(node))
	for k := range node {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(portableKeywords, k) && !slices.Contains(portableExtensions, k) {
			add("keyword %q is not in both dialects", k)
		}
	}
	switch t := node["type"].(type) {
	case string:
		if !slices.Contains(portableTypes, t) {
			add("type %q is not in both dialects", t)
		}
	case nil:
		if _, ok := node["anyOf"]; !ok {
			add("declares neither type nor anyOf, so it accepts anything")
		}
	default:
		add("type is %v, not one name", t)
	}
	if f, ok := node["format"]; ok && !slices.Contains(portableFormats, fmt.Sprint(f)) {
		add("format %q is not in both dialects", f)
	}
	if props, ok := node["properties"].(map[string]any); ok {
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			out = append(out, portabilityProblems(path+".properties."+n, props[n])...)
		}
	}
	if items, ok := node["items"]; ok {
		out = append(out, portabilityProblems(path+".items", items)...)
	}
	if anyOf, ok := node["anyOf"].([]any); ok {
		for i, sub := range anyOf {
			out = append(out, portabilityProblems(fmt.Sprintf("%s.anyOf[%d]", path, i), sub)...)
		}
	}
	if ap, ok := node["additionalProperties"]; ok {
		if _, isBool := ap.(bool); !isBool {
			out = append(out, portabilityProblems(path+".additionalProperties", ap)...)
		}
	}
	return out
}

// TestSchemasArePortable holds every tool's input and output schema, as
// tools/list returns it in each configuration that changes it, to what
// both Gemini's function declarations and OpenAI's strict mode accept:
// the MCP Inspector's portability warnings (a type list above all) are
// among the problems it finds.
func TestSchemasArePortable(t *testing.T) {
	for _, tt := range []struct {
		name                       string
		readMail, drafts, transfer bool
	}{
		{name: "default"},
		{name: "--drafts", drafts: true},
		{name: "--read-mail", readMail: true},
		{name: "--file-transfer", transfer: true},
		{name: "--read-mail --drafts --file-transfer", readMail: true, drafts: true, transfer: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(d *Deps) {
				d.ReadMailEnabled, d.DraftsEnabled, d.FileTransfer = tt.readMail, tt.drafts, tt.transfer
				d.MailReader, d.Saver = &fakeMailReader{}, &fakeSaver{}
			})
			if tt.readMail {
				h.user.GoogleScopes = append(h.user.GoogleScopes, scopeReadonly)
			}
			var list struct {
				Tools []struct {
					Name         string `json:"name"`
					InputSchema  any    `json:"inputSchema"`
					OutputSchema any    `json:"outputSchema"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(h.rpc("tools/list", map[string]any{}), &list); err != nil {
				t.Fatal(err)
			}
			if len(list.Tools) < 6 {
				t.Fatalf("tools/list has %d tools", len(list.Tools))
			}
			for _, tool := range list.Tools {
				problems := portabilityProblems(tool.Name+".inputSchema", tool.InputSchema)
				if tool.OutputSchema != nil {
					problems = append(problems, portabilityProblems(tool.Name+".outputSchema", tool.OutputSchema)...)
				}
				if len(problems) > 0 {
					t.Errorf("%s's schemas are not portable:\n%s", tool.Name, strings.Join(problems, "\n"))
				}
			}
		})
	}
}

// TestPortabilityCheckFindsEachProblem: each kind of schema the check
// must refuse is refused, at its path, and a portable one passes.
func TestPortabilityCheckFindsEachProblem(t *testing.T) {
	for _, tt := range []struct {
		schema string
		want   string // "" for none
	}{
		{`{"type":"object","properties":{"to":{"type":"array","items":{"type":"string"},"maxItems":100,"x-file":true}},"required":["to"],"additionalProperties":false}`, ""},
		{`{"type":"object","properties":{"to":{"type":["array","string"],"items":{"type":"string"}}}}`, `s.properties.to: type is [array string], not one name`},
		{`{"type":"object","properties":{"q":{"type":"string","maxLength":10}}}`, `s.properties.q: keyword "maxLength" is not in both dialects`},
		{`{"type":"object","properties":{"n":{"type":"integer","default":3}}}`, `s.properties.n: keyword "default" is not in both dialects`},
		{`{"type":"object","properties":{"u":{"type":"string","format":"uri"}}}`, `s.properties.u: format "uri" is not in both dialects`},
		{`{"type":"object","properties":{"x":{"description":"anything"}}}`, `s.properties.x: declares neither type nor anyOf`},
		{`{"type":"object","properties":{"x":true}}`, `s.properties.x: true where a schema object belongs`},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/f"}]}}}}`, `s.properties.a.items.anyOf[1]: keyword "$ref" is not in both dialects`},
		{`{"type":"object","properties":{"v":{"type":"null"}}}`, `s.properties.v: type "null" is not in both dialects`},
		{`{"type":"object","additionalProperties":{"type":["string","null"]}}`, `s.additionalProperties: type is [string null], not one name`},
	} {
		var s any
		if err := json.Unmarshal([]byte(tt.schema), &s); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(portabilityProblems("s", s), "\n")
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s:\ngot  %q\nwant %q", tt.schema, got, tt.want)
		}
	}
}
