package oauth

import (
	"net/netip"
	"strings"
)

// limitKey is the rate-limit key for what (an endpoint) from the client
// address addr: an IPv4 address counts on its own, an IPv6 address by its
// /64. One IPv6 subscriber or host is usually given a whole /64 (SLAAC,
// RFC 6177) and may use any address in it, so counting addresses would
// give one client 2^64 allowances. IPv4-mapped IPv6 (::ffff:192.0.2.1)
// counts as its IPv4 address; a zone is dropped. What is not an address
// (the peer of a Unix socket) counts as it is.
func limitKey(what, addr string) string {
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"))
	if err != nil {
		return what + ":" + addr
	}
	a = a.Unmap().WithZone("")
	if a.Is6() {
		return what + ":" + netip.PrefixFrom(a, 64).Masked().String()
	}
	return what + ":" + a.String()
}
