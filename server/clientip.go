package server

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// parseTrustedProxies reads --trusted-proxies: a comma-separated list of
// CIDR ranges and single addresses. Blank entries are skipped.
func parseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		if p, err := netip.ParsePrefix(entry); err == nil {
			if p.Addr().Is4In6() && p.Bits() >= 96 { // ::ffff:10.0.0.0/104 is 10.0.0.0/8
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			out = append(out, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(entry); err == nil && a.Zone() == "" {
			a = a.Unmap()
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		return nil, fmt.Errorf("--trusted-proxies: %q is not an IP address or CIDR range; give your proxies' addresses, such as 10.0.0.0/8,192.168.1.10 or fd00::/8", clipEntry(entry))
	}
	return out, nil
}

func clipEntry(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// clientIP returns the function that names a request's client, for the
// per-address rate limits and the request log. The client is the TCP
// peer, unless the peer is a trusted proxy: then it is the rightmost
// X-Forwarded-For address that is not itself trusted. The addresses left
// of that one were written by whoever sent the request, and could be
// anything. An entry that does not parse ends the walk at the last
// trusted hop, so made-up values cannot mint fresh rate-limit keys.
func clientIP(trusted []netip.Prefix) func(*http.Request) string {
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return func(r *http.Request) string {
		peer, ok := parseHop(r.RemoteAddr)
		if !ok {
			return remoteIP(r)
		}
		if !isTrusted(peer) {
			return peer.String()
		}
		hop := peer
		hops := forwardedFor(r.Header)
		for i := len(hops) - 1; i >= 0; i-- {
			a, ok := parseHop(hops[i])
			if !ok {
				break
			}
			hop = a
			if !isTrusted(a) {
				break
			}
		}
		return hop.String()
	}
}

// maxForwardedHops bounds the X-Forwarded-For entries read.
const maxForwardedHops = 32

// forwardedFor lists the X-Forwarded-For entries, across repeated
// headers, in order; only the last maxForwardedHops count.
func forwardedFor(h http.Header) []string {
	var hops []string
	for _, v := range h.Values("X-Forwarded-For") {
		for hop := range strings.SplitSeq(v, ",") {
			hops = append(hops, strings.TrimSpace(hop))
		}
	}
	if len(hops) > maxForwardedHops {
		hops = hops[len(hops)-maxForwardedHops:]
	}
	return hops
}

// parseHop reads an address as a proxy writes it: 203.0.113.7, 2001:db8::1,
// or with a port (203.0.113.7:4711, [2001:db8::1]:4711). IPv4-mapped IPv6
// is read as IPv4; a zone is dropped.
func parseHop(s string) (netip.Addr, bool) {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}
