package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
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
	// JWKSURI is where a private_key_jwt document client's keys are.
	JWKSURI string
}

// authPrivateKeyJWT is the token endpoint auth method of a metadata
// document client that signs assertions (assertion.go).
const authPrivateKeyJWT = "private_key_jwt"

func (c client) allowsRefresh() bool { return slices.Contains(c.GrantTypes, "refresh_token") }

// errUnknownClient means neither the store nor a metadata document knows
// the client_id.
var errUnknownClient = errors.New("unknown client")

// lookupClient finds a client by id: a registered one, or the document at
// an https client_id. Refusals of a document are *cimd.Error. A document
// fetch (not one served from the cache) first asks allow, when given.
func (s *Server) lookupClient(ctx context.Context, id string, allow func(context.Context) error) (client, error) {
	if id == "" || len(id) > maxClientIDLen {
		return client{}, errUnknownClient
	}
	if s.cfg.CIMD.IsURL(id) {
		doc, err := s.cfg.CIMD.FetchLimited(ctx, id, allow)
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
	method := meta.TokenEndpointAuthMethod
	switch {
	case method == authPrivateKeyJWT && strings.TrimSpace(doc.JWKSURI) == "":
		return client{}, badMetadata("the client metadata document asks for private_key_jwt but names no jwks_uri: publish the public keys and name them in jwks_uri")
	case method != "none" && method != authPrivateKeyJWT:
		return client{}, badMetadata("the client metadata document asks for token_endpoint_auth_method %q; a metadata-document client has no secret, so it must use none or private_key_jwt (with jwks_uri)", clip(method))
	}
	// validate knows the methods of registration, where private_key_jwt
	// is not offered; the document's own was checked above.
	meta.TokenEndpointAuthMethod = "none"
	if err := meta.validate(); err != nil {
		return client{}, err
	}
	name := meta.ClientName
	if name == "" {
		u, _ := url.Parse(doc.ClientID)
		name = u.Hostname()
	}
	c := client{ID: doc.ClientID, Name: name, RedirectURIs: meta.RedirectURIs, GrantTypes: meta.GrantTypes, AuthMethod: method, Document: true}
	if method == authPrivateKeyJWT {
		c.JWKSURI = strings.TrimSpace(doc.JWKSURI)
	}
	return c, nil
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
	if !utf8.ValidString(m.ClientName) {
		return badMetadata("client_name is not valid UTF-8")
	}
	// The consent page shows the name to the user deciding whom to trust:
	// a character that is invisible or reorders text (U+202E, zero-width
	// joiners, variation selectors) has no honest use there.
	if r, hidden := hiddenRune(strings.TrimSpace(m.ClientName)); hidden {
		return badMetadata("client_name contains %U, a character that does not show as itself (a control, an invisible or a text-reordering character); use a name of visible characters", r)
	}
	m.ClientName = strings.TrimSpace(m.ClientName)
	grants, err := supportedGrants(m.GrantTypes)
	if err != nil {
		return err
	}
	m.GrantTypes = grants
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
	m.Scope = Scope // whatever was asked: see Scope
	return nil
}

// supportedGrants reads registered grant_types: the ones drivemail
// issues, in its order. Others (VS Code lists the device-code grant,
// Claude's document the JWT-bearer one) are dropped, not refused: the
// client simply will not get them. No list at all means both, so that a
// client which left the field out still gets refresh tokens (RFC 7591's
// default is authorization_code alone, which would leave it signing the
// user in again every hour). A list without authorization_code is refused:
// that client wants a flow drivemail does not offer.
func supportedGrants(asked []string) ([]string, error) {
	if len(asked) == 0 {
		return []string{"authorization_code", "refresh_token"}, nil
	}
	var out []string
	for _, g := range []string{"authorization_code", "refresh_token"} {
		if slices.Contains(asked, g) {
			out = append(out, g)
		}
	}
	if !slices.Contains(out, "authorization_code") {
		return nil, badMetadata("grant_types must include authorization_code: drivemail issues tokens through the authorization code flow (with refresh_token), and ignores other grant types")
	}
	return out, nil
}

// checkRedirectURI accepts https URLs; http URLs on a loopback host
// (native apps such as Claude Code listen on http://localhost:PORT); and
// private-use URI schemes of native apps (checkPrivateUseURI). Everything
// else is refused. Hosts must be syntactically valid.
func checkRedirectURI(raw string) error {
	if len(raw) > maxRedirectURILen {
		return badRedirect("a redirect URI is longer than %d characters", maxRedirectURILen)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return badRedirect("redirect URI %q is not an absolute URL", clip(raw))
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return badRedirect("redirect URI %q has a fragment, which OAuth forbids", clip(raw))
	}
	if u.User != nil {
		return badRedirect("redirect URI %q contains credentials", clip(raw))
	}
	if u.Scheme != "https" && u.Scheme != "http" { // url.Parse lower-cases it
		return checkPrivateUseURI(raw, u)
	}
	if err := checkHost(raw, u); err != nil {
		return err
	}
	if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) {
		return badRedirect("redirect URI %q uses http on a non-loopback host; use https (plain http is allowed only for localhost, 127.0.0.1 and [::1])", clip(raw))
	}
	return nil
}

// checkHost accepts a DNS name (letters, digits and hyphens in labels of
// at most 63 characters; internationalized names in their xn-- form), an
// IPv4 address or a bracketed IPv6 address, with an optional port. The
// consent page shows the host and its Content-Security-Policy names it,
// so nothing else may pass: not "*", not "evil.com;sandbox", not letters
// that merely look Latin.
func checkHost(raw string, u *url.URL) error {
	host := u.Hostname()
	if host == "" {
		return badRedirect("redirect URI %q has no host", clip(raw))
	}
	if strings.IndexFunc(host, func(r rune) bool { return r > unicode.MaxASCII }) >= 0 {
		return badRedirect("redirect URI %q has a host with non-ASCII characters; write an internationalized domain name in its ASCII (xn--) form", clip(raw))
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port[0] == '0' {
			return badRedirect("redirect URI %q has an invalid port", clip(raw))
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return badRedirect("redirect URI %q has an empty port", clip(raw))
	}
	if strings.HasPrefix(u.Host, "[") {
		if ip, err := netip.ParseAddr(host); err == nil && ip.Is6() && ip.Zone() == "" {
			return nil
		}
		return badRedirect("redirect URI %q has an invalid IPv6 address", clip(raw))
	}
	if !dnsName(host) {
		return badRedirect("redirect URI %q has the host %q, which is not a valid host name or address", clip(raw), clip(host))
	}
	return nil
}

// dnsName reports whether host is a valid DNS name or dotted IPv4 address
// (RFC 1123 §2.1): labels of letters, digits and inner hyphens.
func dnsName(host string) bool {
	if len(host) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(host, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// appSchemes are the private-use schemes without a period that drivemail
// accepts, because real clients register them. RFC 8252 §8.4 says a
// scheme without one SHOULD be refused: it names no domain, so any
// program may claim it, and a browser hands it to whichever did (smb:,
// ms-msdt:, itms-services: and the like run other programs with the
// URI). Each exception is a VS Code-family editor's own URL scheme, which
// that editor claims, with the evidence that clients register it.
var appSchemes = map[string]string{
	// Cursor's own MCP client, per its MCP documentation (the static
	// OAuth section): cursor://anysphere.cursor-mcp/oauth/callback.
	"cursor": "Cursor",
	// Extensions that sign in to MCP servers build their callback from
	// the editor's URL scheme (vscode.env.uriScheme): Cline registers
	// vscode://saoudrizwan.claude-dev/mcp-auth/callback/<hash>, Coder's
	// extension vscode://coder.coder-remote/… by dynamic registration.
	"vscode": "Visual Studio Code",
	// The same extensions in VS Code Insiders, whose scheme this is.
	"vscode-insiders": "Visual Studio Code Insiders",
	// The same extensions in Windsurf, whose scheme this is; Windsurf's
	// own client is replayed with windsurf://codeium.windsurf/oauth/callback.
	"windsurf": "Windsurf",
}

// checkPrivateUseURI accepts a native app's private-use redirect URI
// (RFC 8252 §7.1): a reverse domain name as the scheme
// (com.example.app:/callback, com.example.app://cb), or one of
// appSchemes with a host (cursor://anysphere.cursor-mcp/oauth/callback).
// Any other scheme is refused. PKCE is what stops another app that claims
// the same scheme from redeeming a code it intercepts.
func checkPrivateUseURI(raw string, u *url.URL) error {
	scheme := u.Scheme
	_, known := appSchemes[scheme]
	switch {
	case !known && !reverseDomain(scheme):
		return badRedirect("redirect URI %q uses the scheme %q, which drivemail does not send codes to: use https, http on localhost, "+
			"or a private-use scheme named after a domain you own, reversed (com.example.app:/callback)", clip(raw), clip(scheme))
	case u.Opaque != "":
		return badRedirect("redirect URI %q has no path; write it as %s:/path or %s://host/path", clip(raw), scheme, scheme)
	case known && u.Host == "":
		return badRedirect("redirect URI %q has no host; an editor's scheme names the extension or app that receives the code: %s://publisher.app/callback", clip(raw), scheme)
	case u.Host != "":
		return checkHost(raw, u)
	}
	return nil
}

// reverseDomain reports whether scheme is a domain name reversed
// (com.example.app): two or more dot-separated labels of letters, digits
// and inner hyphens, the first starting with a letter, as RFC 3986 §3.1
// requires of a scheme.
func reverseDomain(scheme string) bool {
	if !strings.Contains(scheme, ".") || strings.HasSuffix(scheme, ".") || !dnsName(scheme) {
		return false
	}
	c := scheme[0]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
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

// clip shortens a caller-supplied value for a message.
func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
