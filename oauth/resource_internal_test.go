package oauth

import "testing"

func TestCanonicalResource(t *testing.T) {
	const want = "https://mail.example.com/mcp"
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
		{"https://mail.example.com/mcp/", false},
		{"https://mail.example.com/MCP", false},
		{"https://mail.example.com/./mcp", false},
		{"https://mail.example.com/%6Dcp", false},
		{"https://mail.example.com//mcp", false},
		{"https://mail.example.com", false},
		{"https://mail.example.com/", false},
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
		if got := sameResource(tc.raw, want); got != tc.same {
			t.Errorf("sameResource(%q, %q) = %v, want %v", tc.raw, want, got, tc.same)
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
