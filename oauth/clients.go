package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/drivemail/drivemail/oauth/cimd"
	"github.com/drivemail/drivemail/store"
)

// Registration limits.
const (
	maxRedirectURIs   = 10
	maxRedirectURILen = 2000
	maxClientNameLen  = 100 // characters
	maxClientIDLen    = 2048
)

// client is a registered client or one described by a metadata document.
type client struct {
	ID           string
	Name         string
	RedirectURIs []string
	GrantTypes   []string
	AuthMethod   string
	SecretHash   string
	// Document is true for a client ID metadata document, whose client_id
	// URL (and so its host) is verified by the fetch itself.
	Document bool
}

func (c client) allowsRefresh() bool { return slices.Contains(c.GrantTypes, "refresh_token") }

// errUnknownClient means neither the store nor a metadata document knows
// the client_id.
var errUnknownClient = errors.New("unknown client")

// lookupClient finds a client by id: a registered one, or the document at
// an https client_id. Refusals of a document are *cimd.Error.
func (s *Server) lookupClient(ctx context.Context, id string) (client, error) {
	if id == "" || len(id) > maxClientIDLen {
		return client{}, errUnknownClient
	}
	if cimd.IsURL(id) {
		doc, err := s.cfg.CIMD.Fetch(ctx, id)
		if err != nil {
			return client{}, err
		}
		return clientFromDocument(doc)
	}
	c, err := s.cfg.Store.GetClient(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return client{}, errUnknownClient
	}
	if err != nil {
		return client{}, fmt.Errorf("look up client: %w", err)
	}
	return client{ID: c.ID, Name: c.Name, RedirectURIs: c.RedirectURIs, GrantTypes: c.GrantTypes, AuthMethod: c.AuthMethod, SecretHash: c.SecretHash}, nil
}

// clientFromDocument applies the registration rules to a metadata
// document. Such a client has no secret: it authenticates as "none".
func clientFromDocument(doc cimd.Document) (client, error) {
	meta := registration{
		RedirectURIs:            doc.RedirectURIs,
		ClientName:              doc.ClientName,
		GrantTypes:              doc.GrantTypes,
		ResponseTypes:           doc.ResponseTypes,
		TokenEndpointAuthMethod: doc.TokenEndpointAuthMethod,
		Scope:                   doc.Scope,
	}
	if meta.TokenEndpointAuthMethod == "" {
		meta.TokenEndpointAuthMethod = "none"
	}
	if meta.TokenEndpointAuthMethod != "none" {
		return client{}, badMetadata("the client metadata document asks for token_endpoint_auth_method %q; a metadata-document client has no secret, so it must use none", clip(meta.TokenEndpointAuthMethod))
	}
	if err := meta.validate(); err != nil {
		return client{}, err
	}
	name := meta.ClientName
	if name == "" {
		u, _ := url.Parse(doc.ClientID)
		name = u.Hostname()
	}
	return client{ID: doc.ClientID, Name: name, RedirectURIs: meta.RedirectURIs, GrantTypes: meta.GrantTypes, AuthMethod: "none", Document: true}, nil
}

// metadataError is a refusal of client metadata (RFC 7591 §3.2.2); its
// text is shown to the client.
type metadataError struct {
	code string // invalid_redirect_uri or invalid_client_metadata
	msg  string
}

func (e *metadataError) Error() string { return e.msg }

func badMetadata(format string, args ...any) error {
	return &metadataError{code: "invalid_client_metadata", msg: fmt.Sprintf(format, args...)}
}

func badRedirect(format string, args ...any) error {
	return &metadataError{code: "invalid_redirect_uri", msg: fmt.Sprintf(format, args...)}
}

// registration is the client metadata drivemail reads (RFC 7591 §2).
type registration struct {
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope"`
}

// validate checks the metadata and fills defaults (RFC 7591: grant_types
// authorization_code, response_types code).
func (m *registration) validate() error {
	if len(m.RedirectURIs) == 0 {
		return badRedirect("redirect_uris is required: list the addresses drivemail may send the authorization code to")
	}
	if len(m.RedirectURIs) > maxRedirectURIs {
		return badRedirect("at most %d redirect_uris are accepted", maxRedirectURIs)
	}
	for _, u := range m.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return err
		}
	}
	if utf8.RuneCountInString(m.ClientName) > maxClientNameLen {
		return badMetadata("client_name is longer than %d characters", maxClientNameLen)
	}
	if strings.IndexFunc(m.ClientName, unicode.IsControl) >= 0 || !utf8.ValidString(m.ClientName) {
		return badMetadata("client_name contains control characters or invalid UTF-8")
	}
	m.ClientName = strings.TrimSpace(m.ClientName)
	if len(m.GrantTypes) == 0 {
		m.GrantTypes = []string{"authorization_code"}
	}
	for _, g := range m.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return badMetadata("grant type %q is not supported; use authorization_code and refresh_token", clip(g))
		}
	}
	if !slices.Contains(m.GrantTypes, "authorization_code") {
		return badMetadata("grant_types must include authorization_code")
	}
	for _, rt := range m.ResponseTypes {
		if rt != "code" {
			return badMetadata("response type %q is not supported; use code", clip(rt))
		}
	}
	switch m.TokenEndpointAuthMethod {
	case "":
		m.TokenEndpointAuthMethod = "client_secret_basic" // RFC 7591's default
	case "none", "client_secret_post", "client_secret_basic":
	default:
		return badMetadata("token_endpoint_auth_method %q is not supported; use none, client_secret_post or client_secret_basic", clip(m.TokenEndpointAuthMethod))
	}
	if _, err := checkScope(m.Scope); err != nil {
		return badMetadata("%v", err)
	}
	return nil
}

// checkRedirectURI accepts https URLs, and http URLs on a loopback host
// (native apps such as Claude Code listen on http://localhost:PORT).
func checkRedirectURI(raw string) error {
	if len(raw) > maxRedirectURILen {
		return badRedirect("a redirect URI is longer than %d characters", maxRedirectURILen)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Hostname() == "" {
		return badRedirect("redirect URI %q is not an absolute URL", clip(raw))
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return badRedirect("redirect URI %q has a fragment, which OAuth forbids", clip(raw))
	}
	if u.User != nil {
		return badRedirect("redirect URI %q contains credentials", clip(raw))
	}
	// The consent page names this host as where access goes; in letters
	// that merely look Latin it could pass for another site's.
	if strings.IndexFunc(u.Hostname(), func(r rune) bool { return r > unicode.MaxASCII }) >= 0 {
		return badRedirect("redirect URI %q has a host with non-ASCII characters; write an internationalized domain name in its ASCII (xn--) form", clip(raw))
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
	case u.Scheme == "http":
		return badRedirect("redirect URI %q uses http on a non-loopback host; use https (plain http is allowed only for localhost, 127.0.0.1 and [::1])", clip(raw))
	default:
		return badRedirect("redirect URI %q uses the scheme %q; use https (or http on localhost)", clip(raw), clip(u.Scheme))
	}
	return nil
}

// matchRedirectURI returns the registered URI that requested matches:
// exactly, or for an http loopback URI, exactly but for the port
// (RFC 8252 §7.3: native apps get an ephemeral port).
func matchRedirectURI(registered []string, requested string) (string, bool) {
	if slices.Contains(registered, requested) {
		return requested, true
	}
	req, err := url.Parse(requested)
	if err != nil || req.Scheme != "http" || !isLoopbackHost(req.Hostname()) {
		return "", false
	}
	for _, r := range registered {
		reg, err := url.Parse(r)
		if err != nil || reg.Scheme != "http" {
			continue
		}
		if reg.Hostname() == req.Hostname() && reg.EscapedPath() == req.EscapedPath() &&
			reg.RawQuery == req.RawQuery && reg.User == nil && req.User == nil && req.Fragment == "" {
			return r, true
		}
	}
	return "", false
}

// checkScope validates a requested scope string and returns the scope
// granted: drivemail's one scope (offline_access is accepted and implied).
func checkScope(raw string) (string, error) {
	for _, sc := range strings.Fields(raw) {
		if sc != Scope && sc != "offline_access" {
			return "", fmt.Errorf("scope %q is not supported; drivemail offers %q", clip(sc), Scope)
		}
	}
	return Scope, nil
}

// clip shortens a caller-supplied value for a message.
func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
