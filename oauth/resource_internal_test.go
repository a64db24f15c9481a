package oauth

import "testing"

func TestResourceFor(t *testing.T) {
	const want = "https://mail.example.com/mcp"
	s := &Server{base: "https://mail.example.com", resource: want}
	tests := []struct {
		raw  string
		same bool
	}{
		{"https://mail.example.com/mcp", true},
		{"HTTPS://mail.example.com/mcp", true},
		{"https://Mail.Example.COM/mcp", true},
		{"https://mail.example.com:443/mcp", true},
		{"https://MAIL.EXAMPLE.COM:443/mcp", true},
		{"https://mail.example.com:/mcp", true}, // an empty port is the default (RFC 3986 §6.2.3)
		// Claude Code appends a slash; some clients name the origin.
		{"https://mail.example.com/mcp/", true},
		{"https://MAIL.example.com:443/mcp/", true},
		{"https://mail.example.com", true},
		{"https://mail.example.com/", true},
		{"https://mail.example.com:443", true},
		{"https://mail.example.com/mcp//", false},
		{"https://mail.example.com/mcp/x", false},
		{"https://mail.example.com/mcpx", false},
		{"https://mail.example.com/MCP", false},
		{"https://mail.example.com/./mcp", false},
		{"https://mail.example.com/%6Dcp", false},
		{"https://mail.example.com//mcp", false},
		{"https://mail.example.com:8443/mcp", false},
		{"https://mail.example.com:0443/mcp", false},
		{"http://mail.example.com/mcp", false},
		{"http://mail.example.com:443/mcp", false},
		{"https://mail.example.com./mcp", false},
		{"https://user@mail.example.com/mcp", false},
		{"https://mail.example.com/mcp?", false},
		{"https://mail.example.com/mcp?a=b", false},
		{"https://mail.example.com/mcp#", false},
		{"https://mail.example.com/mcp#top", false},
		{"//mail.example.com/mcp", false},
		{"mail.example.com/mcp", false},
		{"wss://mail.example.com/mcp", false},
		{"https:mail.example.com/mcp", false},
		{"", false},
	}
	for _, tc := range tests {
		got, ok := s.resourceFor(tc.raw)
		if ok != tc.same || (ok && got != want) {
			t.Errorf("resourceFor(%q) = %q, %v; want %v", tc.raw, got, ok, tc.same)
		}
	}

	loopback := []struct {
		raw, want string
	}{
		{"HTTP://LOCALHOST:80/mcp", "http://localhost/mcp"},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/mcp"},
		{"http://[::1]:8080/mcp", "http://[::1]:8080/mcp"},
	}
	for _, tc := range loopback {
		if got, ok := canonicalResource(tc.raw); !ok || got != tc.want {
			t.Errorf("canonicalResource(%q) = %q, %v; want %q", tc.raw, got, ok, tc.want)
		}
	}
}
