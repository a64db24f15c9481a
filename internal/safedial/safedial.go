// Package safedial opens connections to hosts that an untrusted party
// named (a client's metadata document, a file a chat client hands over),
// reaching public addresses only. A host is resolved first and every one
// of its addresses must be allowed (a mixed answer is an attack or a
// mistake); the connection then goes to the checked address, and the
// address actually dialled is checked again in the dialer's Control hook,
// so a second DNS answer (rebinding) cannot swap in a private one. Which
// addresses are public comes from IANA's special-purpose registries
// (registry.go).
package safedial

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"syscall"
)

// Policy says which addresses a dial may reach. The zero value allows
// public addresses only and resolves with net.DefaultResolver.
type Policy struct {
	// AllowLoopback permits loopback addresses (127.0.0.0/8, ::1 and
	// ::ffff:127.0.0.0/104): for tests and `serve --demo` only. It never
	// permits private or link-local addresses, nor a loopback address
	// inside another (NAT64, 6to4), which would go through a translator.
	AllowLoopback bool
	// LookupNetIP resolves host names (default net.DefaultResolver).
	LookupNetIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// Logger gets a line for each refused address, naming it and its
	// block (default: no log).
	Logger *slog.Logger
	// Connect, for tests only, opens the connection to the address the
	// policy checked (an IP and a port) in place of the net.Dialer
	// that re-checks it as it connects: a test serves its hosts on an
	// in-memory network, which no real dialer reaches. The check before
	// it is the same.
	Connect func(ctx context.Context, network, address string) (net.Conn, error)
}

// ErrNoAddress: the host does not resolve (or resolves to nothing).
var ErrNoAddress = errors.New("safedial: host does not resolve")

// AddressError is an address a dial must not reach. Its text says only
// that the address is not public: whoever chose the host would otherwise
// learn, from which block a refusal named, what the server's internal
// names resolve to. The block goes to the log instead.
type AddressError struct {
	// Block is the registry row the address is in (or the rule that
	// refused it), for the server's log only.
	Block string
}

func (e *AddressError) Error() string { return "safedial: not a public address" }

// Check returns an *AddressError for an address a dial must not reach.
func (p Policy) Check(ip netip.Addr) error {
	if p.AllowLoopback && ip.Unmap().IsLoopback() {
		return nil
	}
	if why := refusal(ip); why != "" {
		return &AddressError{Block: why}
	}
	return nil
}

// refusal names what keeps ip from being dialled (its registry row), or
// "" for a public address.
func refusal(ip netip.Addr) string {
	if !ip.IsValid() {
		return "not an address"
	}
	b, ok := lookup(ip.WithZone(""))
	switch {
	case !ok && ip.Is6() && !globalUnicast.Contains(ip):
		return "outside the IPv6 global unicast space 2000::/3"
	case !ok, b.reach == reachable:
		return ""
	case b.reach == unreachable:
		return b.prefix.String() + " " + b.name
	}
	for _, v4 := range embeddedIPv4(ip) {
		if why := refusal(v4); why != "" {
			return b.prefix.String() + " " + b.name + " carrying " + v4.String() + " in " + why
		}
	}
	return ""
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
			p.logRefusal(ctx, host, a, err)
			return netip.Addr{}, err
		}
	}
	return addrs[0].Unmap(), nil
}

// ControlContext is a net.Dialer ControlContext hook that re-checks the
// address a connection is about to reach.
func (p Policy) ControlContext(ctx context.Context, _, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return &AddressError{Block: "not an address"}
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return &AddressError{Block: "not an address"}
	}
	if err := p.Check(ip); err != nil {
		p.logRefusal(ctx, "", ip, err)
		return err
	}
	return nil
}

// logRefusal writes what the caller is not told: the address and its
// block.
func (p Policy) logRefusal(ctx context.Context, host string, ip netip.Addr, err error) {
	var ae *AddressError
	if p.Logger == nil || !errors.As(err, &ae) {
		return
	}
	attrs := []any{"address", ip.String(), "block", ae.Block}
	if host != "" && host != ip.String() {
		attrs = append([]any{"host", host}, attrs...)
	}
	p.Logger.WarnContext(ctx, "refused to dial a non-public address", attrs...)
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
	address := net.JoinHostPort(ip.String(), port)
	if p.Connect != nil {
		return p.Connect(ctx, network, address)
	}
	d := &net.Dialer{ControlContext: p.ControlContext}
	return d.DialContext(ctx, network, address)
}
