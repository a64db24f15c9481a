package oauth

import "testing"

func TestLimitKey(t *testing.T) {
	tests := []struct {
		name, addr, want string
	}{
		{"IPv4", "192.0.2.7", "register:192.0.2.7"},
		{"IPv4 neighbour is another client", "192.0.2.8", "register:192.0.2.8"},
		{"IPv6 counts by its /64", "2001:db8:1:2:3:4:5:6", "register:2001:db8:1:2::/64"},
		{"last address of the /64", "2001:db8:1:2:ffff:ffff:ffff:ffff", "register:2001:db8:1:2::/64"},
		{"first address of the next /64", "2001:db8:1:3::", "register:2001:db8:1:3::/64"},
		{"upper-case IPv6", "2001:DB8:1:2::A", "register:2001:db8:1:2::/64"},
		{"bracketed IPv6", "[2001:db8:1:2::1]", "register:2001:db8:1:2::/64"},
		{"IPv6 with a zone", "fe80::1%eth0", "register:fe80::/64"},
		{"IPv4-mapped IPv6 is IPv4", "::ffff:192.0.2.7", "register:192.0.2.7"},
		{"IPv4-mapped IPv6, hex form", "::ffff:c000:207", "register:192.0.2.7"},
		{"IPv6 loopback", "::1", "register:::/64"},
		{"not an address", "@", "register:@"},
		{"empty", "", "register:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := limitKey("register", tc.addr); got != tc.want {
				t.Fatalf("limitKey(%q) = %q, want %q", tc.addr, got, tc.want)
			}
		})
	}
}
