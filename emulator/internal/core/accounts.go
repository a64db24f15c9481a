package core

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Token is what an emulated Google access or refresh token stands for.
type Token struct {
	Email    string
	ClientID string
	Scopes   []string
	Expiry   time.Time // zero for refresh tokens, which do not expire
}

// HasAnyScope reports whether the token carries one of scopes.
func (t Token) HasAnyScope(scopes ...string) bool {
	for _, s := range scopes {
		if slices.Contains(t.Scopes, s) {
			return true
		}
	}
	return false
}

// Accounts holds the emulator's users and the tokens issued to them.
// Tokens are random strings prefixed "ya29.emu-" (access) and "1//emu-"
// (refresh), so a test can tell at a glance it holds a Google token.
type Accounts struct {
	mu        sync.Mutex
	users     map[string]bool
	access    map[string]Token
	refresh   map[string]Token
	accessTTL time.Duration
	now       func() time.Time
	// sweepAt is the count of access tokens at which expired ones are
	// dropped next. It doubles with the live ones, so a long-running
	// emulator keeps only live tokens and sweeping costs O(1) a token.
	sweepAt int
}

// minSweep is the fewest access tokens that trigger a sweep.
const minSweep = 1024

// NewAccounts returns an empty account registry whose access tokens live for ttl.
func NewAccounts(ttl time.Duration, now func() time.Time) *Accounts {
	if now == nil {
		now = time.Now
	}
	return &Accounts{
		users:     map[string]bool{},
		access:    map[string]Token{},
		refresh:   map[string]Token{},
		accessTTL: ttl,
		now:       now,
		sweepAt:   minSweep,
	}
}

// AddUser registers email as a user; adding twice is harmless.
func (a *Accounts) AddUser(email string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.users[strings.ToLower(email)] = true
}

// HasUser reports whether email is a registered user.
func (a *Accounts) HasUser(email string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.users[strings.ToLower(email)]
}

// Users lists registered users in sorted order.
func (a *Accounts) Users() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.users))
	for u := range a.users {
		out = append(out, u)
	}
	slices.Sort(out)
	return out
}

// AccessTTL is the lifetime of a new access token.
func (a *Accounts) AccessTTL() time.Duration { return a.accessTTL }

// IssueAccess mints an access token for a registered user.
func (a *Accounts) IssueAccess(email, clientID string, scopes []string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.access) >= a.sweepAt {
		now := a.now()
		for k, t := range a.access {
			if !now.Before(t.Expiry) {
				delete(a.access, k)
			}
		}
		a.sweepAt = max(minSweep, 2*len(a.access))
	}
	tok := "ya29.emu-" + randomString()
	a.users[strings.ToLower(email)] = true
	a.access[tok] = Token{Email: strings.ToLower(email), ClientID: clientID, Scopes: slices.Clone(scopes), Expiry: a.now().Add(a.accessTTL)}
	return tok
}

// IssueRefresh mints a refresh token for a registered user.
func (a *Accounts) IssueRefresh(email, clientID string, scopes []string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	tok := "1//emu-" + randomString()
	a.users[strings.ToLower(email)] = true
	a.refresh[tok] = Token{Email: strings.ToLower(email), ClientID: clientID, Scopes: slices.Clone(scopes)}
	return tok
}

// ErrInvalidGrant is returned for an unknown, revoked or mismatched refresh token.
var ErrInvalidGrant = errors.New("invalid_grant")

// ErrInvalidScope is returned for a refresh that asks for a scope its
// refresh token was not granted.
var ErrInvalidScope = errors.New("invalid_scope")

// Refresh trades a refresh token for a new access token. clientID must be
// the client the refresh token was issued to.
func (a *Accounts) Refresh(refresh, clientID string) (access string, tok Token, err error) {
	return a.RefreshWithin(refresh, clientID, nil)
}

// RefreshWithin is Refresh for an access token that carries scopes
// alone, each of which the refresh token must carry (RFC 6749 §6: a
// refresh may ask for fewer scopes, never more); none asked is every
// scope the refresh token has. The refresh token keeps its own.
func (a *Accounts) RefreshWithin(refresh, clientID string, scopes []string) (access string, tok Token, err error) {
	a.mu.Lock()
	t, ok := a.refresh[refresh]
	a.mu.Unlock()
	if !ok || (t.ClientID != "" && clientID != t.ClientID) {
		return "", Token{}, ErrInvalidGrant
	}
	for _, sc := range scopes {
		if !slices.Contains(t.Scopes, sc) {
			return "", Token{}, ErrInvalidScope
		}
	}
	if len(scopes) == 0 {
		scopes = t.Scopes
	}
	access = a.IssueAccess(t.Email, t.ClientID, scopes)
	tok, _ = a.lookupAccess(access)
	return access, tok, nil
}

// Revoke removes an access or refresh token and returns its account's
// email ("" for an unknown token). Revoking a refresh token also revokes
// the access tokens issued to the same user and client, as Google does.
func (a *Accounts) Revoke(token string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t, ok := a.refresh[token]; ok {
		delete(a.refresh, token)
		for k, v := range a.access {
			if v.Email == t.Email && v.ClientID == t.ClientID {
				delete(a.access, k)
			}
		}
		return t.Email
	}
	if t, ok := a.access[token]; ok {
		delete(a.access, token)
		return t.Email
	}
	return ""
}

// RevokeAll removes every token of email, as the user's "Remove access"
// at myaccount.google.com/permissions does, and returns how many.
func (a *Accounts) RevokeAll(email string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	email = strings.ToLower(email)
	n := 0
	for _, m := range []map[string]Token{a.refresh, a.access} {
		for k, v := range m {
			if v.Email == email {
				delete(m, k)
				n++
			}
		}
	}
	return n
}

// ExpireAccess makes every access token of email expire now (tests use it to
// force a refresh).
func (a *Accounts) ExpireAccess(email string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, v := range a.access {
		if v.Email == strings.ToLower(email) {
			v.Expiry = a.now().Add(-time.Second)
			a.access[k] = v
		}
	}
}

func (a *Accounts) lookupAccess(tok string) (Token, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.access[tok]
	if !ok || !a.now().Before(t.Expiry) {
		return Token{}, false
	}
	return t, true
}

// Lookup returns the live access token tok stands for.
func (a *Accounts) Lookup(tok string) (Token, bool) { return a.lookupAccess(tok) }

// BearerToken is the access token a request carries, in the
// Authorization header or the access_token query parameter ("" if none).
func BearerToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return r.URL.Query().Get("access_token")
}

// Authenticate checks the request's bearer token the way Google's APIs do.
// On failure it has written the 401 and returns ok=false: without any
// credential "Login Required" (CREDENTIALS_MISSING), with one Google does
// not accept "Invalid Credentials" (ACCESS_TOKEN_TYPE_UNSUPPORTED).
func (a *Accounts) Authenticate(w http.ResponseWriter, r *http.Request) (Token, bool) {
	tok := BearerToken(r)
	t, ok := a.lookupAccess(tok)
	if ok {
		return t, true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="invalid_token"`)
	var b ErrorBody
	if tok == "" {
		b = NewError(http.StatusUnauthorized, "required", "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.")
		b.Error.Errors[0].Message = "Login Required."
		b = b.WithDetails(ErrorInfo("CREDENTIALS_MISSING", DomainGoogleAPIs, serviceMetadata(r)))
	} else {
		b = NewError(http.StatusUnauthorized, "authError", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.")
		b.Error.Errors[0].Message = "Invalid Credentials"
		b = b.WithDetails(ErrorInfo("ACCESS_TOKEN_TYPE_UNSUPPORTED", "", serviceMetadata(r)))
	}
	b.Error.Errors[0].Location = "Authorization"
	b.Error.Errors[0].LocationType = "header"
	WriteErrorBody(w, b)
	return Token{}, false
}

// serviceMetadata is the ErrorInfo metadata naming the API r called.
func serviceMetadata(r *http.Request) map[string]string {
	if api, ok := APIOf(r.URL.Path); ok {
		return map[string]string{"service": api.Service}
	}
	return nil
}

// RequireScope writes Google's 403 for a token that lacks every one of
// scopes and returns false; it returns true when one is present. The
// error carries ErrorInfo ACCESS_TOKEN_SCOPE_INSUFFICIENT, as Google's
// API front end sends it. RequireScopeFor also names the API called.
func RequireScope(w http.ResponseWriter, t Token, scopes ...string) bool {
	return requireScope(w, nil, t, scopes)
}

// RequireScopeFor is RequireScope whose error names the service r called
// in the ErrorInfo's metadata.
func RequireScopeFor(w http.ResponseWriter, r *http.Request, t Token, scopes ...string) bool {
	return requireScope(w, serviceMetadata(r), t, scopes)
}

func requireScope(w http.ResponseWriter, metadata map[string]string, t Token, scopes []string) bool {
	if t.HasAnyScope(scopes...) {
		return true
	}
	b := NewError(http.StatusForbidden, "insufficientPermissions", "Request had insufficient authentication scopes.")
	b.Error.Errors[0].Message = "Insufficient Permission"
	b = b.WithDetails(ErrorInfo("ACCESS_TOKEN_SCOPE_INSUFFICIENT", DomainGoogleAPIs, metadata))
	w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="insufficient_scope"`)
	WriteErrorBody(w, b)
	return false
}

func randomString() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// RandomID returns a random URL-safe identifier of n random bytes.
func RandomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
