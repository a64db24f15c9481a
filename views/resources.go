package views

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// Resources are the views as MCP resources, for resources/list and
// resources/read. Each carries its metadata on both the list entry and
// the content (a host may read either; the content's wins): the origins
// its host must let it reach (none, for the compose view), a border, and
// ChatGPT's names for the same.
func (s *Set) Resources() []mcpserver.ServerResource {
	out := make([]mcpserver.ServerResource, 0, len(s.views))
	for _, v := range s.views {
		meta := v.meta()
		res := mcp.Resource{
			URI: v.URI, Name: v.Name, Title: v.Title, Description: v.Description, MIMEType: MIMEType,
			Meta: mcp.NewMetaFromMap(meta),
		}
		content := mcp.TextResourceContents{URI: v.URI, MIMEType: MIMEType, Text: v.HTML, Meta: v.meta()}
		out = append(out, mcpserver.ServerResource{
			Resource: res,
			Handler: func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return []mcp.ResourceContents{content}, nil
			},
		})
	}
	return out
}

// meta is a view resource's _meta: a fresh map each time, since the
// library's Meta takes ownership of the one it is given.
func (v View) meta() map[string]any {
	return map[string]any{
		"ui": map[string]any{"csp": v.CSP, "prefersBorder": true},
		// ChatGPT's spelling (Apps SDK), which it still reads.
		"openai/widgetCSP": map[string]any{
			"connect_domains": v.CSP.ConnectDomains, "resource_domains": v.CSP.ResourceDomains, "frame_domains": v.CSP.FrameDomains,
		},
		"openai/widgetPrefersBorder": true,
	}
}

// ToolMeta is the _meta of a tool whose results the view at uri renders:
// the spec's key, and ChatGPT's alias. Its visibility is the default,
// the model's and the view's.
func ToolMeta(uri string) map[string]any {
	return map[string]any{
		"ui":                    map[string]any{"resourceUri": uri},
		"openai/outputTemplate": uri,
	}
}

// AppOnlyMeta is the _meta of a tool that only a view may call: hidden
// from the model by a host that renders views, in the spec's words and
// ChatGPT's.
func AppOnlyMeta() map[string]any {
	return map[string]any{
		"ui":                      map[string]any{"visibility": []string{"app"}},
		"openai/widgetAccessible": true,
		"openai/visibility":       "private",
	}
}

// Declares reports whether a client's capability for the extension (the
// value of its capabilities.extensions["io.modelcontextprotocol/ui"], as
// decoded JSON) says it renders views of this type.
func Declares(ext any) bool {
	m, ok := ext.(map[string]any)
	if !ok {
		return false
	}
	types, _ := m["mimeTypes"].([]any)
	for _, t := range types {
		if s, ok := t.(string); ok && strings.EqualFold(strings.ReplaceAll(s, " ", ""), MIMEType) {
			return true
		}
	}
	return false
}

// DeclaresJSON is Declares for a client's capabilities.extensions object
// as JSON.
func DeclaresJSON(extensions json.RawMessage) bool {
	var m map[string]any
	if json.Unmarshal(extensions, &m) != nil {
		return false
	}
	return Declares(m[Extension])
}

type rendersKey struct{}

// WithRenders records in ctx whether the client of a 2025 request renders
// views, as its session id remembers from its initialize.
func WithRenders(ctx context.Context, renders bool) context.Context {
	return context.WithValue(ctx, rendersKey{}, renders)
}

// Renders reports whether the client of the request ctx serves renders
// views: a 2026-07-28 client says so on the request itself (servers may
// not infer it from earlier ones); an older one at initialize, which the
// transport carries here (WithRenders).
func Renders(ctx context.Context) bool {
	if info := mcpserver.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.ClientCapabilities != nil && Declares(info.ClientCapabilities.Extensions[Extension])
	}
	on, _ := ctx.Value(rendersKey{}).(bool)
	return on
}
