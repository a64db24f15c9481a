package oauth_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/oauth"
	"github.com/drivemail/drivemail/oauth/googleauth"
	"github.com/drivemail/drivemail/store"
)

// assertPageHeaders checks a page cannot be framed and runs no script.
func assertPageHeaders(t *testing.T, p page) {
	t.Helper()
	if got := p.header.Get("X-Frame-Options"); got != "DENY" {
		t.Errorf("X-Frame-Options = %q, want DENY", got)
	}
	csp := p.header.Get("Content-Security-Policy")
	for _, want := range []string{"frame-ancestors 'none'", "default-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %s", csp, want)
		}
	}
	if strings.Contains(csp, "script-src") || strings.Contains(p.body, "<script") {
		t.Error("the page allows or carries script")
	}
	if p.header.Get("Cache-Control") != "no-store" || p.header.Get("Referrer-Policy") != "same-origin" {
		t.Errorf("Cache-Control %q, Referrer-Policy %q", p.header.Get("Cache-Control"), p.header.Get("Referrer-Policy"))
	}
}

// assertErrorPage checks a refusal shown as a page, not a redirect.
func assertErrorPage(t *testing.T, p page, status int, says string) {
	t.Helper()
	if p.status != status || p.location != nil {
		t.Fatalf("got %d (Location %v), want a %d page", p.status, p.location, status)
	}
	if !strings.Contains(p.body, `id="message"`) || !strings.Contains(p.body, says) {
		t.Fatalf("page does not say %q: %.400s", says, p.body)
	}
	assertPageHeaders(t, p)
}

func TestAuthorizeRefusalsBeforeTheRedirectIsTrusted(t *testing.T) {
	h := newHarness(t, options{})
	clientID := h.publicClient() // registered: http://127.0.0.1/callback and https://app.example/cb
	tests := []struct {
		name     string
		clientID string
		redirect string
		extra    url.Values
		says     string
	}{
		{"no client_id", "", "https://app.example/cb", nil, "no client_id"},
		{"unknown client", "dmc_nobody", "https://app.example/cb", nil, "not registered"},
		{"no redirect_uri", clientID, "", nil, "no redirect_uri"},
		{"unregistered redirect", clientID, "https://evil.example/cb", nil, "not one this application registered"},
		{"other port on a non-loopback host", clientID, "https://app.example:8443/cb", nil, "not one this application registered"},
		{"extra path", clientID, "https://app.example/cb/extra", nil, "not one this application registered"},
		{"different case in the path", clientID, "https://app.example/CB", nil, "not one this application registered"},
		{"different case in the host", clientID, "https://APP.example/cb", nil, "not one this application registered"},
		{"added query", clientID, "https://app.example/cb?x=1", nil, "not one this application registered"},
		{"http instead of https", clientID, "http://app.example/cb", nil, "not one this application registered"},
		{"loopback, other path", clientID, "http://127.0.0.1:5555/other", nil, "not one this application registered"},
		{"loopback, other host name", clientID, "http://localhost:5555/callback", nil, "not one this application registered"},
		{"repeated parameter", clientID, "https://app.example/cb", url.Values{"scope": {"drivemail", "drivemail"}}, "repeats the parameter"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := h.newAuthRequest(tc.clientID)
			a.redirectURI = tc.redirect
			a.extra = tc.extra
			if tc.redirect == "" {
				a.extra = url.Values{"redirect_uri": nil}
			}
			assertErrorPage(t, newBrowser(t).get(a.url(h.base)), http.StatusBadRequest, tc.says)
		})
	}
	for _, ok := range []string{"https://app.example/cb", "http://127.0.0.1:5555/callback", "http://127.0.0.1/callback"} {
		a := h.newAuthRequest(clientID)
		a.redirectURI = ok
		consentForm(t, newBrowser(t).get(a.url(h.base)))
	}
}

// TestAuthorizeErrorsAreShownNotRedirected: anyone can register a client
// with any https redirect URI, so a request made to fail on purpose must
// not turn drivemail's origin into a bouncer to it (RFC 9700 §4.11.2).
// Until the user has seen the consent page, every error is a page that
// names the client and where it asked to go; the browser stays here.
func TestAuthorizeErrorsAreShownNotRedirected(t *testing.T) {
	h := newHarness(t, options{})
	const phish = "https://evil.example/phish"
	targets := map[string]string{ // each redirect URI, and where the page says it leads
		phish: "https://evil.example", "http://127.0.0.1/callback": "http://127.0.0.1",
		"com.example.app:/cb": "com.example.app:", "cursor://anysphere.cursor-mcp/oauth/callback": "cursor://anysphere.cursor-mcp",
	}
	var redirects []string
	for r := range targets {
		redirects = append(redirects, r)
	}
	status, out := h.register(map[string]any{"client_name": "Mail Helper", "redirect_uris": redirects, "token_endpoint_auth_method": "none"})
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, out)
	}
	clientID := str(out, "client_id")
	long := strings.Repeat("s", 1025)
	tests := []struct {
		name   string
		change func(*authRequest)
		says   string
	}{
		{"missing PKCE", func(a *authRequest) { a.method = "" }, "no PKCE challenge"},
		{"plain PKCE", func(a *authRequest) { a.method = "plain" }, "plain is not accepted"},
		{"malformed challenge", func(a *authRequest) { a.extra = url.Values{"code_challenge": {"too-short"}} }, "43-character"},
		{"implicit flow", func(a *authRequest) { a.extra = url.Values{"response_type": {"token"}} }, "response_type=code"},
		{"no response_type", func(a *authRequest) { a.extra = url.Values{"response_type": nil} }, "response_type=code"},
		{"foreign resource", func(a *authRequest) { a.resource = "https://other.example/mcp" }, "issues tokens only for"},
		{"another path of this server", func(a *authRequest) { a.resource = h.base + "/upload" }, "issues tokens only for"},
		{"state too long", func(a *authRequest) { a.state = long }, "longer than 1024"},
	}
	for redirect, target := range targets {
		for _, tc := range tests {
			t.Run(redirect+" "+tc.name, func(t *testing.T) {
				a := h.newAuthRequest(clientID)
				a.redirectURI = redirect
				tc.change(&a)
				p := newBrowser(t).get(a.url(h.base))
				assertErrorPage(t, p, http.StatusBadRequest, tc.says)
				if !strings.Contains(p.body, `id="client-name">Mail Helper<`) || !strings.Contains(p.body, `id="redirect-target">`+target+`<`) {
					t.Errorf("the page does not name the client and %s: %.900s", target, p.body)
				}
				if strings.Contains(p.body, "href=") {
					t.Error("the page links to the redirect URI")
				}
			})
		}
	}
	// Parameters drivemail ignores are no error, so they lead to the
	// consent page (the first thing the user sees), never to a redirect:
	// a scope it has never heard of, prompt=none.
	for _, extra := range []url.Values{{"scope": {"admin:everything openid"}}, {"prompt": {"none"}}} {
		a := h.newAuthRequest(clientID)
		a.redirectURI = phish
		a.extra = extra
		consentForm(t, newBrowser(t).get(a.url(h.base)))
	}
	// At the edges: 1024 characters of state and offline_access are fine.
	a := h.newAuthRequest(clientID)
	a.state, a.scope = strings.Repeat("s", 1024), "drivemail offline_access"
	consentForm(t, newBrowser(t).get(a.url(h.base)))
}

// TestDenyGoesBackToTheClient: once the user has seen the consent page
// and pressed Deny, the client hears it, as RFC 6749 §4.1.2.1 says.
func TestDenyGoesBackToTheClient(t *testing.T) {
	h := newHarness(t, options{})
	status, out := h.register(map[string]any{"client_name": "Mail Helper", "redirect_uris": []string{"https://app.example/cb"}, "token_endpoint_auth_method": "none"})
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, out)
	}
	a := h.newAuthRequest(str(out, "client_id"))
	a.redirectURI = "https://app.example/cb"
	b := newBrowser(t)
	form := consentForm(t, b.get(a.url(h.base)))
	form.Set("decision", "deny")
	p := b.post(h.base+"/oauth/authorize", form)
	if p.status != http.StatusSeeOther || p.location == nil || !strings.HasPrefix(p.location.String(), "https://app.example/cb?") {
		t.Fatalf("deny: %d %v, want a redirect to the client", p.status, p.location)
	}
	if q := p.location.Query(); q.Get("error") != "access_denied" || q.Get("state") != a.state || q.Get("iss") != h.base {
		t.Fatalf("deny redirect %s", p.location)
	}
}

func TestConsentPage(t *testing.T) {
	h := newHarness(t, options{drafts: true})
	a := h.newAuthRequest(h.publicClient())
	p := newBrowser(t).get(a.url(h.base))
	consentForm(t, p)
	assertPageHeaders(t, p)
	for _, want := range []string{"Test Client", `id="redirect-target">http://127.0.0.1:49152<`, "An application on this computer", "Send email as you", "Create Gmail drafts", "cannot verify this name"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("consent page does not show %q", want)
		}
	}
	if strings.Contains(p.body, "Read your Gmail") {
		t.Error("the consent page offers reading mail on a server that does not ask for it")
	}
	withMail := newHarness(t, options{readMail: true})
	if page := newBrowser(t).get(withMail.newAuthRequest(withMail.publicClient()).url(withMail.base)); !strings.Contains(page.body, "Read your Gmail messages and their attachments") {
		t.Error("with --read-mail, the consent page does not say drivemail reads mail")
	}
	csp := p.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "form-action 'self' "+h.google.srv.URL+" http://127.0.0.1:49152") {
		t.Errorf("form-action of %q does not allow exactly us, Google and the client", csp)
	}
	cookie := p.header.Get("Set-Cookie")
	for _, want := range []string{"drivemail-consent=", "Path=/", "HttpOnly", "SameSite=Lax"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("Set-Cookie %q lacks %s", cookie, want)
		}
	}
	// On an https origin the cookie is a __Host- cookie, hence Secure.
	hs := newHarness(t, options{base: "https://mail.example"})
	a = hs.newAuthRequest(hs.publicClient())
	a.resource = "https://mail.example/mcp"
	p = newBrowser(t).get(strings.Replace(a.url(hs.base), hs.base, hs.srv.URL, 1))
	consentForm(t, p)
	if c := p.header.Get("Set-Cookie"); !strings.HasPrefix(c, "__Host-drivemail-consent=") || !strings.Contains(c, "Secure") || strings.Contains(c, "Domain=") {
		t.Errorf("https Set-Cookie %q: want a Secure __Host- cookie without Domain", c)
	}
}

// TestConsentPageShowsWhereTheCodeGoes: the destination is its scheme and
// host, in its own box, with what kind of place it is.
func TestConsentPageShowsWhereTheCodeGoes(t *testing.T) {
	h := newHarness(t, options{})
	uris := map[string][2]string{
		"https://app.example:8443/oauth/cb?x=1":         {"https://app.example:8443", "A website"},
		"http://[::1]:7777/cb":                          {"http://[::1]:7777", "An application on this computer"},
		"cursor://anysphere.cursor-mcp/oauth/callback":  {"cursor://anysphere.cursor-mcp", "opens cursor: links"},
		"vscode://saoudrizwan.claude-dev/mcp-auth/x":    {"vscode://saoudrizwan.claude-dev", "opens vscode: links"},
		"com.example.app:/oauth2redirect/drivemail":     {"com.example.app:", "opens com.example.app: links"},
		"io.github.someone.app://callback/path?state=1": {"io.github.someone.app://callback", "opens io.github.someone.app: links"},
	}
	for uri, want := range uris {
		status, out := h.register(map[string]any{"client_name": "App", "redirect_uris": []string{uri}, "token_endpoint_auth_method": "none"})
		if status != http.StatusCreated {
			t.Fatalf("register %s: %d %v", uri, status, out)
		}
		a := h.newAuthRequest(str(out, "client_id"))
		a.redirectURI = uri
		p := newBrowser(t).get(a.url(h.base))
		consentForm(t, p)
		if !strings.Contains(p.body, `<div class="dest">`) || !strings.Contains(p.body, `id="redirect-target">`+want[0]+`<`) || !strings.Contains(p.body, want[1]) {
			t.Errorf("%s: the consent page does not show %s (%s) as where the code goes", uri, want[0], want[1])
		}
	}
}

// TestConsentPageNeutralisesTheName: a name that registration would now
// refuse (stored before it did) is shown with its hidden characters
// written out, and a name mixing alphabets gets a warning.
func TestConsentPageNeutralisesTheName(t *testing.T) {
	h := newHarness(t, options{})
	for name, want := range map[string]string{
		"Claude\u202eedoC":     `Claude\u202eedoC`,
		"Cla\u200bude\u200d":   `Cla\u200bude\u200d`,
		"Hello\ufe00\ufe0f":    `Hello\ufe00\ufe0f`,
		"Claude\U000E0041":     `Claude\U000e0041`,
		"\u3164":               `\u3164`,
		"Approve\nthis":        `Approve\u000athis`,
		"Plain name (v2) — ok": "Plain name (v2) — ok",
	} {
		id := "dmc_stored" + randomish()
		if err := h.store.CreateClient(t.Context(), store.Client{ID: id, Name: name, RedirectURIs: []string{"https://app.example/cb"},
			GrantTypes: []string{"authorization_code"}, AuthMethod: "none", CreatedAt: h.clock.Now()}); err != nil {
			t.Fatal(err)
		}
		a := h.newAuthRequest(id)
		a.redirectURI = "https://app.example/cb"
		p := newBrowser(t).get(a.url(h.base))
		consentForm(t, p)
		if !strings.Contains(p.body, `id="client-name">`+html.EscapeString(want)+`<`) {
			t.Errorf("name %q: the page does not show %s", name, want)
		}
		for _, r := range name {
			if r > 0x7f && !strings.ContainsRune(want, r) && strings.ContainsRune(p.body, r) {
				t.Errorf("name %q: %U reached the page raw", name, r)
			}
		}
	}
	for name, scripts := range map[string]string{"\u0421laude": "Cyrillic, Latin", "G\u043e\u043egle": "Cyrillic, Latin", "Claude": "",
		"日本語クライアント": "", "Claude デスクトップ": "", "Ελληνικά Claude": "Greek, Latin", "\u0391pple": "Greek, Latin"} {
		status, out := h.register(map[string]any{"client_name": name, "redirect_uris": []string{"https://app.example/cb"}, "token_endpoint_auth_method": "none"})
		if status != http.StatusCreated {
			t.Fatalf("register %q: %d %v", name, status, out)
		}
		a := h.newAuthRequest(str(out, "client_id"))
		a.redirectURI = "https://app.example/cb"
		p := newBrowser(t).get(a.url(h.base))
		warned := strings.Contains(p.body, `id="mixed-scripts"`)
		if warned != (scripts != "") || scripts != "" && !strings.Contains(p.body, "("+scripts+")") {
			t.Errorf("name %q: mixed-script warning %v, want one naming %q", name, warned, scripts)
		}
	}
}

func TestConsentRefusals(t *testing.T) {
	h := newHarness(t, options{})
	clientID := h.publicClient()
	start := func(t *testing.T) (*browser, url.Values, authRequest) {
		a := h.newAuthRequest(clientID)
		b := newBrowser(t)
		return b, consentForm(t, b.get(a.url(h.base))), a
	}

	t.Run("consent from another browser", func(t *testing.T) {
		_, form, _ := start(t)
		form.Set("decision", "approve")
		other := newBrowser(t)
		other.get(h.newAuthRequest(clientID).url(h.base)) // it has a cookie of its own
		assertErrorPage(t, other.post(h.base+"/oauth/authorize", form), http.StatusForbidden, "different browser")
	})
	t.Run("wrong CSRF token", func(t *testing.T) {
		b, form, _ := start(t)
		form.Set("decision", "approve")
		form.Set("csrf", strings.Repeat("A", 43))
		assertErrorPage(t, b.post(h.base+"/oauth/authorize", form), http.StatusForbidden, "security token")
	})
	t.Run("cross-site Origin", func(t *testing.T) {
		b, form, _ := start(t)
		form.Set("decision", "approve")
		req, _ := http.NewRequest(http.MethodPost, h.base+"/oauth/authorize", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		assertErrorPage(t, b.do(req), http.StatusForbidden, "another site")
	})
	t.Run("no decision", func(t *testing.T) {
		b, form, _ := start(t)
		assertErrorPage(t, b.post(h.base+"/oauth/authorize", form), http.StatusBadRequest, "no decision")
	})
	t.Run("answered twice", func(t *testing.T) {
		b, form, _ := start(t)
		form.Set("decision", "approve")
		if p := b.post(h.base+"/oauth/authorize", form); p.status != http.StatusSeeOther {
			t.Fatalf("first approval: %d", p.status)
		}
		assertErrorPage(t, b.post(h.base+"/oauth/authorize", form), http.StatusBadRequest, "already answered")
	})
	t.Run("expired", func(t *testing.T) {
		b, form, _ := start(t)
		form.Set("decision", "approve")
		h.clock.Advance(oauth.DefaultAuthRequestTTL)
		assertErrorPage(t, b.post(h.base+"/oauth/authorize", form), http.StatusBadRequest, "expired")
	})
	t.Run("deny", func(t *testing.T) {
		b, form, a := start(t)
		form.Set("decision", "deny")
		p := b.post(h.base+"/oauth/authorize", form)
		q := p.location.Query()
		if p.status != http.StatusSeeOther || q.Get("error") != "access_denied" || q.Get("state") != a.state || q.Get("iss") != h.base {
			t.Fatalf("deny: %d %v", p.status, p.location)
		}
		assertErrorPage(t, b.post(h.base+"/oauth/authorize", form), http.StatusBadRequest, "expired or was already answered")
	})
	t.Run("approval goes to Google with PKCE and offline access", func(t *testing.T) {
		b, form, _ := start(t)
		form.Set("decision", "approve")
		p := b.post(h.base+"/oauth/authorize", form)
		q := p.location.Query()
		if !strings.HasPrefix(p.location.String(), h.google.srv.URL+"/o/oauth2/v2/auth?") || q.Get("code_challenge_method") != "S256" ||
			q.Get("access_type") != "offline" || q.Get("prompt") != "consent" || q.Get("redirect_uri") != h.base+"/oauth/callback" {
			t.Fatalf("approval redirected to %s", p.location)
		}
	})
}

// toCallback runs a browser from authorize to the callback URL Google
// sends it to, without following that last redirect.
func toCallback(t *testing.T, h *harness, b *browser, a authRequest) *url.URL {
	t.Helper()
	form := consentForm(t, b.get(a.url(h.base)))
	form.Set("decision", "approve")
	p := b.post(h.base+"/oauth/authorize", form)
	p = b.get(p.location.String()) // Google, auto-approving
	if p.location == nil || !strings.HasPrefix(p.location.String(), h.base+"/oauth/callback?") {
		t.Fatalf("Google sent the browser to %v", p.location)
	}
	return p.location
}

func TestCallbackRefusals(t *testing.T) {
	h := newHarness(t, options{})
	clientID := h.publicClient()

	t.Run("state replayed", func(t *testing.T) {
		b := newBrowser(t)
		cb := toCallback(t, h, b, h.newAuthRequest(clientID))
		if p := b.get(cb.String()); p.status != http.StatusSeeOther || p.location.Query().Get("code") == "" {
			t.Fatalf("first callback: %d %v", p.status, p.location)
		}
		assertErrorPage(t, b.get(cb.String()), http.StatusBadRequest, "already used or has expired")
	})
	t.Run("finished in another browser", func(t *testing.T) {
		cb := toCallback(t, h, newBrowser(t), h.newAuthRequest(clientID))
		assertErrorPage(t, newBrowser(t).get(cb.String()), http.StatusForbidden, "different browser")
	})
	t.Run("unknown state", func(t *testing.T) {
		assertErrorPage(t, newBrowser(t).get(h.base+"/oauth/callback?state=forged&code=x"), http.StatusBadRequest, "already used or has expired")
	})
	t.Run("no state", func(t *testing.T) {
		assertErrorPage(t, newBrowser(t).get(h.base+"/oauth/callback?code=x"), http.StatusBadRequest, "no state")
	})
	t.Run("Google code refused", func(t *testing.T) {
		b := newBrowser(t)
		a := h.newAuthRequest(clientID)
		cb := toCallback(t, h, b, a)
		q := cb.Query()
		q.Set("code", "4/forged")
		cb.RawQuery = q.Encode()
		p := b.get(cb.String())
		if p.location == nil || p.location.Query().Get("error") != "server_error" || p.location.Query().Get("state") != a.state {
			t.Fatalf("forged Google code: %d %v", p.status, p.location)
		}
	})
}

var emuRequestID = regexp.MustCompile(`name="request_id" value="([^"]+)"`)

// consentAtGoogle answers the emulator's (non-automatic) consent page.
func consentAtGoogle(t *testing.T, h *harness, b *browser, a authRequest, form url.Values) page {
	t.Helper()
	f := consentForm(t, b.get(a.url(h.base)))
	f.Set("decision", "approve")
	p := b.post(h.base+"/oauth/authorize", f)
	g := b.get(p.location.String())
	m := emuRequestID.FindStringSubmatch(g.body)
	if m == nil {
		t.Fatalf("no Google consent page: %.300s", g.body)
	}
	form.Set("request_id", m[1])
	p = b.post(h.google.srv.URL+"/o/oauth2/consent", form)
	return b.get(p.location.String()) // our callback
}

func TestGoogleDenialAndPartialGrants(t *testing.T) {
	h := newHarness(t, options{google: newGoogle(t, false), drafts: true})
	clientID := h.publicClient()

	a := h.newAuthRequest(clientID)
	p := consentAtGoogle(t, h, newBrowser(t), a, url.Values{"action": {"deny"}})
	if q := p.location.Query(); q.Get("error") != "access_denied" || q.Get("state") != a.state {
		t.Fatalf("denied at Google: %v", p.location)
	}

	// The user unticks drafts and Drive reading at Google: drivemail
	// records what was granted, and says how to get the rest.
	a = h.newAuthRequest(clientID)
	p = consentAtGoogle(t, h, newBrowser(t), a, url.Values{"action": {"approve"}, "email": {"ann@example.com"},
		"scope": {googleauth.ScopeGmailSend, googleauth.ScopeDriveFile}})
	status, tok := h.exchange(a, p.location.Query().Get("code"))
	if status != http.StatusOK {
		t.Fatalf("exchange: %d %v", status, tok)
	}
	_, _, user := h.call(str(tok, "access_token"))
	if user.Email != "ann@example.com" || !user.HasScope(googleauth.ScopeGmailSend) ||
		user.HasScope(googleauth.ScopeGmailCompose) || user.HasScope(googleauth.ScopeDriveReadonly) {
		t.Fatalf("user %+v: want gmail.send and drive.file only", user)
	}
	msg := oauth.MissingScopeMessage(googleauth.ScopeGmailCompose, true)
	if !strings.Contains(msg, "drafts") || !strings.Contains(msg, "Reconnect drivemail") {
		t.Fatalf("message %q does not say what is missing and what to do", msg)
	}
	msg = oauth.MissingScopeMessage(googleauth.ScopeGmailCompose, false)
	if !strings.Contains(msg, "--drafts") {
		t.Fatalf("message %q does not point the operator at --drafts", msg)
	}
}

func TestAuthorizeRateLimit(t *testing.T) {
	h := newHarness(t, options{authLimit: 2})
	a := h.newAuthRequest(h.publicClient())
	for range 2 {
		consentForm(t, newBrowser(t).get(a.url(h.base)))
	}
	p := newBrowser(t).get(a.url(h.base))
	assertErrorPage(t, p, http.StatusTooManyRequests, "at most 2 an hour")
	if p.header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	h.clock.Advance(time.Hour)
	consentForm(t, newBrowser(t).get(a.url(h.base)))
}
