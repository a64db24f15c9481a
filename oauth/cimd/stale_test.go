package cimd_test

import (
	"context"
	"errors"
	"fmt"
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

// A published document that turns into a 404, a 503, an HTML page or a
// wrong document for a while is answered with the last good copy, for up
// to a day; without one, the failure is the publisher's (not Server()).
func TestLastGoodCopyStandsInForAFailingDocument(t *testing.T) {
	var mode atomic.Value
	mode.Store("good")
	d := newDocServer(t, func(w http.ResponseWriter, r *http.Request, self string) {
		switch mode.Load().(string) {
		case "good":
			w.Header().Set("Cache-Control", "max-age=60")
			jsonDoc("")(w, r, self)
		case "404":
			http.NotFound(w, r)
		case "503":
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
		case "html":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>Sign in</html>")
		case "wrong":
			jsonDoc("")(w, r, "https://other.example/c.json")
		}
	})
	clock := storetest.NewClock()
	f := d.fetcher(clock)
	id := d.srv.URL + "/client.json"
	ctx := context.Background()
	if _, err := f.Fetch(ctx, id); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"404", "503", "html", "wrong"} {
		mode.Store(m)
		clock.Advance(time.Minute) // past the copy's freshness and the failure memory
		hits := d.hits.Load()
		doc, err := f.Fetch(ctx, id)
		if err != nil || doc.ClientName != "Test App" {
			t.Fatalf("the document answering %s: %+v, %v; want the last good copy", m, doc, err)
		}
		if d.hits.Load() != hits+1 {
			t.Fatalf("the document answering %s was not asked again", m)
		}
	}
	clock.Advance(24 * time.Hour) // past the copy's day of standing in
	_, err := f.Fetch(ctx, id)
	var refusal *cimd.Error
	if !errors.As(err, &refusal) || refusal.Server() || !strings.Contains(err.Error(), "client_id") {
		t.Fatalf("a day on, still failing: %v; want the publisher's refusal", err)
	}
	mode.Store("good")
	clock.Advance(30 * time.Second)
	if _, err := f.Fetch(ctx, id); err != nil {
		t.Fatalf("the document back: %v", err)
	}
}

// A failed fetch is remembered for 30 seconds: requests meanwhile get the
// same refusal and cost the publisher (and drivemail) nothing.
func TestFailuresAreRememberedBriefly(t *testing.T) {
	d := newDocServer(t, func(w http.ResponseWriter, r *http.Request, self string) { http.NotFound(w, r) })
	clock := storetest.NewClock()
	f := d.fetcher(clock)
	id := d.srv.URL + "/client.json"
	for range 3 {
		if _, err := f.Fetch(context.Background(), id); err == nil || !strings.Contains(err.Error(), "404") {
			t.Fatalf("err = %v, want the 404", err)
		}
	}
	if d.hits.Load() != 1 {
		t.Fatalf("%d fetches within the failure's memory, want 1", d.hits.Load())
	}
	clock.Advance(30*time.Second - time.Millisecond)
	f.Fetch(context.Background(), id)
	if d.hits.Load() != 1 {
		t.Fatal("refetched before 30 seconds")
	}
	clock.Advance(time.Millisecond)
	f.Fetch(context.Background(), id)
	if d.hits.Load() != 2 {
		t.Fatal("not refetched after 30 seconds")
	}
}

// A host that moves to a forbidden address loses its good copy at once:
// the copy must not keep a document alive that now points inward.
func TestAddressRefusalDropsTheGoodCopy(t *testing.T) {
	d := newDocServer(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		jsonDoc("")(w, r, "https://"+r.Host+r.URL.Path)
	})
	port := d.srv.URL[strings.LastIndex(d.srv.URL, ":")+1:]
	var addr atomic.Value
	addr.Store("127.0.0.1")
	clock := storetest.NewClock()
	f := cimd.New(cimd.Config{AllowLoopback: true, RootCAs: d.roots, Timeout: time.Second, Now: clock.Now,
		LookupNetIP: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr(addr.Load().(string))}, nil
		}})
	id := "https://example.com:" + port + "/client.json"
	// The test server's certificate names 127.0.0.1 and example.com.
	if _, err := f.Fetch(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	addr.Store("10.0.0.7")
	clock.Advance(5 * time.Minute)
	_, err := f.Fetch(context.Background(), id)
	if err == nil || !strings.Contains(err.Error(), "not resolve to a public address") {
		t.Fatalf("after the host moved to a private address: %v, want the refusal", err)
	}
}

// FetchLimited asks before it goes to the network, never for a cached
// document; its refusal is the server's own.
func TestFetchLimited(t *testing.T) {
	d := newDocServer(t, jsonDoc(""))
	f := d.fetcher(storetest.NewClock())
	var asked int
	allow := func(context.Context) error { asked++; return errors.New("too many fetches for this address") }
	_, err := f.FetchLimited(context.Background(), d.srv.URL+"/a.json", allow)
	var refusal *cimd.Error
	if !errors.As(err, &refusal) || !refusal.Server() || asked != 1 || d.hits.Load() != 0 {
		t.Fatalf("refused by allow: %v (server %v), asked %d, fetched %d; want the server's refusal and no fetch", err, refusal != nil && refusal.Server(), asked, d.hits.Load())
	}
	if _, err := f.Fetch(context.Background(), d.srv.URL+"/a.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.FetchLimited(context.Background(), d.srv.URL+"/a.json", allow); err != nil || asked != 1 {
		t.Fatalf("a cached document: %v, asked %d; want it without asking", err, asked)
	}
}

// With AllowLoopback (tests, serve --demo) a document may be served over
// plain http on a loopback host, so the flow can be tried on one machine;
// without it such a client_id is no metadata document at all.
func TestLoopbackHTTPDocuments(t *testing.T) {
	var self string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jsonDoc("")(w, r, self+r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	self = srv.URL
	id := srv.URL + "/client.json"
	demo := cimd.New(cimd.Config{AllowLoopback: true, Timeout: time.Second})
	if !demo.IsURL(id) {
		t.Fatalf("IsURL(%s) with AllowLoopback = false", id)
	}
	if doc, err := demo.Fetch(context.Background(), id); err != nil || doc.ClientID != id {
		t.Fatalf("a loopback http document: %+v, %v", doc, err)
	}
	strict := cimd.New(cimd.Config{Timeout: time.Second})
	if strict.IsURL(id) {
		t.Fatal("an http client_id is a metadata document outside test mode")
	}
	if _, err := strict.Fetch(context.Background(), id); err == nil || !strings.Contains(err.Error(), "https") {
		t.Fatalf("an http document outside test mode: %v, want it refused", err)
	}
	if demo.IsURL("http://app.example/client.json") {
		t.Fatal("AllowLoopback made an http URL on a public host a metadata document")
	}
}

// TestLoopbackDocumentsOnlyForLocalCallers: with AllowLoopback (serve
// --demo), a document on this machine is fetched for a caller on this
// machine only. A caller from elsewhere is refused it, by https or
// plain http, fetched or cached, and so is a loopback key set: a demo
// listening beyond loopback must not fetch from its own machine for
// strangers (another process's /metrics, say).
func TestLoopbackDocumentsOnlyForLocalCallers(t *testing.T) {
	d := newDocServer(t, jsonDoc(""))
	f := d.fetcher(storetest.NewClock())
	id := d.srv.URL + "/client.json"
	remote := cimd.FromRemoteCaller(context.Background())
	if _, err := f.Fetch(remote, id); err == nil || !strings.Contains(err.Error(), "public address") {
		t.Fatalf("a loopback document for a remote caller: %v, want it refused", err)
	}
	if d.hits.Load() != 0 {
		t.Fatalf("the document was requested %d times for a remote caller", d.hits.Load())
	}
	if _, err := f.Fetch(context.Background(), id); err != nil {
		t.Fatalf("the same document for a local caller: %v", err)
	}
	if _, err := f.Fetch(remote, id); err == nil || !strings.Contains(err.Error(), "public address") {
		t.Fatalf("the cached loopback document for a remote caller: %v, want it refused", err)
	}
	if _, err := f.Keys(remote, d.srv.URL+"/jwks.json", false); err == nil || !strings.Contains(err.Error(), "public address") {
		t.Fatalf("a loopback key set for a remote caller: %v, want it refused", err)
	}

	var self string
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jsonDoc("")(w, r, self+r.URL.Path)
	}))
	t.Cleanup(plain.Close)
	self = plain.URL
	if _, err := f.Fetch(remote, plain.URL+"/client.json"); err == nil || !strings.Contains(err.Error(), "public address") {
		t.Fatalf("an http loopback document for a remote caller: %v, want it refused", err)
	}
	if _, err := f.Fetch(context.Background(), plain.URL+"/client.json"); err != nil {
		t.Fatalf("an http loopback document for a local caller: %v", err)
	}
}
