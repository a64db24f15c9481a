package server

import (
	"net/http"
	"strings"
	"testing"
)

func TestParseTrustedProxies(t *testing.T) {
	good := map[string]string{
		"":                                     "",
		" , ":                                  "",
		"10.0.0.0/8":                           "10.0.0.0/8",
		"10.1.2.3/8, 192.168.1.10":             "10.0.0.0/8 192.168.1.10/32",
		"fd00::/8,::1":                         "fd00::/8 ::1/128",
		"::ffff:10.0.0.0/104,::ffff:192.0.2.1": "10.0.0.0/8 192.0.2.1/32",
	}
	for in, want := range good {
		got, err := parseTrustedProxies(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		var parts []string
		for _, p := range got {
			parts = append(parts, p.String())
		}
		if s := strings.Join(parts, " "); s != want {
			t.Errorf("%q = %s, want %s", in, s, want)
		}
	}
	bad := []string{"10.0.0.300/8", "10.0.0.0/33", "proxy.example.com", "10.0.0.0/8;192.168.0.0/16", "fe80::1%eth0", "*"}
	for _, in := range bad {
		_, err := parseTrustedProxies(in)
		if err == nil || !strings.Contains(err.Error(), "--trusted-proxies:") || !strings.Contains(err.Error(), "such as 10.0.0.0/8") {
			t.Errorf("%q: err = %v, want a sentence naming the flag and an example", in, err)
		}
	}
}

func TestClientIP(t *testing.T) {
	trusted, err := parseTrustedProxies("10.0.0.0/8, 192.168.1.10, fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	// The client followed by n trusted hops.
	hops := func(n int) string { return "198.51.100.7" + strings.Repeat(", 10.0.0.1", n) }
	cases := []struct {
		name string
		peer string
		xff  []string
		want string
	}{
		{"untrusted peer, spoofed header ignored", "203.0.113.9:5000", []string{"1.2.3.4"}, "203.0.113.9"},
		{"trusted peer, no header", "10.0.0.2:5000", nil, "10.0.0.2"},
		{"trusted peer names the client", "10.0.0.2:5000", []string{"198.51.100.7"}, "198.51.100.7"},
		{"the client's own claim is left of it", "10.0.0.2:5000", []string{"6.6.6.6, 198.51.100.7"}, "198.51.100.7"},
		{"a chain of trusted proxies", "10.0.0.2:5000", []string{"6.6.6.6, 198.51.100.7, 192.168.1.10, 10.9.9.9"}, "198.51.100.7"},
		{"every hop trusted", "10.0.0.2:5000", []string{"10.1.1.1, 192.168.1.10"}, "10.1.1.1"},
		{"repeated headers read in order", "10.0.0.2:5000", []string{"6.6.6.6", "198.51.100.7, 10.0.0.9"}, "198.51.100.7"},
		{"a port on the hop", "10.0.0.2:5000", []string{"198.51.100.7:4711"}, "198.51.100.7"},
		{"IPv6 proxy and client", "[fd00::1]:443", []string{"2001:db8::7"}, "2001:db8::7"},
		{"IPv6 hop with a port", "[fd00::1]:443", []string{"[2001:db8::7]:5555"}, "2001:db8::7"},
		{"IPv6 hop in brackets", "[fd00::1]:443", []string{"[2001:db8::7]"}, "2001:db8::7"},
		{"untrusted IPv6 peer", "[2001:db8::9]:443", []string{"198.51.100.7"}, "2001:db8::9"},
		{"IPv4-mapped peer and hop", "[::ffff:10.0.0.2]:80", []string{"::ffff:198.51.100.7"}, "198.51.100.7"},
		{"garbage stops at the last trusted hop", "10.0.0.2:5000", []string{"198.51.100.7, unknown"}, "10.0.0.2"},
		{"garbage left of the client is never read", "10.0.0.2:5000", []string{"<script>, 198.51.100.7"}, "198.51.100.7"},
		{"the client as the 32nd hop from the right", "10.0.0.2:5000", []string{hops(maxForwardedHops - 1)}, "198.51.100.7"},
		{"a 33rd hop is not read", "10.0.0.2:5000", []string{hops(maxForwardedHops)}, "10.0.0.1"},
	}
	ip := clientIP(trusted)
	for _, tc := range cases {
		r, _ := http.NewRequest(http.MethodGet, "http://mail.example.com/", nil)
		r.RemoteAddr = tc.peer
		for _, v := range tc.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := ip(r); got != tc.want {
			t.Errorf("%s: client = %s, want %s", tc.name, got, tc.want)
		}
	}
	// With no proxy trusted, the header is never read.
	r, _ := http.NewRequest(http.MethodGet, "http://mail.example.com/", nil)
	r.RemoteAddr = "10.0.0.2:5000"
	r.Header.Set("X-Forwarded-For", "198.51.100.7")
	if got := clientIP(nil)(r); got != "10.0.0.2" {
		t.Errorf("no trusted proxies: client = %s, want the peer", got)
	}
}

func TestConfigRefusesBadTrustedProxies(t *testing.T) {
	c := Config{Addr: "127.0.0.1:0", Demo: true, MaxConcurrentSends: 1, MaxSendsPerUser: 1, MaxUploadBytes: 1, TrustedProxies: "10.0.0.0/8,nope"}
	if err := c.check(); err == nil || !strings.Contains(err.Error(), `"nope" is not an IP address or CIDR range`) {
		t.Errorf("check = %v", err)
	}
	c.TrustedProxies = "10.0.0.0/8"
	if err := c.check(); err != nil {
		t.Errorf("check = %v", err)
	}
}

// The request log names the client a trusted proxy forwarded for.
func TestRequestLogNamesTheForwardedClient(t *testing.T) {
	trusted, _ := parseTrustedProxies("127.0.0.1, ::1")
	ts := newTestServer(t, func(d *Deps) { d.ClientIP = clientIP(trusted) })
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/healthz", nil)
	req.Header.Set("X-Forwarded-For", "203.0.113.50")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if logs := ts.logs.String(); !strings.Contains(logs, "remote=203.0.113.50") {
		t.Errorf("log:\n%s", logs)
	}
}
