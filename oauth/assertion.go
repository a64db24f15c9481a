package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/drivemail/drivemail/oauth/cimd"
	"github.com/drivemail/drivemail/store"
)

// private_key_jwt (RFC 7523 §2.2, OpenID Connect Core §9): a client whose
// metadata document says token_endpoint_auth_method private_key_jwt (as
// ChatGPT's does) proves itself at the token and revocation endpoints
// with a JWT it signed with a key of its document's jwks_uri.

// jwtBearer is the client_assertion_type of a JWT assertion.
const jwtBearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// Assertion limits.
const (
	maxAssertionLen = 8 << 10
	// assertionSkew forgives clocks that differ a little.
	assertionSkew = time.Minute
	// maxAssertionLife bounds how far ahead exp may be: a jti is kept
	// until its assertion expires.
	maxAssertionLife = time.Hour
)

// assertionClaims are the claims RFC 7523 §3 asks for.
type assertionClaims struct {
	Iss string          `json:"iss"`
	Sub string          `json:"sub"`
	Aud json.RawMessage `json:"aud"`
	Exp *json.Number    `json:"exp"`
	Nbf *json.Number    `json:"nbf"`
	Iat *json.Number    `json:"iat"`
	Jti string          `json:"jti"`
}

// jws is a compact JWS split into its parts.
type jws struct {
	header struct {
		Alg, Kid, Typ string
		Crit          []string
	}
	claims assertionClaims
	signed string // header.payload, what the signature covers
	sig    []byte
}

func invalidClient(format string, args ...any) *tokenError {
	return &tokenError{http.StatusUnauthorized, "invalid_client", fmt.Sprintf(format, args...)}
}

// parseAssertion splits and decodes a compact JWS without checking it.
func parseAssertion(s string) (*jws, error) {
	if len(s) > maxAssertionLen {
		return nil, fmt.Errorf("client_assertion is longer than %d bytes", maxAssertionLen)
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return nil, errors.New("client_assertion is not a signed JWT (three base64url parts)")
	}
	var j jws
	head, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	body, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, errors.New("client_assertion is not base64url")
	}
	var h struct {
		Alg  string   `json:"alg"`
		Kid  string   `json:"kid"`
		Typ  string   `json:"typ"`
		Crit []string `json:"crit"`
	}
	if json.Unmarshal(head, &h) != nil {
		return nil, errors.New("client_assertion's header is not JSON")
	}
	j.header.Alg, j.header.Kid, j.header.Typ, j.header.Crit = h.Alg, h.Kid, h.Typ, h.Crit
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if dec.Decode(&j.claims) != nil {
		return nil, errors.New("client_assertion's claims are not a JSON object")
	}
	j.signed, j.sig = parts[0]+"."+parts[1], sig
	return &j, nil
}

// authenticateAssertion authenticates a token or revocation request that
// carries a client_assertion: the client it names must use
// private_key_jwt, and the JWT must be signed by one of its keys, be for
// this server, unexpired, and used once.
func (s *Server) authenticateAssertion(ctx context.Context, r *http.Request, form url.Values) (client, *tokenError) {
	if _, _, basic := r.BasicAuth(); basic || form.Get("client_secret") != "" {
		return client{}, invalidRequest("Use one way to authenticate the client: client_assertion, or a client secret, not both.")
	}
	if form.Get("client_assertion_type") != jwtBearer {
		return client{}, invalidRequest("client_assertion_type must be " + jwtBearer + ".")
	}
	j, err := parseAssertion(form.Get("client_assertion"))
	if err != nil {
		return client{}, invalidClient("%s.", err.Error())
	}
	id := form.Get("client_id")
	if id == "" {
		id = j.claims.Iss
	}
	if j.claims.Iss != id || j.claims.Sub != id {
		return client{}, invalidClient("The client_assertion's iss and sub must both be the client_id.")
	}
	c, terr := s.clientByID(ctx, r, id)
	if terr != nil {
		return client{}, terr
	}
	if c.AuthMethod != authPrivateKeyJWT {
		return client{}, invalidClient("This client's metadata names token_endpoint_auth_method %q, not private_key_jwt: authenticate as it says.", c.AuthMethod)
	}
	if terr := s.checkAssertionClaims(j); terr != nil {
		return client{}, terr
	}
	if terr := s.checkAssertionSignature(ctx, c, j); terr != nil {
		return client{}, terr
	}
	exp, _ := j.claims.Exp.Int64()
	sum := sha256.Sum256([]byte(c.ID))
	err = s.cfg.Store.UseOnce(ctx, "client-assertion:"+hex.EncodeToString(sum[:8])+":"+j.claims.Jti, time.Unix(exp, 0).Add(assertionSkew))
	switch {
	case errors.Is(err, store.ErrUsed):
		s.logger.WarnContext(ctx, "client assertion replayed", "client_id", c.ID)
		return client{}, invalidClient("This client_assertion was already used; sign a new one (with a new jti) for each request.")
	case err != nil:
		s.logger.ErrorContext(ctx, "token endpoint: assertion jti", "err", err)
		return client{}, serverError()
	}
	return c, nil
}

// checkAssertionClaims checks aud, exp, nbf, iat and jti.
func (s *Server) checkAssertionClaims(j *jws) *tokenError {
	now := s.now()
	if !s.assertionAudience(j.claims.Aud) {
		return invalidClient("The client_assertion's aud must be this server's token endpoint (%s) or its issuer (%s).", s.base+"/oauth/token", s.base)
	}
	if j.claims.Exp == nil {
		return invalidClient("The client_assertion has no exp.")
	}
	exp, err := j.claims.Exp.Int64()
	switch {
	case err != nil:
		return invalidClient("The client_assertion's exp is not a whole number of seconds.")
	case !now.Before(time.Unix(exp, 0).Add(assertionSkew)):
		return invalidClient("The client_assertion expired; sign a new one.")
	case time.Unix(exp, 0).After(now.Add(maxAssertionLife + assertionSkew)):
		return invalidClient("The client_assertion's exp is more than an hour away; sign one that expires within minutes.")
	}
	for name, v := range map[string]*json.Number{"nbf": j.claims.Nbf, "iat": j.claims.Iat} {
		if v == nil {
			continue
		}
		t, err := v.Int64()
		if err != nil || time.Unix(t, 0).After(now.Add(assertionSkew)) {
			return invalidClient("The client_assertion's %s is in the future.", name)
		}
	}
	if j.claims.Jti == "" || len(j.claims.Jti) > 256 {
		return invalidClient("The client_assertion needs a jti (a unique id, at most 256 characters): each assertion is accepted once.")
	}
	return nil
}

// assertionAudience reports whether aud (a string or a list) names this
// server's token endpoint (either spelling) or its issuer.
func (s *Server) assertionAudience(raw json.RawMessage) bool {
	var list []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		list = []string{one}
	} else if json.Unmarshal(raw, &list) != nil {
		return false
	}
	for _, a := range list {
		a = strings.TrimSuffix(a, "/")
		if slices.Contains([]string{s.base, s.base + "/oauth/token", s.base + "/token"}, a) {
			return true
		}
	}
	return false
}

// checkAssertionSignature verifies the JWT with the client's keys,
// fetching its key set again once if the key id is not in the copy held.
func (s *Server) checkAssertionSignature(ctx context.Context, c client, j *jws) *tokenError {
	alg := j.header.Alg
	if alg != algRS256 && alg != algES256 {
		return invalidClient("The client_assertion is signed with %q; drivemail accepts RS256 and ES256.", clip(alg))
	}
	if len(j.header.Crit) > 0 {
		return invalidClient("The client_assertion's header has crit parameters drivemail does not understand.")
	}
	for _, refetch := range []bool{false, true} {
		set, err := s.cfg.CIMD.Keys(ctx, c.JWKSURI, refetch)
		var refusal *cimd.Error
		switch {
		case errors.As(err, &refusal) && refusal.Server():
			return &tokenError{http.StatusServiceUnavailable, "temporarily_unavailable", "drivemail could not fetch the client's keys just now; try again in a minute."}
		case err != nil:
			return invalidClient("The client's key set cannot be used: %s. Its publisher must fix it.", err.Error())
		}
		keys, err := verifyKeys(set, alg, j.header.Kid)
		if err != nil {
			return invalidClient("The client's key set cannot be used: %s.", err.Error())
		}
		for _, k := range keys {
			if verifySignature(alg, k, j.signed, j.sig) {
				return nil
			}
		}
		if len(keys) > 0 {
			break // a key matched the id, and the signature is wrong
		}
	}
	return invalidClient("The client_assertion's signature does not verify with any key of the client's jwks_uri.")
}
