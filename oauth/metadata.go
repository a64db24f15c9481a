package oauth

import (
	"encoding/json"
	"net/http"
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
// /.well-known/oauth-authorization-server.
func (s *Server) AuthorizationServerMetadata() http.Handler {
	authMethods := []string{"none", "client_secret_post", "client_secret_basic"}
	return metadata(map[string]any{
		"issuer":                                         s.base,
		"authorization_endpoint":                         s.base + "/oauth/authorize",
		"token_endpoint":                                 s.base + "/oauth/token",
		"registration_endpoint":                          s.base + "/oauth/register",
		"revocation_endpoint":                            s.base + "/oauth/revoke",
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          authMethods,
		"revocation_endpoint_auth_methods_supported":     authMethods,
		"scopes_supported":                               []string{Scope},
		"client_id_metadata_document_supported":          true,
		"authorization_response_iss_parameter_supported": true,
	})
}

// metadata serves a fixed JSON document, readable cross-origin.
func metadata(doc map[string]any) http.Handler {
	body, _ := json.Marshal(doc) // maps of strings, slices and bools always marshal
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write(body)
	})
}
