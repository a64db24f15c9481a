package safedial_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/internal/safedial"
)

// TestRefusalsNameNoBlock: whoever chose the host learns only that an
// address is not public, never which kind (loopback, private,
// documentation…) nor the address; the server's log says both.
func TestRefusalsNameNoBlock(t *testing.T) {
	var logs bytes.Buffer
	p := safedial.Policy{Logger: slog.New(slog.NewTextHandler(&logs, nil)), LookupNetIP: resolveTo("93.184.216.34", "192.0.2.2")}
	_, err := p.Resolve(context.Background(), "docs.example")
	var ae *safedial.AddressError
	if !errors.As(err, &ae) || err.Error() != "safedial: not a public address" {
		t.Fatalf("Resolve = %v, want only that the address is not public", err)
	}
	for _, word := range []string{"192.0.2", "TEST-NET", "Documentation", "docs.example"} {
		if strings.Contains(err.Error(), word) {
			t.Errorf("the refusal %q says %q", err, word)
		}
	}
	line := logs.String()
	for _, want := range []string{"level=WARN", "host=docs.example", "address=192.0.2.2", "TEST-NET-1"} {
		if !strings.Contains(line, want) {
			t.Errorf("the log line lacks %s: %s", want, line)
		}
	}
	logs.Reset()
	if err := p.ControlContext(context.Background(), "tcp4", "10.9.8.7:443", nil); err == nil || strings.Contains(err.Error(), "10.9") || strings.Contains(err.Error(), "rivate") {
		t.Errorf("ControlContext = %v, want a refusal naming nothing", err)
	}
	if !strings.Contains(logs.String(), "address=10.9.8.7") || !strings.Contains(logs.String(), "Private-Use") {
		t.Errorf("the dial's refusal is not logged: %s", logs.String())
	}
	// Without a logger nothing is written, and the refusal is the same.
	if err := (safedial.Policy{}).ControlContext(context.Background(), "tcp4", "10.9.8.7:443", nil); err == nil {
		t.Error("ControlContext allowed a private address")
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
	if !errors.As(err, &ae) || !strings.Contains(ae.Block, "Private-Use") {
		t.Fatalf("Resolve = %v, want the private address refused", err)
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
	ctx := context.Background()
	if err := p.ControlContext(ctx, "tcp4", "10.0.0.1:443", nil); err == nil {
		t.Fatal("ControlContext allowed a private address")
	}
	if err := p.ControlContext(ctx, "tcp4", "93.184.216.34:443", nil); err != nil {
		t.Fatalf("ControlContext refused a public address: %v", err)
	}
	if err := p.ControlContext(ctx, "tcp4", "not-an-address", nil); err == nil {
		t.Fatal("ControlContext allowed garbage")
	}
}

// TestConnectGetsOnlyTheCheckedAddress: a test's Connect is handed the
// address the policy checked, never the host's name, and is not called
// for a host whose address the policy refuses.
func TestConnectGetsOnlyTheCheckedAddress(t *testing.T) {
	var got []string
	connect := func(_ context.Context, _, address string) (net.Conn, error) {
		got = append(got, address)
		return nil, errors.New("no network here")
	}
	p := safedial.Policy{LookupNetIP: resolveTo("93.184.216.34"), Connect: connect}
	if _, err := p.DialContext(context.Background(), "tcp", "files.example:443"); err == nil {
		t.Fatal("Connect's error was lost")
	}
	p.LookupNetIP = resolveTo("10.0.0.7")
	if _, err := p.DialContext(context.Background(), "tcp", "files.example:443"); err == nil {
		t.Fatal("a host resolving to a private address was connected to")
	}
	if len(got) != 1 || got[0] != "93.184.216.34:443" {
		t.Errorf("Connect was called with %q, want only the checked public address", got)
	}
}
