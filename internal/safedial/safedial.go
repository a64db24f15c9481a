// Package safedial opens connections to hosts that an untrusted party
// named (a client's metadata document, a file a chat client hands over),
// reaching public addresses only. A host is resolved first and every one
// of its addresses must be allowed (a mixed answer is an attack or a
// mistake); the connection then goes to the checked address, and the
// address actually dialled is checked again in the dialer's Control hook,
// so a second DNS answer (rebinding) cannot swap in a private one.
package safedial

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// Policy says which addresses a dial may reach. The zero value allows
// public unicast addresses and resolves with net.DefaultResolver.
type Policy struct {
	// AllowLoopback permits loopback addresses: for tests and `serve
	// --demo` only. It never permits private or link-local addresses.
	AllowLoopback bool
	// LookupNetIP resolves host names (default net.DefaultResolver).
	LookupNetIP func(ctx context.Context, host string) ([]netip.Addr, error)
}

// ErrNoAddress: the host does not resolve (or resolves to nothing).
var ErrNoAddress = errors.New("safedial: host does not resolve")

// AddressError is an address a dial must not reach. Its text names the
// kind of address, never the address itself: whoever chose the host
// would learn the server's internal addresses from it.
type AddressError struct {
	// Reason is what the address is: "a private address", "a loopback
	// address", …
	Reason string
}

func (e *AddressError) Error() string { return "safedial: " + e.Reason }

// Address ranges no dial may reach, beyond what netip's predicates name:
// shared NAT space, "this network", IETF protocol assignments,
// benchmarking, reserved, and IPv6 forms that embed an IPv4 address
// (IPv4-compatible, NAT64, 6to4) and so could smuggle a private one.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("fec0::/10"), // site-local, deprecated (RFC 3879) but still routed privately
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2002::/16"),
}

// Check returns an *AddressError for an address a dial must not reach.
func (p Policy) Check(ip netip.Addr) error {
	ip = ip.Unmap()
	reason := ""
	switch {
	case !ip.IsValid():
		reason = "not an address"
	case ip.IsLoopback():
		if p.AllowLoopback {
			return nil
		}
		reason = "a loopback address"
	case ip.IsPrivate():
		reason = "a private address"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		reason = "a link-local address"
	case ip.IsUnspecified(), ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		reason = "not a unicast address"
	}
	if reason == "" {
		for _, pfx := range blockedPrefixes {
			if pfx.Contains(ip) {
				reason = "a reserved address"
				break
			}
		}
	}
	if reason != "" {
		return &AddressError{Reason: reason}
	}
	return nil
}

// Resolve returns the address to dial for host: the first of its
// addresses, once every one of them passed Check. Its errors are
// ErrNoAddress and *AddressError.
func (p Policy) Resolve(ctx context.Context, host string) (netip.Addr, error) {
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		lookup := p.LookupNetIP
		if lookup == nil {
			lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
				return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
			}
		}
		addrs, err = lookup(ctx, host)
		if err != nil || len(addrs) == 0 {
			return netip.Addr{}, ErrNoAddress
		}
	}
	for _, a := range addrs {
		if err := p.Check(a); err != nil {
			return netip.Addr{}, err
		}
	}
	return addrs[0].Unmap(), nil
}

// Control is a net.Dialer Control hook that re-checks the address a
// connection is about to reach.
func (p Policy) Control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return &AddressError{Reason: "not an address"}
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return &AddressError{Reason: "not an address"}
	}
	return p.Check(ip)
}

// DialContext resolves addr's host under the policy and connects to the
// checked address, re-checked as it is dialled. It fits
// http.Transport.DialContext, so every connection a transport opens
// (every redirect hop to a new host) is held to the policy.
func (p Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("safedial: %w", err)
	}
	ip, err := p.Resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Control: p.Control}
	return d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
}
