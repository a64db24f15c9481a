package benchkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/oauth2"
)

// The benches' MCP client: a public client on a loopback redirect URI
// that nothing listens on; the browser below stops before following it.
const redirectURI = "http://127.0.0.1:9/callback"

// RegisterClient registers an MCP client at the drivemail server at base
// (dynamic client registration) and returns its client_id.
func RegisterClient(ctx context.Context, base, name string) (string, error) {
	body, _ := json.Marshal(map[string]any{"client_name": name, "redirect_uris": []string{redirectURI},
		"grant_types": []string{"authorization_code"}, "token_endpoint_auth_method": "none"})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/oauth/register", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("register: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		ClientID string `json:"client_id"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil || out.ClientID == "" {
		return "", fmt.Errorf("register: HTTP %d without a client_id", resp.StatusCode)
	}
	return out.ClientID, nil
}

// SignIn does what a user and an MCP client do, without a real browser:
// open the authorization URL, approve drivemail's consent page, let the
// emulated Google (run with --auto-approve) approve, and trade the code
// for a drivemail access token. The browser adds login_hint=email to
// Google's authorization URL, as a user picking an account would, so the
// emulator signs that user in; an empty email signs in its demo user. An
// emulator that asks (serve --demo's) is answered as email.
func SignIn(ctx context.Context, base, clientID, email string) (string, error) {
	conf := &oauth2.Config{ClientID: clientID, RedirectURL: redirectURI, Scopes: []string{"drivemail"},
		Endpoint: oauth2.Endpoint{AuthURL: base + "/oauth/authorize", TokenURL: base + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	resource := oauth2.SetAuthURLParam("resource", base+"/mcp")
	authURL := conf.AuthCodeURL("bench-state", oauth2.S256ChallengeOption(verifier), resource)

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), redirectURI) || len(via) > 10 {
			return http.ErrUseLastResponse
		}
		if email != "" && strings.HasPrefix(req.URL.Path, "/o/oauth2/") {
			q := req.URL.Query()
			q.Set("login_hint", email)
			req.URL.RawQuery = q.Encode()
		}
		return nil
	}}
	page, err := get(ctx, browser, authURL)
	if err != nil {
		return "", fmt.Errorf("consent page: %w", err)
	}
	form := url.Values{"decision": {"approve"}}
	for _, field := range []string{"request", "csrf"} {
		m := regexp.MustCompile(`name="` + field + `" value="([^"]+)"`).FindStringSubmatch(page)
		if m == nil {
			return "", fmt.Errorf("the consent page has no %s field", field)
		}
		form.Set(field, m[1])
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/oauth/authorize", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := browser.Do(req)
	if err != nil {
		return "", fmt.Errorf("approve: %w", err)
	}
	if resp.StatusCode == http.StatusOK {
		// An emulator without --auto-approve (serve --demo's) shows its
		// Google consent page: choose email there and allow every scope.
		resp, err = approveAtGoogle(ctx, browser, resp, email)
		if err != nil {
			return "", err
		}
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || back.Query().Get("code") == "" {
		return "", fmt.Errorf("approve: ended at %d %q, not back at the client with a code", resp.StatusCode, resp.Header.Get("Location"))
	}
	tok, err := conf.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier), resource)
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return tok.AccessToken, nil
}

// approveAtGoogle answers the emulated Google's consent page, the body of
// page, as a user choosing email and leaving every permission ticked.
func approveAtGoogle(ctx context.Context, browser *http.Client, page *http.Response, email string) (*http.Response, error) {
	b, err := io.ReadAll(io.LimitReader(page.Body, 1<<20))
	page.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("the emulated Google's consent page: %w", err)
	}
	m := regexp.MustCompile(`name="request_id" value="([^"]+)"`).FindSubmatch(b)
	if m == nil || email == "" {
		return nil, fmt.Errorf("approve: ended at %d %s, not at Google's consent page for an email to choose", page.StatusCode, page.Request.URL.Path)
	}
	form := url.Values{"request_id": {string(m[1])}, "action": {"approve"}, "typed_email": {email}}
	for _, sc := range regexp.MustCompile(`data-scope="([^"]+)"`).FindAllSubmatch(b, -1) {
		form.Add("scope", string(sc[1]))
	}
	consent := *page.Request.URL
	consent.Path, consent.RawQuery = "/o/oauth2/consent", ""
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, consent.String(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := browser.Do(req)
	if err != nil {
		return nil, fmt.Errorf("approve at Google: %w", err)
	}
	return resp, nil
}

func get(ctx context.Context, c *http.Client, u string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", errors.New(resp.Status)
	}
	return string(b), nil
}
