package oauth_test

import (
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/oauth/cimd"
)

func TestMetadataDocumentClients(t *testing.T) {
	docs := map[string]map[string]any{
		"/good.json":     {"client_name": "Doc App", "redirect_uris": []string{"http://127.0.0.1/cb"}},
		"/http.json":     {"redirect_uris": []string{"http://app.example/cb"}},
		"/secret.json":   {"redirect_uris": []string{"https://app.example/cb"}, "token_endpoint_auth_method": "client_secret_basic"},
		"/impostor.json": {"client_id": "https://claude.ai/oauth/client.json", "redirect_uris": []string{"https://app.example/cb"}},
		"/msdt.json":     {"redirect_uris": []string{"https://app.example/cb", "ms-msdt:/id PCWDiagnostic /skip force"}},
		"/override.json": {"client_name": "Claude\u202eedoC", "redirect_uris": []string{"https://app.example/cb"}},
	}
	var srv *httptest.Server
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if _, set := doc["client_id"]; !set {
			doc["client_id"] = srv.URL + r.URL.Path
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(doc)
	}))
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	h := newHarness(t, options{cimd: cimd.New(cimd.Config{AllowLoopback: true, RootCAs: roots})})

	a := h.newAuthRequest(srv.URL + "/good.json")
	a.redirectURI = "http://127.0.0.1:9999/cb"
	p := newBrowser(t).get(a.url(h.base))
	consentForm(t, p)
	if !strings.Contains(p.body, "identified by") || !strings.Contains(p.body, srv.URL+"/good.json") || strings.Contains(p.body, "cannot verify") {
		t.Fatalf("consent page for a document client should name its URL: %.600s", p.body)
	}

	for path, says := range map[string]string{
		"/http.json":     "non-loopback",
		"/secret.json":   "must use none",
		"/impostor.json": "must be exactly its own URL",
		"/msdt.json":     `the scheme &#34;ms-msdt&#34;, which drivemail does not send codes to`,
		"/override.json": "202E, a character that does not show as itself",
		"/missing.json":  "404",
	} {
		a := h.newAuthRequest(srv.URL + path)
		a.redirectURI = "https://app.example/cb"
		assertErrorPage(t, newBrowser(t).get(a.url(h.base)), http.StatusBadRequest, says)
	}
	// Outside test mode the same loopback document is refused: SSRF guard.
	strict := newHarness(t, options{})
	a = strict.newAuthRequest(srv.URL + "/good.json")
	a.redirectURI = "http://127.0.0.1:9999/cb"
	assertErrorPage(t, newBrowser(t).get(a.url(strict.base)), http.StatusBadRequest, "does not resolve to a public address")
}
