package safedial

import (
	"net/netip"
	"strings"
	"testing"
)

// addressRows has one address in each registry row (and in each rule
// around them), with whether a dial may reach it and, when not, a word of
// the block the log must name.
var addressRows = []struct {
	addr  string
	allow bool
	block string
}{
	// Public addresses, outside every special-purpose block.
	{"93.184.216.34", true, ""},
	{"2606:2800:220:1:248:1893:25c8:1946", true, ""},

	// IPv4 special-purpose registry, row by row.
	{"0.1.2.3", false, `"This network"`},
	{"0.0.0.0", false, `"This host on this network"`},
	{"10.1.2.3", false, "Private-Use"},
	{"100.64.0.1", false, "Shared Address Space"},
	{"127.0.0.1", false, "Loopback"},
	{"169.254.169.254", false, "Link Local"},
	{"172.16.0.1", false, "Private-Use"},
	{"192.0.0.200", false, "IETF Protocol Assignments"},
	{"192.0.0.1", false, "IPv4 Service Continuity Prefix"},
	{"192.0.0.8", false, "IPv4 dummy address"},
	{"192.0.0.9", true, ""},  // Port Control Protocol Anycast: True
	{"192.0.0.10", true, ""}, // TURN anycast: True
	{"192.0.0.170", false, "NAT64/DNS64 Discovery"},
	{"192.0.0.171", false, "NAT64/DNS64 Discovery"},
	{"192.0.2.2", false, "TEST-NET-1"},
	{"192.31.196.1", true, ""}, // AS112-v4: True
	{"192.52.193.1", true, ""}, // AMT: True
	{"192.88.99.1", false, "6to4 Relay Anycast"},
	{"192.88.99.2", false, "6a44-relay anycast"},
	{"192.168.1.1", false, "Private-Use"},
	{"192.175.48.1", true, ""}, // Direct Delegation AS112: True
	{"198.18.0.1", false, "Benchmarking"},
	{"198.51.100.7", false, "TEST-NET-2"},
	{"203.0.113.9", false, "TEST-NET-3"},
	{"240.0.0.1", false, "Reserved"},
	{"255.255.255.255", false, "Limited Broadcast"},

	// IPv6 special-purpose registry, row by row.
	{"::1", false, "Loopback Address"},
	{"::", false, "Unspecified Address"},
	{"::ffff:10.0.0.1", false, "IPv4-mapped Address (RFC 4291) carrying 10.0.0.1 in 10.0.0.0/8 Private-Use"},
	{"::ffff:93.184.216.34", true, ""},
	{"64:ff9b::a00:1", false, "IPv4-IPv6 Translat. (RFC 6052) carrying 10.0.0.1"},
	{"64:ff9b::5db8:d822", true, ""}, // NAT64 of 93.184.216.34
	{"64:ff9b:1::1", false, "local use"},
	{"100::1", false, "Discard-Only"},
	{"100:0:0:1::1", false, "Dummy IPv6 Prefix"},
	{"2001:4::1", false, "IETF Protocol Assignments"},
	{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false, "TEREDO (RFC 4380) carrying 192.0.2.45"}, // RFC 4380's example: client 192.0.2.45
	{"2001:0:a00:1:8000:63bf:a247:27dd", false, "TEREDO (RFC 4380) carrying 10.0.0.1"},       // server 10.0.0.1
	{"2001:0:4136:e378:8000:63bf:a247:27dd", true, ""},                                       // server 65.54.227.120, client 93.184.216.34
	{"2001:1::1", true, ""},                                                                  // PCP anycast: True
	{"2001:1::2", true, ""},                                                                  // TURN anycast: True
	{"2001:1::3", true, ""},                                                                  // DNS-SD SRP anycast: True
	{"2001:2::1", false, "Benchmarking"},
	{"2001:3::1", true, ""},     // AMT: True
	{"2001:4:112::1", true, ""}, // AS112-v6: True
	{"2001:10::1", false, "ORCHID"},
	{"2001:20::1", true, ""}, // ORCHIDv2: True
	{"2001:30::1", true, ""}, // DETs: True
	{"2001:db8::1", false, "2001:db8::/32 Documentation"},
	{"2002:a00:1::", false, "6to4 (RFC 3056) carrying 10.0.0.1"},
	{"2002:5db8:d822::1", true, ""}, // 6to4 of 93.184.216.34
	{"2620:4f:8000::1", true, ""},   // Direct Delegation AS112: True
	{"3fff::1", false, "3fff::/20 Documentation"},
	{"5f00::1", false, "Segment Routing"},
	{"fd00::1", false, "Unique-Local"},
	{"fe80::1", false, "Link-Local Unicast"},
	{"fe80::1%eth0", false, "Link-Local Unicast"},

	// Multicast, whole.
	{"224.0.0.1", false, "Multicast"},
	{"239.1.1.1", false, "Multicast"},
	{"ff02::1", false, "Multicast"},
	{"ff0e::1", false, "Multicast"},

	// IPv6 outside the global unicast space.
	{"::127.0.0.1", false, "2000::/3"}, // IPv4-compatible, deprecated
	{"::a00:1", false, "2000::/3"},
	{"::ffff:0:a00:1", false, "2000::/3"},     // IPv4-translated (RFC 2765's ::ffff:0:0:0/96), carrying 10.0.0.1
	{"::ffff:0:5db8:d822", false, "2000::/3"}, // the same, carrying 93.184.216.34: no registry row makes it reachable
	{"fec0::1", false, "2000::/3"},            // site-local, deprecated but still routed privately
	{"4000::1", false, "2000::/3"},
}

func TestEveryRegistryRowAndRule(t *testing.T) {
	for _, tc := range addressRows {
		ip := netip.MustParseAddr(tc.addr)
		err := Policy{}.Check(ip)
		ae, _ := err.(*AddressError)
		switch {
		case tc.allow && err != nil:
			t.Errorf("%s refused (%v, block %q), want allowed", tc.addr, err, ae.Block)
		case !tc.allow && ae == nil:
			t.Errorf("%s allowed, want refused (%s)", tc.addr, tc.block)
		case !tc.allow && !strings.Contains(ae.Block, tc.block):
			t.Errorf("%s refused as %q, want the block %q named", tc.addr, ae.Block, tc.block)
		case err != nil && err.Error() != "safedial: not a public address":
			t.Errorf("%s: the refusal says %q, more than that the address is not public", tc.addr, err)
		}
	}
	// Each row of the registries is the most specific row for one of the
	// addresses above: no row goes untested.
	for _, b := range registry {
		tested := false
		for _, tc := range addressRows {
			if got, ok := lookup(netip.MustParseAddr(tc.addr).WithZone("")); ok && got.prefix == b.prefix {
				tested = true
				break
			}
		}
		if !tested {
			t.Errorf("no address tests the row %s %s", b.prefix, b.name)
		}
	}
}

// TestLoopbackAllowedOnlyAsItself: with AllowLoopback, 127.0.0.0/8, ::1
// and their IPv4-mapped form pass, and nothing else that was refused:
// not a loopback address inside NAT64 or 6to4, not a private address.
func TestLoopbackAllowedOnlyAsItself(t *testing.T) {
	p := Policy{AllowLoopback: true}
	for _, a := range []string{"127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1"} {
		if err := p.Check(netip.MustParseAddr(a)); err != nil {
			t.Errorf("AllowLoopback refused %s: %v", a, err)
		}
	}
	for _, a := range []string{"64:ff9b::7f00:1", "2002:7f00:1::", "10.0.0.1", "169.254.169.254", "fd00::1", "0.0.0.0", "::"} {
		if err := p.Check(netip.MustParseAddr(a)); err == nil {
			t.Errorf("AllowLoopback allowed %s", a)
		}
	}
}
