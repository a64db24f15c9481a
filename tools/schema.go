package tools

import (
	"embed"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// The JSON Schemas are written by hand, one file per tool and direction,
// so that what a model reads is exactly what we wrote; create_draft's are
// derived from send_email's. Tests hold them to the parsers and to
// compose's limits, and snapshot what tools/list returns.
//
//go:embed schema/*.json
var schemas embed.FS

// schema returns an embedded schema; a missing or malformed one is a
// programming error caught by the tests, so it panics.
func schema(name string) json.RawMessage {
	b, err := schemas.ReadFile("schema/" + name + ".json")
	if err != nil {
		panic(fmt.Sprintf("tools: schema %s: %v", name, err))
	}
	if !json.Valid(b) {
		panic(fmt.Sprintf("tools: schema %s is not valid JSON", name))
	}
	return json.RawMessage(b)
}

// draftInput is create_draft's input schema: send_email's, without the
// descriptions of its properties. Both tools are in every tools/list, so
// the model has read them once already, and create_draft's description
// sends it to send_email's.
func draftInput() json.RawMessage { return draftInputOf(schema("send_email.input")) }

// draftInputOf is create_draft's input schema for a send_email input
// schema (the default one, or the one with the mail arguments).
func draftInputOf(send json.RawMessage) json.RawMessage {
	var s map[string]any
	mustUnmarshal(send, &s)
	dropDescriptions(s["properties"])
	return mustMarshal(s)
}

// dropDescriptions removes every "description" below the properties of
// a schema.
func dropDescriptions(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if m, ok := sub.(map[string]any); ok {
				delete(m, "description")
			}
			dropDescriptions(v[k])
		}
	case []any:
		for _, sub := range v {
			if m, ok := sub.(map[string]any); ok {
				delete(m, "description")
			}
			dropDescriptions(sub)
		}
	}
}

// draftOutput is create_draft's output schema: send_email's, without its
// descriptions (send_email's are in the same list), the draft's id and
// the link that opens it in Gmail.
func draftOutput() json.RawMessage { return draftOutputOf(schema("send_email.output")) }

// draftOutputOf is create_draft's output schema for a send_email output
// schema.
func draftOutputOf(send json.RawMessage) json.RawMessage {
	var s struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	mustUnmarshal(send, &s)
	for k, p := range s.Properties {
		s.Properties[k] = withoutDescription(p)
	}
	s.Properties["draft_id"] = json.RawMessage(`{"type":"string"}`)
	s.Properties["link"] = json.RawMessage(`{"type":"string"}`)
	s.Required = append(s.Required, "draft_id")
	return mustMarshal(s)
}

func mustUnmarshal(b []byte, v any) {
	if err := json.Unmarshal(b, v); err != nil {
		panic(fmt.Sprintf("tools: schema: %v", err))
	}
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("tools: schema: %v", err))
	}
	return b
}

// hints are a tool's behaviour hints; every one is set deliberately, and
// docs/tool-hints.md says why (TestToolHintsAreDocumented holds the two
// to one table).
type hints struct {
	readOnly, destructive, idempotent, openWorld bool
}

// newTool builds a tool from its name, title, description and schemas.
func newTool(name, title, description string, input, output json.RawMessage, h hints) mcp.Tool {
	t := mcp.NewToolWithRawSchema(name, description, input)
	t.Title = title
	t.RawOutputSchema = output
	t.Annotations = mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    mcp.ToBoolPtr(h.readOnly),
		DestructiveHint: mcp.ToBoolPtr(h.destructive),
		IdempotentHint:  mcp.ToBoolPtr(h.idempotent),
		OpenWorldHint:   mcp.ToBoolPtr(h.openWorld),
	}
	return t
}

// withoutDescription drops a property schema's own description.
func withoutDescription(p json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(p, &m) != nil {
		return p
	}
	if _, ok := m["description"]; !ok {
		return p
	}
	delete(m, "description")
	return mustMarshal(m)
}
