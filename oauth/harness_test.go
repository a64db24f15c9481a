package oauth_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/oauth"
	"github.com/drivemail/drivemail/oauth/cimd"
	"github.com/drivemail/drivemail/oauth/googleauth"
	"github.com/drivemail/drivemail/oauth/keyring"
	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/store/storetest"
)

// googleSide is the emulated Google every harness signs in with.
type googleSide struct {
	emu *emulator.Emulator
	srv *httptest.Server
}

func newGoogle(t *testing.T, autoApprove bool) *googleSide {
	t.Helper()
	return newGoogleWith(t, emulator.Config{AutoApprove: autoApprove})
}

func newGoogleWith(t *testing.T, cfg emulator.Config) *googleSide {
	t.Helper()
	emu, err := emulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	return &googleSide{emu: emu, srv: srv}
}

// options shape a harness.
type options struct {
	google    *googleSide
	store     store.Store
	clock     *storetest.Clock
	base      string // public origin; default the harness's own address
	drafts    bool
	readMail  bool
	driveFile bool // --drive-scope file
	cimd      *cimd.Fetcher
	accessTTL time.Duration
	regLimit  int
	authLimit int
	logger    *slog.Logger
	clientIP  func(*http.Request) string // default: the connection's address
	grace     time.Duration              // --refresh-grace; 0: off
	fetchLim  int                        // metadata fetches per address a minute
	demo      bool
}

// harness is one drivemail authorization server with a protected
// /whoami route and, optionally, more routes.
type harness struct {
	t      *testing.T
	opts   options
	clock  *storetest.Clock
	google *googleSide
	store  store.Store
	ga     *googleauth.Service
	as     *oauth.Server
	srv    *httptest.Server
	base   string
	mux    *http.ServeMux
	front  atomic.Pointer[http.Handler] // what the server runs: mux, or a balancer over replicas
}

var testSecret = bytes.Repeat([]byte{0x5a}, 32)

func newHarness(t *testing.T, opts options) *harness {
	t.Helper()
	h := &harness{t: t, opts: opts, clock: opts.clock, google: opts.google, store: opts.store}
	if h.clock == nil {
		h.clock = storetest.NewClock()
	}
	if h.google == nil {
		h.google = newGoogle(t, true)
	}
	if h.store == nil {
		h.store = storetest.SQLite(t).Open(t, store.Options{Now: h.clock.Now})
		t.Cleanup(func() { h.store.Close() })
	}
	h.mux = http.NewServeMux()
	h.setFront(h.mux)
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*h.front.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(h.srv.Close)
	h.base = opts.base
	if h.base == "" {
		h.base = "http://" + h.srv.Listener.Addr().String()
	}
	h.as = h.newAS(h.store)
	h.routes(h.mux, h.as)
	h.srv.Start()
	return h
}

func refreshRing(t *testing.T) *keyring.Ring {
	t.Helper()
	r, err := keyring.New([][]byte{testSecret}, oauth.RefreshKeyPurpose)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (h *harness) setFront(handler http.Handler) { h.front.Store(&handler) }

// newAS builds an authorization server on the harness's store and Google:
// a replica, when called again.
func (h *harness) newAS(st store.Store) *oauth.Server {
	h.t.Helper()
	ring, err := keyring.New([][]byte{testSecret}, googleauth.KeyPurpose)
	if err != nil {
		h.t.Fatal(err)
	}
	ga, err := googleauth.New(googleauth.Config{
		Endpoints: google.Endpoints{Base: h.google.srv.URL}, ClientID: "drivemail-test.apps.googleusercontent.com",
		ClientSecret: "test-secret", RedirectURL: h.base + "/oauth/callback", Drafts: h.opts.drafts, ReadMail: h.opts.readMail,
		DriveFile: h.opts.driveFile, Store: st, Keys: ring, Logger: h.opts.logger,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	h.ga = ga
	refreshKeys := refreshRing(h.t)
	as, err := oauth.New(oauth.Config{
		BaseURL: h.base, Store: st, Google: ga, CIMD: h.opts.cimd, Now: h.clock.Now,
		AccessTTL: h.opts.accessTTL, RegistrationLimit: h.opts.regLimit, AuthorizeLimit: h.opts.authLimit,
		Logger: h.opts.logger, ClientIP: h.opts.clientIP, RefreshGrace: h.opts.grace, Keys: refreshKeys,
		MetadataFetchLimit: h.opts.fetchLim, Demo: h.opts.demo,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return as
}

// routes mounts the server's routes as server/routes.go does, plus
// /whoami, a protected route that answers with the caller's identity.
func (h *harness) routes(mux *http.ServeMux, as *oauth.Server) {
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
		"/mcp/.well-known/oauth-protected-resource"} {
		mux.Handle(path, as.ProtectedResourceMetadata())
	}
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		mux.Handle(path, as.AuthorizationServerMetadata())
	}
	mux.Handle("/oauth/", as.Endpoints())
	for _, path := range []string{"/authorize", "/token", "/register"} {
		mux.Handle(path, as.Endpoints())
	}
	mux.Handle("/whoami", as.RequireBearer(http.HandlerFunc(whoami)))
}

func whoami(w http.ResponseWriter, r *http.Request) {
	u, ok := identity.FromContext(r.Context())
	if !ok {
		http.Error(w, "no user in context", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(u)
}

// call requests /whoami with a bearer token; it returns the status, the
// challenge and the user when allowed.
func (h *harness) call(token string) (int, string, identity.User) {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/whoami", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var u identity.User
	if resp.StatusCode == http.StatusOK {
		json.NewDecoder(resp.Body).Decode(&u)
	}
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), u
}

// register registers a public client by DCR and returns its id.
func (h *harness) register(meta map[string]any) (int, map[string]any) {
	h.t.Helper()
	body, _ := json.Marshal(meta)
	resp, err := http.Post(h.srv.URL+"/oauth/register", "application/json", bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

const testRedirect = "http://127.0.0.1/callback"

func (h *harness) publicClient() string {
	h.t.Helper()
	status, out := h.register(map[string]any{
		"client_name": "Test Client", "redirect_uris": []string{testRedirect, "https://app.example/cb"},
		"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none",
	})
	if status != http.StatusCreated {
		h.t.Fatalf("register: %d %v", status, out)
	}
	return out["client_id"].(string)
}

// authRequest is one client-side authorization attempt.
type authRequest struct {
	clientID, redirectURI, state, verifier, resource, scope string
	method                                                  string // PKCE method; "" omits PKCE
	extra                                                   url.Values
}

func (h *harness) newAuthRequest(clientID string) authRequest {
	return authRequest{clientID: clientID, redirectURI: "http://127.0.0.1:49152/callback", state: "st-" + randomish(),
		verifier: oauth2.GenerateVerifier(), resource: h.base + "/mcp", scope: oauth.Scope, method: "S256"}
}

func (a authRequest) url(base string) string {
	q := url.Values{"response_type": {"code"}, "client_id": {a.clientID}, "redirect_uri": {a.redirectURI}, "state": {a.state}}
	if a.resource != "" {
		q.Set("resource", a.resource)
	}
	if a.scope != "" {
		q.Set("scope", a.scope)
	}
	switch a.method {
	case "S256":
		q.Set("code_challenge", oauth2.S256ChallengeFromVerifier(a.verifier))
		q.Set("code_challenge_method", "S256")
	case "plain":
		q.Set("code_challenge", a.verifier)
		q.Set("code_challenge_method", "plain")
	}
	for k, v := range a.extra {
		q[k] = v
	}
	return base + "/oauth/authorize?" + q.Encode()
}

func randomish() string {
	sum := sha256.Sum256([]byte(time.Now().String()))
	return base64.RawURLEncoding.EncodeToString(sum[:8])
}

// browser is a user agent with its own cookies that does not follow
// redirects by itself.
type browser struct {
	t *testing.T
	c *http.Client
}

func newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	status   int
	header   http.Header
	body     string
	location *url.URL
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	p := page{status: resp.StatusCode, header: resp.Header, body: string(body)}
	if loc, err := resp.Location(); err == nil {
		p.location = loc
	}
	return p
}

func (b *browser) get(u string) page {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	return b.do(req)
}

func (b *browser) post(u string, form url.Values) page {
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

var hiddenField = regexp.MustCompile(`name="(request|csrf)" value="([^"]*)"`)

// consentForm reads the hidden fields of a consent page.
func consentForm(t *testing.T, p page) url.Values {
	t.Helper()
	if p.status != http.StatusOK || !strings.Contains(p.body, `id="approve"`) {
		t.Fatalf("want the consent page, got %d: %.300s", p.status, p.body)
	}
	form := url.Values{}
	for _, m := range hiddenField.FindAllStringSubmatch(p.body, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	return form
}

// signIn runs the browser part: authorize, approve, Google (auto-approve),
// callback. It returns the final redirect to the client.
func (b *browser) signIn(h *harness, authURL string) *url.URL {
	b.t.Helper()
	form := consentForm(b.t, b.get(authURL))
	form.Set("decision", "approve")
	p := b.post(h.base+"/oauth/authorize", form)
	for range 5 {
		if p.location == nil {
			b.t.Fatalf("the sign-in stopped at %d: %.300s", p.status, p.body)
		}
		if !strings.HasPrefix(p.location.String(), h.base) && !strings.HasPrefix(p.location.String(), h.google.srv.URL) {
			return p.location
		}
		p = b.get(p.location.String())
	}
	b.t.Fatal("too many redirects")
	return nil
}

// tokenRequest posts a form to the token endpoint.
func (h *harness) tokenRequest(form url.Values) (int, map[string]any) {
	h.t.Helper()
	resp, err := http.PostForm(h.srv.URL+"/oauth/token", form)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		h.t.Errorf("token endpoint Cache-Control = %q, want no-store", cc)
	}
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (h *harness) exchange(a authRequest, code string) (int, map[string]any) {
	return h.tokenRequest(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {a.clientID},
		"redirect_uri": {a.redirectURI}, "code_verifier": {a.verifier}, "resource": {a.resource}})
}

func (h *harness) refresh(clientID, refreshToken string) (int, map[string]any) {
	return h.tokenRequest(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}, "client_id": {clientID}})
}

// authorize runs a whole authorization for a fresh public client and
// returns the request and the token response.
func (h *harness) authorize() (authRequest, map[string]any) {
	h.t.Helper()
	a := h.newAuthRequest(h.publicClient())
	back := newBrowser(h.t).signIn(h, a.url(h.base))
	code := back.Query().Get("code")
	if code == "" {
		h.t.Fatalf("no code in %s", back)
	}
	status, tok := h.exchange(a, code)
	if status != http.StatusOK {
		h.t.Fatalf("exchange: %d %v", status, tok)
	}
	return a, tok
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

var _ = context.Background

func decodeJSON(resp *http.Response, v any) {
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(v)
}

func oauthToken(access string) *oauth2.Token {
	return &oauth2.Token{AccessToken: access, TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}
}
