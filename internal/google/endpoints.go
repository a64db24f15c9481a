// Package google knows where Google's APIs live: the real hosts, or one
// emulator origin that serves every Google path (serve --google-endpoint).
package google

import (
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/oauth2"
	"google.golang.org/api/option"
)

// Endpoints locates the Google APIs drivemail calls. The zero value means
// Google itself; Base set to an origin (for example http://127.0.0.1:9090)
// sends every API and OAuth URL there.
type Endpoints struct {
	Base string
}

// Parse validates base (empty for real Google) and returns the endpoints.
func Parse(base string) (Endpoints, error) {
	if base == "" {
		return Endpoints{}, nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Endpoints{}, fmt.Errorf("google endpoint %q: want an http(s) origin such as http://127.0.0.1:9090", base)
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
		return Endpoints{}, fmt.Errorf("google endpoint %q: want an origin without a path, query or fragment", base)
	}
	return Endpoints{Base: strings.TrimSuffix(u.String(), "/")}, nil
}

// Emulated reports whether the endpoints point at an emulator.
func (e Endpoints) Emulated() bool { return e.Base != "" }

// DriveOptions are the client options for google.golang.org/api/drive/v3.
func (e Endpoints) DriveOptions() []option.ClientOption {
	if !e.Emulated() {
		return nil
	}
	return []option.ClientOption{option.WithEndpoint(e.Base + "/drive/v3/")}
}

// GmailOptions are the client options for google.golang.org/api/gmail/v1.
func (e Endpoints) GmailOptions() []option.ClientOption {
	if !e.Emulated() {
		return nil
	}
	return []option.ClientOption{option.WithEndpoint(e.Base + "/")}
}

// SheetsOptions are the client options for google.golang.org/api/sheets/v4.
func (e Endpoints) SheetsOptions() []option.ClientOption {
	if !e.Emulated() {
		return nil
	}
	return []option.ClientOption{option.WithEndpoint(e.Base + "/")}
}

// OAuth2 is the authorization and token endpoint for golang.org/x/oauth2.
func (e Endpoints) OAuth2() oauth2.Endpoint {
	if !e.Emulated() {
		return oauth2.Endpoint{
			AuthURL:   "https://accounts.google.com/o/oauth2/v2/auth",
			TokenURL:  "https://oauth2.googleapis.com/token",
			AuthStyle: oauth2.AuthStyleInParams,
		}
	}
	return oauth2.Endpoint{
		AuthURL:   e.Base + "/o/oauth2/v2/auth",
		TokenURL:  e.Base + "/token",
		AuthStyle: oauth2.AuthStyleInParams,
	}
}

// UserinfoURL returns the OpenID userinfo endpoint (email of the signed-in user).
func (e Endpoints) UserinfoURL() string {
	if !e.Emulated() {
		return "https://openidconnect.googleapis.com/v1/userinfo"
	}
	return e.Base + "/oauth2/v3/userinfo"
}

// GmailWebURL is the origin of Gmail's web UI, where a draft's link
// opens: Gmail itself, or the emulator, whose /mail/ pages lead to its
// sent-mail page (drafts listed there too).
func (e Endpoints) GmailWebURL() string {
	if !e.Emulated() {
		return "https://mail.google.com"
	}
	return e.Base
}

// RevokeURL returns the token revocation endpoint.
func (e Endpoints) RevokeURL() string {
	if !e.Emulated() {
		return "https://oauth2.googleapis.com/revoke"
	}
	return e.Base + "/revoke"
}

// PickerScriptURL is the script a page loads for Google's Picker
// (gapi.load('picker')): Google's api.js, or the emulator's stand-in.
func (e Endpoints) PickerScriptURL() string {
	if !e.Emulated() {
		return "https://apis.google.com/js/api.js"
	}
	return e.Base + "/js/api.js"
}

// PickerSources are the origins a page that shows Google's Picker must
// let in, by Content-Security-Policy directive: Google's own list for
// the Picker (its drive-picker-element's CSP, without the Identity
// Services origin a page that gets its own token needs), or the
// emulator's origin for each. A directive not named lets nothing in.
func (e Endpoints) PickerSources() map[string][]string {
	if e.Emulated() {
		return map[string][]string{"script-src": {e.Base}, "frame-src": {e.Base}, "form-action": {e.Base}}
	}
	return map[string][]string{
		"script-src":  {"https://apis.google.com"},
		"frame-src":   {"https://docs.google.com", "https://drive.google.com", "https://accounts.google.com"},
		"img-src":     {"https://*.googleusercontent.com"},
		"connect-src": {"https://*.googleapis.com"},
		"font-src":    {"https://fonts.gstatic.com"},
	}
}
