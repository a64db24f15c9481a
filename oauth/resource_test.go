package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A resource indicator spelled in another but equivalent form (RFC 3986
// §6.2.2–6.2.3: scheme and host in any case, the default port written
// out) names drivemail's resource at every step; another path does not.
func TestResourceComparedInCanonicalForm(t *testing.T) {
	h := newHarness(t, options{})
	spelled := "HTTP://" + strings.TrimPrefix(h.base, "http://") + "/mcp"

	a := h.newAuthRequest(h.publicClient())
	a.resource = spelled
	code := h.codeFor(a)
	status, tok := h.exchange(a, code)
	if status != http.StatusOK {
		t.Fatalf("the code exchange with resource %s: %d %v", spelled, status, tok)
	}
	if c, _, _ := h.call(str(tok, "access_token")); c != http.StatusOK {
		t.Fatalf("the access token issued for %s: %d, want 200", spelled, c)
	}
	status, tok2 := h.tokenRequest(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {str(tok, "refresh_token")},
		"client_id": {a.clientID}, "resource": {spelled}})
	if status != http.StatusOK {
		t.Fatalf("a refresh with resource %s: %d %v", spelled, status, tok2)
	}

	for _, other := range []string{h.base + "/MCP", h.base + "/mcp//", h.base + "/mcp?x=1", h.base + "/mcp#top", h.base + "/./mcp"} {
		a := h.newAuthRequest(a.clientID)
		a.resource = other
		assertErrorPage(t, newBrowser(t).get(a.url(h.base)), http.StatusBadRequest, "issues tokens only for "+h.base+"/mcp")
	}
}
