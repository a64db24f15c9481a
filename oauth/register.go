package oauth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/drivemail/drivemail/store"
)

// maxRegistrationBytes caps a registration request body.
const maxRegistrationBytes = 32 << 10

// registrationResponse is RFC 7591 §3.2.1's answer.
type registrationResponse struct {
	ClientID                string   `json:"client_id"`
	ClientSecret            string   `json:"client_secret,omitempty"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientSecretExpiresAt   *int64   `json:"client_secret_expires_at,omitempty"`
	ClientName              string   `json:"client_name,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope"`
}

// register is dynamic client registration (RFC 7591), open to anyone but
// rate-limited per client IP.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	n, err := s.cfg.Store.Hit(ctx, limitKey("register", s.cfg.ClientIP(r)), time.Hour)
	if err != nil {
		s.logger.ErrorContext(ctx, "registration rate limit", "err", err)
		writeOAuthError(w, http.StatusInternalServerError, "server_error", "Registration is unavailable right now; try again shortly.")
		return
	}
	if n > int64(s.cfg.RegistrationLimit) {
		w.Header().Set("Retry-After", strconv.Itoa(int(time.Hour.Seconds())))
		writeOAuthError(w, http.StatusTooManyRequests, "too_many_requests",
			fmt.Sprintf("Too many client registrations from this address (at most %d an hour); reuse an existing registration or try again later.", s.cfg.RegistrationLimit))
		return
	}

	body, err := io.ReadAll(io.LimitReader(r.Body, maxRegistrationBytes+1))
	if err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", "The registration request body could not be read.")
		return
	}
	if len(body) > maxRegistrationBytes {
		writeOAuthError(w, http.StatusRequestEntityTooLarge, "invalid_client_metadata",
			fmt.Sprintf("The registration request is larger than %d bytes.", maxRegistrationBytes))
		return
	}
	var meta registration
	if err := json.Unmarshal(body, &meta); err != nil || !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", "The registration request must be a JSON object of client metadata (RFC 7591).")
		return
	}
	if err := meta.validate(); err != nil {
		var me *metadataError
		if errors.As(err, &me) {
			writeOAuthError(w, http.StatusBadRequest, me.code, me.msg)
			return
		}
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", err.Error())
		return
	}

	now := s.now()
	c := store.Client{
		ID:           clientPrefix + newSecret("")[:32],
		Name:         meta.ClientName,
		RedirectURIs: meta.RedirectURIs,
		GrantTypes:   meta.GrantTypes,
		AuthMethod:   meta.TokenEndpointAuthMethod,
		CreatedAt:    now,
	}
	resp := registrationResponse{
		ClientID:                c.ID,
		ClientIDIssuedAt:        now.Unix(),
		ClientName:              c.Name,
		RedirectURIs:            c.RedirectURIs,
		GrantTypes:              c.GrantTypes,
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: c.AuthMethod,
		Scope:                   Scope,
	}
	if c.AuthMethod != "none" {
		secret := newSecret(secretPrefix)
		c.SecretHash = store.Hash(secret)
		never := int64(0)
		resp.ClientSecret, resp.ClientSecretExpiresAt = secret, &never
	}
	if err := s.cfg.Store.CreateClient(ctx, c); err != nil {
		s.logger.ErrorContext(ctx, "store client", "err", err)
		writeOAuthError(w, http.StatusInternalServerError, "server_error", "The registration could not be saved; try again shortly.")
		return
	}
	s.logger.InfoContext(ctx, "client registered", "client_id", c.ID, "auth_method", c.AuthMethod, "redirect_uris", len(c.RedirectURIs))
	writeJSON(w, http.StatusCreated, resp)
}
