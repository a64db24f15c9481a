package oauth

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// ProtectedResourceMetadata serves RFC 9728 metadata for BASE/mcp, at
// /.well-known/oauth-protected-resource and …/oauth-protected-resource/mcp.
func (s *Server) ProtectedResourceMetadata() http.Handler {
	return metadata(map[string]any{
		"resource":                 s.resource,
		"authorization_servers":    []string{s.base},
		"scopes_supported":         []string{Scope},
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "drivemail",
	})
}

// AuthorizationServerMetadata serves RFC 8414 metadata at
// /.well-known/oauth-authorization-server, and the same document at
// /.well-known/openid-configuration, which the SDKs, VS Code and rmcp
// try too (drivemail is no OpenID provider: it issues no ID tokens, so
// the OpenID-only fields are absent).
func (s *Server) AuthorizationServerMetadata() http.Handler {
	// private_key_jwt is for client metadata document clients that name
	// a jwks_uri (ChatGPT's does); registration does not offer it.
	authMethods := []string{"none", "client_secret_post", "client_secret_basic", authPrivateKeyJWT}
	signing := []string{algRS256, algES256}
	return metadata(map[string]any{
		"issuer":                                                s.base,
		"authorization_endpoint":                                s.base + "/oauth/authorize",
		"token_endpoint":                                        s.base + "/oauth/token",
		"registration_endpoint":                                 s.base + "/oauth/register",
		"revocation_endpoint":                                   s.base + "/oauth/revoke",
		"response_types_supported":                              []string{"code"},
		"response_modes_supported":                              []string{"query"},
		"grant_types_supported":                                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":                      []string{"S256"},
		"token_endpoint_auth_methods_supported":                 authMethods,
		"revocation_endpoint_auth_methods_supported":            authMethods,
		"token_endpoint_auth_signing_alg_values_supported":      signing,
		"revocation_endpoint_auth_signing_alg_values_supported": signing,
		"scopes_supported":                                      []string{Scope},
		"client_id_metadata_document_supported":                 true,
		"authorization_response_iss_parameter_supported":        true,
	})
}

// metadataMaxAge is how long clients and caches may keep metadata: short,
// so a changed deployment is seen within minutes (Claude caches discovery
// for about as long anyway).
const metadataMaxAge = "300"

// metadata serves a fixed JSON document to GET and HEAD, readable
// cross-origin, and answers a browser's preflight (OPTIONS): the MCP
// Inspector sends MCP-Protocol-Version, which is not a simple header.
// Request headers are not looked at, so none can make it fail.
func metadata(doc map[string]any) http.Handler {
	body, _ := json.Marshal(doc) // maps of strings, slices and bools always marshal
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			h.Set("Content-Type", "application/json")
			h.Set("Cache-Control", "public, max-age="+metadataMaxAge)
			h.Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = w.Write(body) // dropped for HEAD by net/http
		case http.MethodOptions:
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			writeOAuthError(w, http.StatusMethodNotAllowed, "invalid_request", "Metadata is read with GET.")
		}
	})
}
