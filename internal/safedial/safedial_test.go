package safedial_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/internal/safedial"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		addr          string
		allowLoopback bool
		want          string // "" allowed, else the reason's key word
	}{
		{"93.184.216.34", false, ""},
		{"2606:2800:220:1:248:1893:25c8:1946", false, ""},
		{"127.0.0.1", false, "loopback"},
		{"127.0.0.1", true, ""},
		{"::1", false, "loopback"},
		{"10.1.2.3", true, "private"},
		{"192.168.1.1", true, "private"},
		{"172.16.0.1", true, "private"},
		{"fd00::1", true, "private"},
		{"::ffff:10.0.0.1", true, "private"},
		{"169.254.169.254", true, "link-local"},
		{"fe80::1", true, "link-local"},
		{"0.0.0.0", true, "unicast"},
		{"224.0.0.1", true, "link-local"}, // 224.0.0.0/24 is link-local multicast
		{"239.1.1.1", true, "unicast"},
		{"100.64.0.1", true, "reserved"},
		{"64:ff9b::a00:1", true, "reserved"},
		{"::127.0.0.1", true, "reserved"},
		{"2002:a00:1::", true, "reserved"},
		{"fec0::1", true, "reserved"},
	}
	for _, tc := range tests {
		err := safedial.Policy{AllowLoopback: tc.allowLoopback}.Check(netip.MustParseAddr(tc.addr))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Check(%s) = %v, want allowed", tc.addr, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Check(%s) = %v, want a refusal naming %q", tc.addr, err, tc.want)
		case err != nil && strings.Contains(err.Error(), tc.addr):
			t.Errorf("Check(%s) = %v names the address", tc.addr, err)
		}
	}
}

func resolveTo(addrs ...string) func(context.Context, string) ([]netip.Addr, error) {
	return func(context.Context, string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, a := range addrs {
			out = append(out, netip.MustParseAddr(a))
		}
		return out, nil
	}
}

func TestResolveRefusesAMixedAnswer(t *testing.T) {
	p := safedial.Policy{LookupNetIP: resolveTo("93.184.216.34", "10.0.0.7")}
	_, err := p.Resolve(context.Background(), "files.example")
	var ae *safedial.AddressError
	if !errors.As(err, &ae) || ae.Reason != "a private address" {
		t.Fatalf("Resolve = %v, want a private-address refusal", err)
	}
	p.LookupNetIP = resolveTo()
	if _, err := p.Resolve(context.Background(), "files.example"); !errors.Is(err, safedial.ErrNoAddress) {
		t.Fatalf("Resolve of no answer = %v, want ErrNoAddress", err)
	}
}

// TestDialGoesToTheCheckedAddress: the connection reaches the address
// the policy checked (here loopback, allowed for the test), and a host
// that resolves to a private address is never dialled.
func TestDialGoesToTheCheckedAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())

	p := safedial.Policy{AllowLoopback: true, LookupNetIP: resolveTo("127.0.0.1")}
	c, err := p.DialContext(context.Background(), "tcp", net.JoinHostPort("files.example", port))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	c.Close()
	<-accepted

	p = safedial.Policy{LookupNetIP: resolveTo("127.0.0.1")}
	if _, err := p.DialContext(context.Background(), "tcp", net.JoinHostPort("files.example", port)); err == nil {
		t.Fatal("dialled a host that resolves to loopback without AllowLoopback")
	}
}

// TestControlRechecksTheDialledAddress: whatever resolved earlier, the
// address a socket is about to reach is checked again.
func TestControlRechecksTheDialledAddress(t *testing.T) {
	p := safedial.Policy{}
	if err := p.Control("tcp4", "10.0.0.1:443", nil); err == nil {
		t.Fatal("Control allowed a private address")
	}
	if err := p.Control("tcp4", "93.184.216.34:443", nil); err != nil {
		t.Fatalf("Control refused a public address: %v", err)
	}
	if err := p.Control("tcp4", "not-an-address", nil); err == nil {
		t.Fatal("Control allowed garbage")
	}
}
