package tools

import (
	"embed"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// The JSON Schemas are written by hand, one file per tool and direction,
// so that what a model reads is exactly what we wrote.
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

// hints are a tool's behaviour hints; every one is set deliberately.
type hints struct {
	readOnly, destructive, idempotent, openWorld bool
}

// newTool builds a tool from its name, title, description and the names of
// its input and output schemas.
func newTool(name, title, description, input, output string, h hints) mcp.Tool {
	t := mcp.NewToolWithRawSchema(name, description, schema(input))
	t.Title = title
	t.RawOutputSchema = schema(output)
	t.Annotations = mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    mcp.ToBoolPtr(h.readOnly),
		DestructiveHint: mcp.ToBoolPtr(h.destructive),
		IdempotentHint:  mcp.ToBoolPtr(h.idempotent),
		OpenWorldHint:   mcp.ToBoolPtr(h.openWorld),
	}
	return t
}
