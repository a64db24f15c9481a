package safedial

import "net/netip"

// The blocked set comes from IANA's special-purpose address registries
// (iana-ipv4-special-registry and iana-ipv6-special-registry, RFC 6890),
// row for row as of the IPv6 registry's 2025-04 update (RFC 9780): every
// block whose "Globally Reachable" is False is refused, a more specific
// block marked True inside one is allowed (the anycast services inside
// 192.0.0.0/24 and 2001::/23), and the blocks whose reachability depends
// on the IPv4 address they carry (6to4 and Teredo, "N/A"; NAT64, True)
// are judged by that address. Terminated blocks (6to4 relay anycast,
// the first ORCHID) are refused: nothing public is there any more.
// Multicast has registries of its own and is refused whole. In IPv6,
// only the global unicast space (2000::/3, IANA's IPv6 address space
// registry) holds public addresses at all; the rest (the deprecated
// IPv4-compatible ::/96, site-local fec0::/10, …) is refused.

// reach is a block's Globally Reachable value.
type reach int

const (
	unreachable reach = iota // False, or a terminated block
	reachable                // True
	embedded                 // decided by the IPv4 address inside
)

// block is one row of a registry.
type block struct {
	prefix netip.Prefix
	name   string // the registry's Name and RFC, for the log
	reach  reach
}

func row(prefix, name string, r reach) block {
	return block{prefix: netip.MustParsePrefix(prefix), name: name, reach: r}
}

// registry holds both registries' rows and the two broader rules.
var registry = []block{
	// IPv4 special-purpose registry.
	row("0.0.0.0/8", `"This network" (RFC 791)`, unreachable),
	row("0.0.0.0/32", `"This host on this network" (RFC 1122)`, unreachable),
	row("10.0.0.0/8", "Private-Use (RFC 1918)", unreachable),
	row("100.64.0.0/10", "Shared Address Space (RFC 6598)", unreachable),
	row("127.0.0.0/8", "Loopback (RFC 1122)", unreachable),
	row("169.254.0.0/16", "Link Local (RFC 3927)", unreachable),
	row("172.16.0.0/12", "Private-Use (RFC 1918)", unreachable),
	row("192.0.0.0/24", "IETF Protocol Assignments (RFC 6890)", unreachable),
	row("192.0.0.0/29", "IPv4 Service Continuity Prefix (RFC 7335)", unreachable),
	row("192.0.0.8/32", "IPv4 dummy address (RFC 7600)", unreachable),
	row("192.0.0.9/32", "Port Control Protocol Anycast (RFC 7723)", reachable),
	row("192.0.0.10/32", "Traversal Using Relays around NAT Anycast (RFC 8155)", reachable),
	row("192.0.0.170/32", "NAT64/DNS64 Discovery (RFC 8880)", unreachable),
	row("192.0.0.171/32", "NAT64/DNS64 Discovery (RFC 8880)", unreachable),
	row("192.0.2.0/24", "Documentation (TEST-NET-1) (RFC 5737)", unreachable),
	row("192.31.196.0/24", "AS112-v4 (RFC 7535)", reachable),
	row("192.52.193.0/24", "AMT (RFC 7450)", reachable),
	row("192.88.99.0/24", "Deprecated (6to4 Relay Anycast) (RFC 7526), terminated", unreachable),
	row("192.88.99.2/32", "6a44-relay anycast address (RFC 6751)", unreachable),
	row("192.168.0.0/16", "Private-Use (RFC 1918)", unreachable),
	row("192.175.48.0/24", "Direct Delegation AS112 Service (RFC 7534)", reachable),
	row("198.18.0.0/15", "Benchmarking (RFC 2544)", unreachable),
	row("198.51.100.0/24", "Documentation (TEST-NET-2) (RFC 5737)", unreachable),
	row("203.0.113.0/24", "Documentation (TEST-NET-3) (RFC 5737)", unreachable),
	row("240.0.0.0/4", "Reserved (RFC 1112)", unreachable),
	row("255.255.255.255/32", "Limited Broadcast (RFC 8190)", unreachable),

	// IPv6 special-purpose registry.
	row("::1/128", "Loopback Address (RFC 4291)", unreachable),
	row("::/128", "Unspecified Address (RFC 4291)", unreachable),
	row("::ffff:0:0/96", "IPv4-mapped Address (RFC 4291)", embedded), // dialled as its IPv4 address
	row("64:ff9b::/96", "IPv4-IPv6 Translat. (RFC 6052)", embedded),
	row("64:ff9b:1::/48", "IPv4-IPv6 Translat., local use (RFC 8215)", unreachable),
	row("100::/64", "Discard-Only Address Block (RFC 6666)", unreachable),
	row("100:0:0:1::/64", "Dummy IPv6 Prefix (RFC 9780)", unreachable),
	row("2001::/23", "IETF Protocol Assignments (RFC 2928)", unreachable),
	row("2001::/32", "TEREDO (RFC 4380)", embedded),
	row("2001:1::1/128", "Port Control Protocol Anycast (RFC 7723)", reachable),
	row("2001:1::2/128", "Traversal Using Relays around NAT Anycast (RFC 8155)", reachable),
	row("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast (RFC 9665)", reachable),
	row("2001:2::/48", "Benchmarking (RFC 5180)", unreachable),
	row("2001:3::/32", "AMT (RFC 7450)", reachable),
	row("2001:4:112::/48", "AS112-v6 (RFC 7535)", reachable),
	row("2001:10::/28", "Deprecated (previously ORCHID) (RFC 4843), terminated", unreachable),
	row("2001:20::/28", "ORCHIDv2 (RFC 7343)", reachable),
	row("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix (RFC 9374)", reachable),
	row("2001:db8::/32", "Documentation (RFC 3849)", unreachable),
	row("2002::/16", "6to4 (RFC 3056)", embedded),
	row("2620:4f:8000::/48", "Direct Delegation AS112 Service (RFC 7534)", reachable),
	row("3fff::/20", "Documentation (RFC 9637)", unreachable),
	row("5f00::/16", "Segment Routing (SRv6) SIDs (RFC 9602)", unreachable),
	row("fc00::/7", "Unique-Local (RFC 4193)", unreachable),
	row("fe80::/10", "Link-Local Unicast (RFC 4291)", unreachable),

	// The multicast registries' blocks, whole.
	row("224.0.0.0/4", "Multicast (RFC 5771)", unreachable),
	row("ff00::/8", "Multicast (RFC 4291)", unreachable),
}

// globalUnicast is the IPv6 space IANA allocates for global unicast;
// sixToFour and teredo carry IPv4 addresses at their own places.
var (
	globalUnicast = netip.MustParsePrefix("2000::/3")
	sixToFour     = netip.MustParsePrefix("2002::/16")
	teredo        = netip.MustParsePrefix("2001::/32")
)

// lookup returns the most specific registry row holding ip, if any.
func lookup(ip netip.Addr) (block, bool) {
	var best block
	found := false
	for _, b := range registry {
		if b.prefix.Contains(ip) && (!found || b.prefix.Bits() > best.prefix.Bits()) {
			best, found = b, true
		}
	}
	return best, found
}

// embeddedIPv4 returns the IPv4 addresses an embedded-row address
// carries: the last 32 bits of an IPv4-mapped or NAT64 address (RFC
// 6052 §2.2, the /96 prefix), bits 16–47 of a 6to4 address (RFC 3056 §2),
// and a Teredo address's server (bits 32–63) and client (the last 32
// bits, inverted) (RFC 4380 §4).
func embeddedIPv4(ip netip.Addr) []netip.Addr {
	a := ip.As16()
	v4 := func(b []byte) netip.Addr { return netip.AddrFrom4([4]byte(b)) }
	switch {
	case sixToFour.Contains(ip):
		return []netip.Addr{v4(a[2:6])}
	case teredo.Contains(ip):
		client := [4]byte{^a[12], ^a[13], ^a[14], ^a[15]}
		return []netip.Addr{v4(a[4:8]), netip.AddrFrom4(client)}
	}
	return []netip.Addr{v4(a[12:16])}
}
