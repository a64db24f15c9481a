package server

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/drivemail/drivemail/internal/metrics"
	"github.com/drivemail/drivemail/tools"
	"github.com/drivemail/drivemail/views"
)

// instructions are what an MCP client may show the model about the server
// as a whole, before any tool description.
const instructions = `drivemail sends email from the user's Gmail with Google Drive files attached by id. ` +
	`Find files with drive_search, then pass their ids to send_email (or create_draft); never put file contents in arguments. ` +
	`Google Docs, Sheets and Slides go in as links unless attached with "as" (pdf, docx, xlsx, csv…). ` +
	`A file on the user's computer can be put in Drive first with request_upload. ` +
	`Where offered, search_mail finds the user's mail, to answer (reply_to), forward, or take attachments from.`

// newMCPHandler builds the MCP server with every tool, served over
// streamable HTTP. It keeps no session state and sees no client's session
// id (mcpEndpoint decides what one means), so any replica answers any
// request, and 2026-07-28 clients need none at all.
func newMCPHandler(d Deps) *mcpserver.StreamableHTTPServer {
	opts := []mcpserver.ServerOption{
		mcpserver.WithTitle("drivemail"),
		mcpserver.WithInstructions(instructions),
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithToolHandlerMiddleware(observeTools(d.Metrics)),
		mcpserver.WithToolFilter(tools.Filter(d.Tools)),
	}
	if len(d.Resources) > 0 {
		// A host that renders views may look for the extension here too.
		opts = append(opts, mcpserver.WithExtensions(map[string]any{views.Extension: map[string]any{"mimeTypes": []string{views.MIMEType}}}))
	}
	s := mcpserver.NewMCPServer("drivemail", d.Version, opts...)
	s.AddTools(append(tools.Tools(d.Tools), d.testTools...)...)
	if len(d.Resources) > 0 {
		// Adding resources declares the capability, so only when there are some.
		s.AddResources(d.Resources...)
	}
	return mcpserver.NewStreamableHTTPServer(s,
		mcpserver.WithEndpointPath("/mcp"),
		mcpserver.WithStreamableHTTPLogger(d.Logger),
		// originGuard does this job, and unlike the library's check it
		// works behind a reverse proxy that keeps the public Host.
		mcpserver.WithDisableLocalhostProtection(true),
		mcpserver.WithStateLess(true),
	)
}

// observeTools counts and times each tool call by outcome, and counts the
// sends running (send_email and create_draft) while they run.
func observeTools(m *metrics.Metrics) mcpserver.ToolHandlerMiddleware {
	return func(next mcpserver.ToolHandlerFunc) mcpserver.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			done := m.ToolCall(req.Params.Name)
			if name := req.Params.Name; name == "send_email" || name == "create_draft" || name == "send_prepared" {
				defer m.SendStarted()()
			}
			res, err := next(ctx, req)
			done(err != nil || (res != nil && res.IsError))
			return res, err
		}
	}
}
