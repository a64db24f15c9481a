package cimd_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drivemail/drivemail/oauth/cimd"
	"github.com/drivemail/drivemail/store/storetest"
)

// docServer serves handler over TLS on loopback and counts requests.
type docServer struct {
	srv   *httptest.Server
	hits  atomic.Int32
	roots *x509.CertPool
}

func newDocServer(t *testing.T, handler func(w http.ResponseWriter, r *http.Request, self string)) *docServer {
	d := &docServer{}
	d.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.hits.Add(1)
		handler(w, r, d.srv.URL+r.URL.Path)
	}))
	t.Cleanup(d.srv.Close)
	d.roots = x509.NewCertPool()
	d.roots.AddCert(d.srv.Certificate())
	return d
}

func jsonDoc(extra string) func(w http.ResponseWriter, r *http.Request, self string) {
	return func(w http.ResponseWriter, r *http.Request, self string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"client_id":%q,"client_name":"Test App","redirect_uris":["http://127.0.0.1/cb"]%s}`, self, extra)
	}
}

func (d *docServer) fetcher(clock *storetest.Clock) *cimd.Fetcher {
	return cimd.New(cimd.Config{AllowLoopback: true, RootCAs: d.roots, Timeout: time.Second, Now: clock.Now})
}

func TestFetchAndCache(t *testing.T) {
	var cacheControl atomic.Value
	cacheControl.Store("")
	d := newDocServer(t, func(w http.ResponseWriter, r *http.Request, self string) {
		if cc := cacheControl.Load().(string); cc != "" {
			w.Header().Set("Cache-Control", cc)
		}
		jsonDoc("")(w, r, self)
	})
	clock := storetest.NewClock()
	f := d.fetcher(clock)
	id := d.srv.URL + "/client.json"
	ctx := context.Background()

	doc, err := f.Fetch(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if doc.ClientName != "Test App" || doc.ClientID != id || len(doc.RedirectURIs) != 1 {
		t.Fatalf("doc = %+v", doc)
	}
	if _, err := f.Fetch(ctx, id); err != nil || d.hits.Load() != 1 {
		t.Fatalf("second fetch: %v, %d requests; want it from the cache", err, d.hits.Load())
	}
	clock.Advance(5 * time.Minute) // the default lifetime without Cache-Control
	f.Fetch(ctx, id)
	if d.hits.Load() != 2 {
		t.Fatalf("after the default 5 minutes, %d requests; want a refetch", d.hits.Load())
	}

	tests := []struct {
		header  string
		fresh   time.Duration // still cached this long after the fetch
		refetch time.Duration // refetched this long after
	}{
		{"max-age=3600", 3600*time.Second - time.Millisecond, 3600 * time.Second},
		{"public, max-age=10", 59 * time.Second, time.Minute},               // raised to the 1-minute floor
		{"max-age=604800", 24*time.Hour - time.Millisecond, 24 * time.Hour}, // lowered to the 1-day ceiling
		{"no-store", -1, 0},
		{"max-age=0", -1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.header, func(t *testing.T) {
			cacheControl.Store(tc.header)
			clock := storetest.NewClock()
			f := d.fetcher(clock)
			f.Fetch(ctx, id)
			before := d.hits.Load()
			if tc.fresh >= 0 {
				clock.Advance(tc.fresh)
				f.Fetch(ctx, id)
				if d.hits.Load() != before {
					t.Fatalf("refetched after %v", tc.fresh)
				}
				clock.Advance(tc.refetch - tc.fresh)
			}
			f.Fetch(ctx, id)
			if d.hits.Load() != before+1 {
				t.Fatalf("not refetched after %v", tc.refetch)
			}
		})
	}
}

func TestDocumentRefusals(t *testing.T) {
	tests := []struct {
		name    string
		handler func(w http.ResponseWriter, r *http.Request, self string)
		want    string
	}{
		{"client_id differs", func(w http.ResponseWriter, r *http.Request, self string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"client_id":"https://evil.example/client.json","redirect_uris":[]}`)
		}, "must be exactly its own URL"},
		{"redirect", func(w http.ResponseWriter, r *http.Request, self string) {
			http.Redirect(w, r, "https://127.0.0.1/elsewhere", http.StatusFound)
		}, "redirects"},
		{"not found", func(w http.ResponseWriter, r *http.Request, self string) {
			http.NotFound(w, r)
		}, "404"},
		{"html", func(w http.ResponseWriter, r *http.Request, self string) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>")
		}, "not JSON"},
		{"broken json", func(w http.ResponseWriter, r *http.Request, self string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"client_id":`)
		}, "not valid JSON"},
		{"one byte too large", padded(cimd.DefaultMaxBytes + 1), "larger than 65536 bytes"},
		{"slow", func(w http.ResponseWriter, r *http.Request, self string) {
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
			}
		}, "did not arrive within"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDocServer(t, tc.handler)
			_, err := d.fetcher(storetest.NewClock()).Fetch(context.Background(), d.srv.URL+"/client.json")
			var refusal *cimd.Error
			if !errors.As(err, &refusal) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a refusal saying %q", err, tc.want)
			}
		})
	}
	t.Run("exactly the size limit", func(t *testing.T) {
		d := newDocServer(t, padded(cimd.DefaultMaxBytes))
		if _, err := d.fetcher(storetest.NewClock()).Fetch(context.Background(), d.srv.URL+"/client.json"); err != nil {
			t.Fatalf("a document of exactly %d bytes: %v", cimd.DefaultMaxBytes, err)
		}
	})
}

// padded serves a valid document of exactly size bytes.
func padded(size int) func(w http.ResponseWriter, r *http.Request, self string) {
	return func(w http.ResponseWriter, r *http.Request, self string) {
		w.Header().Set("Content-Type", "application/json")
		head, _ := json.Marshal(self)
		prefix := `{"client_id":` + string(head) + `,"redirect_uris":["http://127.0.0.1/cb"],"client_name":"`
		suffix := `"}`
		fmt.Fprint(w, prefix+strings.Repeat("x", size-len(prefix)-len(suffix))+suffix)
	}
}

func TestURLRefusals(t *testing.T) {
	f := cimd.New(cimd.Config{})
	tests := []struct{ id, want string }{
		{"http://app.example/client.json", "https"},
		{"https://app.example", "must have a path"},
		{"https://app.example/", "must have a path"},
		{"https://user:pw@app.example/c.json", "credentials"},
		{"https://app.example/c.json#frag", "fragment"},
		{"https://app.example/a/../c.json", "path segments"},
		{"https://app.example/" + strings.Repeat("a", cimd.MaxURLLength), "longer than"},
		{"https://%zz/c.json", "not a valid URL"},
	}
	for _, tc := range tests {
		t.Run(tc.id[:min(len(tc.id), 40)], func(t *testing.T) {
			_, err := f.Fetch(context.Background(), tc.id)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestAddressRefusals(t *testing.T) {
	resolveTo := func(addrs ...string) func(context.Context, string) ([]netip.Addr, error) {
		return func(context.Context, string) ([]netip.Addr, error) {
			var out []netip.Addr
			for _, a := range addrs {
				out = append(out, netip.MustParseAddr(a))
			}
			return out, nil
		}
	}
	tests := []struct {
		name          string
		id            string
		resolve       []string
		allowLoopback bool
		block         string // what the log names
	}{
		{"loopback literal outside test mode", "https://127.0.0.1/c.json", nil, false, "Loopback"},
		{"name resolving to loopback", "https://app.example/c.json", []string{"127.0.0.1"}, false, "Loopback"},
		{"IPv6 loopback", "https://[::1]/c.json", nil, false, "Loopback Address"},
		{"private", "https://app.example/c.json", []string{"10.1.2.3"}, true, "Private-Use"},
		{"private among public", "https://app.example/c.json", []string{"93.184.216.34", "192.168.1.1"}, true, "Private-Use"},
		{"cloud metadata", "https://169.254.169.254/latest/c.json", nil, true, "Link Local"},
		{"IPv4-mapped private", "https://[::ffff:10.0.0.1]/c.json", nil, true, "Private-Use"},
		{"IPv6 unique local", "https://app.example/c.json", []string{"fd00::1"}, true, "Unique-Local"},
		{"carrier NAT", "https://app.example/c.json", []string{"100.64.0.1"}, true, "Shared Address Space"},
		{"NAT64 of a private address", "https://app.example/c.json", []string{"64:ff9b::a00:1"}, true, "carrying 10.0.0.1"},
		{"unspecified", "https://0.0.0.0/c.json", nil, true, "This host on this network"},
		{"IPv4-compatible IPv6 of loopback", "https://[::127.0.0.1]/c.json", nil, true, "2000::/3"},
		{"IPv6 site-local", "https://app.example/c.json", []string{"fec0::1"}, true, "2000::/3"},
		{"IPv6 site-local, last address", "https://[feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]/c.json", nil, true, "2000::/3"},
		// Documentation, benchmarking and retired blocks, which the
		// predicates of net/netip do not name.
		{"TEST-NET-1", "https://app.example/c.json", []string{"192.0.2.2"}, true, "TEST-NET-1"},
		{"TEST-NET-2", "https://198.51.100.7/c.json", nil, true, "TEST-NET-2"},
		{"TEST-NET-3", "https://app.example/c.json", []string{"203.0.113.9"}, true, "TEST-NET-3"},
		{"IPv6 documentation", "https://app.example/c.json", []string{"2001:db8::10"}, true, "Documentation"},
		{"6to4 relay anycast", "https://app.example/c.json", []string{"192.88.99.1"}, true, "6to4 Relay Anycast"},
		{"discard-only", "https://app.example/c.json", []string{"100::1"}, true, "Discard-Only"},
		{"Teredo of a documentation client", "https://app.example/c.json", []string{"2001:0:4136:e378:8000:63bf:3fff:fdd2"}, true, "TEREDO"},
		{"6to4 of a private address", "https://app.example/c.json", []string{"2002:a00:1::"}, true, "6to4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			f := cimd.New(cimd.Config{AllowLoopback: tc.allowLoopback, LookupNetIP: resolveTo(tc.resolve...), Timeout: time.Second,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			_, err := f.Fetch(context.Background(), tc.id)
			var refusal *cimd.Error
			if !errors.As(err, &refusal) || !strings.Contains(err.Error(), "does not resolve to a public address") {
				t.Fatalf("err = %v, want a refusal saying the address is not public", err)
			}
			// Anyone may send a client_id: the refusal must not map the
			// server's internal names to their addresses or kinds for them.
			for _, a := range tc.resolve {
				if strings.Contains(err.Error(), a) {
					t.Fatalf("err = %v reveals the resolved address %s", err, a)
				}
			}
			for _, kind := range []string{"loopback", "private", "link-local", "reserved", "documentation", "unicast", "TEST-NET", "Teredo", "6to4"} {
				if strings.Contains(strings.ToLower(err.Error()), strings.ToLower(kind)) {
					t.Fatalf("err = %v says which kind of address it is (%s)", err, kind)
				}
			}
			if !strings.Contains(logs.String(), tc.block) {
				t.Errorf("the log does not name the block %q: %s", tc.block, logs.String())
			}
		})
	}
}

func TestIsURL(t *testing.T) {
	for id, want := range map[string]bool{
		"https://app.example/c.json": true,
		"http://app.example/c.json":  false,
		"3f2a-client":                false,
	} {
		if cimd.IsURL(id) != want {
			t.Errorf("IsURL(%q) = %v", id, !want)
		}
	}
}

func TestConcurrentFetchesAreBounded(t *testing.T) {
	release := make(chan struct{})
	var inFlight, peak atomic.Int32
	d := newDocServer(t, func(w http.ResponseWriter, r *http.Request, self string) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		w.Header().Set("Cache-Control", "no-store")
		jsonDoc("")(w, r, self)
	})
	f := cimd.New(cimd.Config{AllowLoopback: true, RootCAs: d.roots, Timeout: 5 * time.Second, MaxConcurrent: 2})
	errs := make(chan error, 5)
	for i := range 5 {
		go func() {
			_, err := f.Fetch(context.Background(), fmt.Sprintf("%s/c%d.json", d.srv.URL, i))
			errs <- err
		}()
	}
	// Wait for the limit to fill, and a little more for any excess to show.
	// The second wait stays a sleep: it gives a third fetch, which must not
	// start, the time to start; there is no event to wait for.
	for deadline := time.Now().Add(5 * time.Second); inFlight.Load() < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	close(release)
	for range 5 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if peak.Load() != 2 {
		t.Fatalf("%d fetches ran at once, want the limit of 2", peak.Load())
	}
}
