package oauth_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drivemail/drivemail/oauth/cimd"
)

// keyHost publishes client metadata documents and key sets over TLS, as
// chatgpt.com/oauth/client.json and …/jwks.json are.
type keyHost struct {
	srv  *httptest.Server
	mu   sync.Mutex
	keys []map[string]any // the published JWKS
	hits int              // key set fetches
}

func newKeyHost(t *testing.T) *keyHost {
	k := &keyHost{}
	k.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/oauth/client.json":
			json.NewEncoder(w).Encode(map[string]any{"client_id": k.srv.URL + r.URL.Path, "client_name": "ChatGPT",
				"redirect_uris": []string{"http://127.0.0.1/cb"}, "grant_types": []string{"authorization_code", "refresh_token"},
				"token_endpoint_auth_method": "private_key_jwt", "jwks_uri": k.srv.URL + "/oauth/jwks.json"})
		case "/oauth/jwks.json":
			k.mu.Lock()
			k.hits++
			keys := append([]map[string]any(nil), k.keys...)
			k.mu.Unlock()
			json.NewEncoder(w).Encode(map[string]any{"keys": keys})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(k.srv.Close)
	return k
}

func (k *keyHost) publish(keys ...map[string]any) {
	k.mu.Lock()
	k.keys = keys
	k.mu.Unlock()
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func rsaJWK(kid string, key *rsa.PrivateKey) map[string]any {
	return map[string]any{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
		"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes())}
}

func ecJWK(kid string, key *ecdsa.PrivateKey) map[string]any {
	raw, _ := key.PublicKey.Bytes() // 0x04 || X || Y
	return map[string]any{"kty": "EC", "kid": kid, "crv": "P-256", "x": b64(raw[1:33]), "y": b64(raw[33:])}
}

// signJWT signs claims with key under alg, naming kid.
func signJWT(t *testing.T, alg, kid string, key crypto.Signer, claims map[string]any) string {
	t.Helper()
	head, _ := json.Marshal(map[string]any{"alg": alg, "kid": kid, "typ": "JWT"})
	body, _ := json.Marshal(claims)
	input := b64(head) + "." + b64(body)
	sum := sha256.Sum256([]byte(input))
	var sig []byte
	switch k := key.(type) {
	case *rsa.PrivateKey:
		sig, _ = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
	case *ecdsa.PrivateKey:
		r, s, _ := ecdsa.Sign(rand.Reader, k, sum[:])
		sig = append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	}
	return input + "." + b64(sig)
}

// TestPrivateKeyJWTClient: a client metadata document client that uses
// private_key_jwt (ChatGPT's) signs in, authenticates with an RS256 or
// ES256 assertion from its jwks_uri, and is refused every assertion a
// careful server refuses: replayed, for another audience, expired, too
// long-lived, for another client, without jti, badly signed, or with an
// algorithm it does not take.
func TestPrivateKeyJWTClient(t *testing.T) {
	host := newKeyHost(t)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	host.publish(rsaJWK("r1", rsaKey), ecJWK("e1", ecKey))
	var cimdNow struct {
		sync.Mutex
		t time.Time
	}
	cimdNow.t = time.Now()
	fetcher := cimd.New(cimd.Config{AllowLoopback: true, RootCAs: rootsOf(host.srv), Now: func() time.Time {
		cimdNow.Lock()
		defer cimdNow.Unlock()
		return cimdNow.t
	}})
	h := newHarness(t, options{cimd: fetcher})
	clientID := host.srv.URL + "/oauth/client.json"
	tokenURL := h.base + "/oauth/token"

	claims := func(mut func(map[string]any)) map[string]any {
		now := h.clock.Now()
		c := map[string]any{"iss": clientID, "sub": clientID, "aud": tokenURL, "iat": now.Unix(),
			"exp": now.Add(5 * time.Minute).Unix(), "jti": "jti-" + randomish() + time.Now().Format(".000000000")}
		if mut != nil {
			mut(c)
		}
		return c
	}
	withAssertion := func(form url.Values, jwt string) url.Values {
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", jwt)
		return form
	}

	// Sign in, and exchange the code with an RS256 assertion.
	a := h.newAuthRequest(clientID)
	a.redirectURI = "http://127.0.0.1:9999/cb"
	code := newBrowser(t).signIn(h, a.url(h.base)).Query().Get("code")
	exchange := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {clientID},
		"redirect_uri": {a.redirectURI}, "code_verifier": {a.verifier}, "resource": {a.resource}}
	first := signJWT(t, "RS256", "r1", rsaKey, claims(nil))
	status, tok := h.tokenRequest(withAssertion(exchange, first))
	if status != http.StatusOK || str(tok, "refresh_token") == "" {
		t.Fatalf("exchange with an RS256 assertion: %d %v", status, tok)
	}
	refresh := func() url.Values {
		return url.Values{"grant_type": {"refresh_token"}, "refresh_token": {str(tok, "refresh_token")}}
	}

	// A replay of the same assertion is refused, even for another grant.
	status, body := h.tokenRequest(withAssertion(refresh(), first))
	wantTokenError(t, status, body, http.StatusUnauthorized, "invalid_client", "already used")

	refused := []struct {
		name string
		jwt  string
		says string
	}{
		{"another audience", signJWT(t, "RS256", "r1", rsaKey, claims(func(c map[string]any) { c["aud"] = "https://elsewhere.example/token" })), "aud"},
		{"expired", signJWT(t, "RS256", "r1", rsaKey, claims(func(c map[string]any) { c["exp"] = h.clock.Now().Add(-2 * time.Minute).Unix() })), "expired"},
		{"no exp", signJWT(t, "RS256", "r1", rsaKey, claims(func(c map[string]any) { delete(c, "exp") })), "no exp"},
		{"a day long", signJWT(t, "RS256", "r1", rsaKey, claims(func(c map[string]any) { c["exp"] = h.clock.Now().Add(24 * time.Hour).Unix() })), "more than an hour"},
		{"iat in the future", signJWT(t, "RS256", "r1", rsaKey, claims(func(c map[string]any) { c["iat"] = h.clock.Now().Add(time.Hour).Unix() })), "future"},
		{"another client's", signJWT(t, "RS256", "r1", rsaKey, claims(func(c map[string]any) { c["sub"] = "https://evil.example/client.json" })), "iss and sub"},
		{"no jti", signJWT(t, "RS256", "r1", rsaKey, claims(func(c map[string]any) { delete(c, "jti") })), "jti"},
		{"signed by a key not published", signJWT(t, "RS256", "r1", otherKey, claims(nil)), "does not verify"},
		{"an unknown key id", signJWT(t, "RS256", "zz", otherKey, claims(nil)), "does not verify"},
		{"HS256", strings.Replace(signJWT(t, "RS256", "r1", rsaKey, claims(nil)), b64([]byte(`{"alg":"RS256"`)), b64([]byte(`{"alg":"HS256"`)), 1), ""},
		{"alg none", b64([]byte(`{"alg":"none"}`)) + "." + b64(mustJSON(claims(nil))) + ".", "none"},
		{"not a JWT", "abc", "three"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			status, body := h.tokenRequest(withAssertion(refresh(), tc.jwt))
			wantTokenError(t, status, body, http.StatusUnauthorized, "invalid_client", tc.says)
		})
	}
	// Without an assertion, the client is told how it authenticates.
	status, body = h.tokenRequest(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {str(tok, "refresh_token")}, "client_id": {clientID}})
	wantTokenError(t, status, body, http.StatusUnauthorized, "invalid_client", "private_key_jwt")
	// An assertion beside a secret is one way too many.
	status, body = h.tokenRequest(withAssertion(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {str(tok, "refresh_token")},
		"client_secret": {"x"}}, signJWT(t, "RS256", "r1", rsaKey, claims(nil))))
	wantTokenError(t, status, body, http.StatusBadRequest, "invalid_request", "not both")

	// ES256, aud as the issuer in a list: accepted.
	status, tok = h.tokenRequest(withAssertion(refresh(), signJWT(t, "ES256", "e1", ecKey, claims(func(c map[string]any) { c["aud"] = []string{"x", h.base} }))))
	if status != http.StatusOK {
		t.Fatalf("refresh with an ES256 assertion to the issuer: %d %v", status, tok)
	}

	// exp at the edges: an hour (and the minute of skew) ahead at most,
	// and expired once the minute of skew is over.
	for _, edge := range []struct {
		exp time.Duration
		ok  bool
	}{{61 * time.Minute, true}, {61*time.Minute + time.Second, false}, {-59 * time.Second, true}, {-60 * time.Second, false}} {
		status, body := h.tokenRequest(withAssertion(refresh(), signJWT(t, "RS256", "r1", rsaKey, claims(func(c map[string]any) { c["exp"] = h.clock.Now().Add(edge.exp).Unix() }))))
		if (status == http.StatusOK) != edge.ok {
			t.Errorf("exp now%+v: %d %v", edge.exp, status, body)
		}
		if status == http.StatusOK {
			tok = body
		}
	}

	// A rotated key: an unknown key id fetches the set again, at most once
	// a minute, so a client's new key works within a minute.
	newKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	host.publish(rsaJWK("r2", newKey), ecJWK("e1", ecKey))
	cimdNow.Lock()
	cimdNow.t = cimdNow.t.Add(2 * time.Minute)
	cimdNow.Unlock()
	before := host.hits
	status, tok = h.tokenRequest(withAssertion(refresh(), signJWT(t, "RS256", "r2", newKey, claims(nil))))
	if status != http.StatusOK || host.hits != before+1 {
		t.Fatalf("assertion with a rotated key: %d %v after %d fetches", status, tok, host.hits-before)
	}
	for range 3 {
		h.tokenRequest(withAssertion(refresh(), signJWT(t, "RS256", "nope", newKey, claims(nil))))
	}
	if host.hits != before+1 {
		t.Fatalf("unknown key ids made %d fetches within a minute, want none", host.hits-before-1)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestPrivateKeyJWTDocumentNeedsKeys: a document asking for
// private_key_jwt without a jwks_uri cannot be used.
func TestPrivateKeyJWTDocumentNeedsKeys(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"client_id": srv.URL + r.URL.Path, "redirect_uris": []string{"http://127.0.0.1/cb"},
			"token_endpoint_auth_method": "private_key_jwt"})
	}))
	t.Cleanup(srv.Close)
	h := newHarness(t, options{cimd: cimd.New(cimd.Config{AllowLoopback: true, RootCAs: rootsOf(srv)})})
	a := h.newAuthRequest(srv.URL + "/client.json")
	a.redirectURI = "http://127.0.0.1:9999/cb"
	assertErrorPage(t, newBrowser(t).get(a.url(h.base)), http.StatusBadRequest, "jwks_uri")
}
