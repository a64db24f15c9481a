package main

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

// The bench's MCP client: a public client on a loopback redirect URI that
// nothing listens on; the browser below stops before following it.
const redirectURI = "http://127.0.0.1:9/callback"

// signIn does what a user and an MCP client do, without a real browser:
// register (DCR), open the authorization URL, approve drivemail's consent
// page, let the emulated Google auto-approve, and trade the code for a
// drivemail access token.
func signIn(ctx context.Context, base string) (string, error) {
	clientID, err := register(ctx, base)
	if err != nil {
		return "", err
	}
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

func register(ctx context.Context, base string) (string, error) {
	body, _ := json.Marshal(map[string]any{"client_name": "uploadbench", "redirect_uris": []string{redirectURI},
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

// googleToken registers the bench user at the emulator and mints a Google
// token for the direct uploads (full Drive scope, so it can also delete
// what the server uploaded).
func googleToken(ctx context.Context, emulator, email string) (string, error) {
	body, _ := json.Marshal(map[string]any{"email": email, "scopes": []string{"https://www.googleapis.com/auth/drive"}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, emulator+"/_emulator/users", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		Token string `json:"access_token"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil || out.Token == "" {
		return "", fmt.Errorf("emulator users: HTTP %d without a token", resp.StatusCode)
	}
	return out.Token, nil
}
