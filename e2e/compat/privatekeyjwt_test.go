package compat

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/url"
	"slices"
	"testing"
	"time"
)

// ChatGPT's client metadata document declares private_key_jwt with a
// jwks_uri (docs/clients.md, checklist B7): these helpers publish such
// a document and sign its assertions as ChatGPT's backend does (RS256).

// publish serves v as JSON at path on the document server.
func (s *cimdServer) publish(path string, v any) string {
	b, _ := json.Marshal(v)
	s.mu.Lock()
	s.docs[path] = b
	s.mu.Unlock()
	return s.base + path
}

// jwtClient is a private_key_jwt client: its document's URL and its key.
type jwtClient struct {
	id  string
	key *rsa.PrivateKey
	kid string
}

// newJWTClient publishes a ChatGPT-shaped document and key set.
func newJWTClient(t *testing.T, docs *cimdServer, redirect string) jwtClient {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	c := jwtClient{key: key, kid: "chatgpt-" + randomID()}
	jwks := docs.publish("/oauth/jwks.json", map[string]any{"keys": []map[string]any{{"kty": "RSA", "kid": c.kid, "use": "sig", "alg": "RS256",
		"n": b64u(key.N.Bytes()), "e": b64u(big.NewInt(int64(key.E)).Bytes())}}})
	c.id = docs.add("/oauth/client.json", map[string]any{"client_name": "ChatGPT", "redirect_uris": []string{redirect},
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"token_endpoint_auth_method": "private_key_jwt", "jwks_uri": jwks})
	return c
}

func b64u(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// assertion signs a client assertion for aud, valid five minutes.
func (c jwtClient) assertion(aud string) string {
	head, _ := json.Marshal(map[string]any{"alg": "RS256", "kid": c.kid, "typ": "JWT"})
	now := time.Now()
	body, _ := json.Marshal(map[string]any{"iss": c.id, "sub": c.id, "aud": aud, "iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(), "jti": randomID() + randomID()})
	input := b64u(head) + "." + b64u(body)
	sum := sha256.Sum256([]byte(input))
	sig, _ := rsa.SignPKCS1v15(rand.Reader, c.key, crypto.SHA256, sum[:])
	return input + "." + b64u(sig)
}

// tokenWithAssertion posts form to the token endpoint with assertion.
func (e *env) tokenWithAssertion(t *testing.T, c jwtClient, assertion string, form url.Values) reply {
	t.Helper()
	form = cloneValues(form)
	form.Set("client_id", c.id)
	form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
	form.Set("client_assertion", assertion)
	return e.do(t, req{method: "POST", url: "/oauth/token", body: form.Encode(),
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "User-Agent": "Python/3.12 aiohttp/3.13.3"}})
}

// TestChatGPTPrivateKeyJWT replays ChatGPT's CIMD sign-in with
// private_key_jwt, and the assertions a careful server must refuse.
func TestChatGPTPrivateKeyJWT(t *testing.T) {
	e := setup(t)
	const callback = "https://chatgpt.com/connector_platform_oauth_redirect"
	docs := newCIMDServer(t)
	c := newJWTClient(t, docs, callback)

	t.Run("ChatGPT_MetadataOffersPrivateKeyJWT_apps-sdk-auth", func(t *testing.T) {
		r := e.do(t, req{method: "GET", url: "/.well-known/oauth-authorization-server"})
		var as struct {
			Methods []string `json:"token_endpoint_auth_methods_supported"`
			Algs    []string `json:"token_endpoint_auth_signing_alg_values_supported"`
		}
		if json.Unmarshal(r.body, &as) != nil || !slices.Contains(as.Methods, "private_key_jwt") || !slices.Contains(as.Algs, "RS256") {
			t.Fatalf("AS metadata does not offer private_key_jwt with RS256: %s", r.body)
		}
	})
	var refresh string
	first := c.assertion(e.base + "/oauth/token")
	t.Run("ChatGPT_CIMDPrivateKeyJWT_apps-sdk-auth", func(t *testing.T) {
		p := newPKCE()
		code := e.code(t, "/oauth/authorize", authRequest(app{id: c.id}, callback, p, "oauth_s_"+randomID(), url.Values{"resource": {e.base + "/mcp"}}))
		tk := wantTokens(t, e.tokenWithAssertion(t, c, first, url.Values{"grant_type": {"authorization_code"}, "code": {code},
			"redirect_uri": {callback}, "code_verifier": {p.verifier}, "resource": {e.base + "/mcp"}}))
		e.wantWorks(t, tk.Access)
		refresh = tk.Refresh
	})
	t.Run("ChatGPT_AssertionReplayRefused_RFC7523", func(t *testing.T) {
		needs(t, refresh != "", "the sign-in above")
		wantOAuthError(t, e.tokenWithAssertion(t, c, first, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}), 401, "invalid_client")
	})
	t.Run("ChatGPT_AssertionForAnotherAudienceRefused_RFC7523", func(t *testing.T) {
		needs(t, refresh != "", "the sign-in above")
		wantOAuthError(t, e.tokenWithAssertion(t, c, c.assertion("https://elsewhere.example/token"),
			url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}), 401, "invalid_client")
	})
	t.Run("ChatGPT_NoAssertionRefused_RFC7523", func(t *testing.T) {
		needs(t, refresh != "", "the sign-in above")
		r := e.do(t, req{method: "POST", url: "/oauth/token", body: url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {c.id}}.Encode(),
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
		wantOAuthError(t, r, 401, "invalid_client")
	})
	t.Run("ChatGPT_RefreshWithAssertionToIssuer_apps-sdk-auth", func(t *testing.T) {
		needs(t, refresh != "", "the sign-in above")
		tk := wantTokens(t, e.tokenWithAssertion(t, c, c.assertion(e.base), url.Values{"grant_type": {"refresh_token"},
			"refresh_token": {refresh}, "resource": {e.base + "/mcp"}}))
		e.wantWorks(t, tk.Access)
	})
}
