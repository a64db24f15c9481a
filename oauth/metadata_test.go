package oauth_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/oauth"
)

func getJSON(t *testing.T, u string) (map[string]any, http.Header) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out, resp.Header
}

func TestMetadata(t *testing.T) {
	h := newHarness(t, options{})
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		prm, hdr := getJSON(t, h.srv.URL+path)
		want := map[string]any{
			"resource": h.base + "/mcp", "authorization_servers": []any{h.base}, "scopes_supported": []any{"drivemail"},
			"bearer_methods_supported": []any{"header"}, "resource_name": "drivemail",
		}
		if !reflect.DeepEqual(prm, want) {
			t.Errorf("%s = %v, want %v", path, prm, want)
		}
		if hdr.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s is not readable cross-origin", path)
		}
	}
	as, _ := getJSON(t, h.srv.URL+"/.well-known/oauth-authorization-server")
	for k, want := range map[string]any{
		"issuer":                                           h.base,
		"authorization_endpoint":                           h.base + "/oauth/authorize",
		"token_endpoint":                                   h.base + "/oauth/token",
		"registration_endpoint":                            h.base + "/oauth/register",
		"revocation_endpoint":                              h.base + "/oauth/revoke",
		"response_types_supported":                         []any{"code"},
		"grant_types_supported":                            []any{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":                 []any{"S256"},
		"token_endpoint_auth_methods_supported":            []any{"none", "client_secret_post", "client_secret_basic", "private_key_jwt"},
		"token_endpoint_auth_signing_alg_values_supported": []any{"RS256", "ES256"},
		"scopes_supported":                                 []any{"drivemail"},
		"client_id_metadata_document_supported":            true,
		"authorization_response_iss_parameter_supported":   true,
	} {
		if !reflect.DeepEqual(as[k], want) {
			t.Errorf("%s = %v, want %v", k, as[k], want)
		}
	}
}

// Browsers send the consent form's Origin (and clients compare origins) in
// the canonical form: lower-case host, no default port. A base URL spelled
// otherwise must not make every consent "from another site".
func TestBaseURLIsCanonical(t *testing.T) {
	h := newHarness(t, options{})
	for base, want := range map[string]string{
		"https://Mail.Example.COM":      "https://mail.example.com",
		"https://mail.example.com:443":  "https://mail.example.com",
		"https://mail.example.com:8443": "https://mail.example.com:8443",
		"http://LOCALHOST:80":           "http://localhost",
		"http://[::1]:8080/":            "http://[::1]:8080",
	} {
		as, err := oauth.New(oauth.Config{BaseURL: base, Store: h.store, Google: h.ga})
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		if as.Issuer() != want || as.Resource() != want+"/mcp" {
			t.Errorf("%s: issuer %s, resource %s; want %s and %s/mcp", base, as.Issuer(), as.Resource(), want, want)
		}
	}
}

func TestBaseURLRules(t *testing.T) {
	h := newHarness(t, options{})
	for base, wantErr := range map[string]string{
		"https://mail.example.com":     "",
		"https://mail.example.com/":    "",
		"http://127.0.0.1:8080":        "",
		"http://localhost:8080":        "",
		"http://[::1]:8080":            "",
		"http://mail.example.com":      "plain http is allowed only on localhost",
		"https://mail.example.com/mcp": "origin only",
		"https://mail.example.com?x=1": "origin only",
		"ftp://mail.example.com":       "want an origin",
		"mail.example.com":             "want an origin",
	} {
		_, err := oauth.New(oauth.Config{BaseURL: base, Store: h.store, Google: h.ga})
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%s refused: %v", base, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%s: %v, want an error saying %q", base, err, wantErr)
		}
	}
}
