package benchkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport is an HTTP transport for many MCP sessions at once: a
// keep-alive pool large enough that no call waits for a connection.
func Transport(conns int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = conns
	t.MaxIdleConnsPerHost = conns
	return t
}

// spread sends each request with the user's bearer token to the next of
// several replicas in turn: drivemail keeps no session state, so one MCP
// session may span them, as behind a load balancer without stickiness.
type spread struct {
	next     http.RoundTripper
	replicas []*url.URL
	token    string
	n        atomic.Uint64
}

func (s *spread) RoundTrip(req *http.Request) (*http.Response, error) {
	to := s.replicas[int(s.n.Add(1)%uint64(len(s.replicas)))]
	r := req.Clone(req.Context())
	r.URL.Scheme, r.URL.Host, r.Host = to.Scheme, to.Host, ""
	r.Header.Set("Authorization", "Bearer "+s.token)
	return s.next.RoundTrip(r)
}

// Connect opens an MCP session as the user whose drivemail access token
// is tok, at BASE/mcp of the first replica, spreading its requests over
// every replica given. It opens no standalone SSE stream: the benches
// measure tool calls.
func Connect(ctx context.Context, rt http.RoundTripper, tok string, replicas ...string) (*mcp.ClientSession, error) {
	if len(replicas) == 0 {
		return nil, errors.New("connect: no replica given")
	}
	s := &spread{next: rt, token: tok}
	for _, r := range replicas {
		u, err := url.Parse(r)
		if err != nil {
			return nil, fmt.Errorf("connect: replica %q: %w", r, err)
		}
		s.replicas = append(s.replicas, u)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "drivemail-bench", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: replicas[0] + "/mcp", HTTPClient: &http.Client{Transport: s},
		DisableStandaloneSSE: true, MaxRetries: -1}
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to %s/mcp: %w", replicas[0], err)
	}
	return cs, nil
}

// Call calls a tool and returns how long it took and its structuredContent.
// A tool error (isError) is an error with the tool's text.
func Call(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (time.Duration, map[string]any, error) {
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	took := time.Since(start)
	if err != nil {
		return took, nil, fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		var text []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				text = append(text, t.Text)
			}
		}
		return took, nil, fmt.Errorf("%s refused: %s", tool, strings.Join(text, " "))
	}
	out := map[string]any{}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &out)
	}
	return took, out, nil
}
