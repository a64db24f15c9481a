package oauth

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/drivemail/drivemail/store"
)

// DefaultRefreshGrace is how long a spent refresh token still gets the
// pair it was exchanged for (serve --refresh-grace). Clients refresh from
// several places with one token: Claude's backend nodes, several Claude
// Code processes, Codex (seen presenting one token five times in a second)
// and Goose at every start; their refresh requests time out after 30–45 s
// and are retried. Two minutes covers a timed-out attempt and its retry
// with room to spare, while a token stolen from a client still trips the
// reuse detection on any use later than that.
const DefaultRefreshGrace = 2 * time.Minute

// maxRefreshReuses bounds how often one spent refresh token gets its pair
// again within the window: enough for every process of a busy client, few
// enough that a flood of reuses is refused (and then revokes the grant).
const maxRefreshReuses = 10

// RefreshKeyPurpose is the keyring purpose the pair issued for a refresh
// is sealed under while its grace window lasts.
const RefreshKeyPurpose = "refresh-successor"

// successor is the plaintext of a sealed pair: the tokens a refresh
// issued, so a reuse within the window can be answered with them.
type successor struct {
	AccessToken   string `json:"access_token"`
	RefreshToken  string `json:"refresh_token,omitempty"`
	AccessExpires int64  `json:"access_expires"` // Unix milliseconds
	Scope         string `json:"scope"`
}

// successorAAD binds a sealed pair to the spent token (by its hash, as the
// store keys it): a ciphertext moved to another token's row does not open.
func successorAAD(spent string) []byte {
	return []byte("drivemail refresh successor v1\x00" + store.Hash(spent))
}

// sealSuccessor seals resp, the answer to a refresh with spent.
func (s *Server) sealSuccessor(spent string, resp tokenResponse) (store.Sealed, error) {
	plain, err := json.Marshal(successor{
		AccessToken:   resp.AccessToken,
		RefreshToken:  resp.RefreshToken,
		AccessExpires: s.now().Add(time.Duration(resp.ExpiresIn) * time.Second).UnixMilli(),
		Scope:         resp.Scope,
	})
	if err != nil {
		return store.Sealed{}, fmt.Errorf("seal refresh successor: %w", err)
	}
	keyID, sealed, err := s.cfg.Keys.Seal(plain, successorAAD(spent))
	if err != nil {
		return store.Sealed{}, fmt.Errorf("seal refresh successor: %w", err)
	}
	return store.Sealed{KeyID: keyID, Ciphertext: sealed}, nil
}

// openSuccessor answers a reuse of spent with the pair its first use got;
// expires_in counts down from that first answer.
func (s *Server) openSuccessor(spent string, sealed store.Sealed) (tokenResponse, error) {
	plain, err := s.cfg.Keys.Open(sealed.KeyID, sealed.Ciphertext, successorAAD(spent))
	if err != nil {
		return tokenResponse{}, fmt.Errorf("open refresh successor: %w", err)
	}
	var p successor
	if err := json.Unmarshal(plain, &p); err != nil {
		return tokenResponse{}, fmt.Errorf("open refresh successor: %w", err)
	}
	left := time.UnixMilli(p.AccessExpires).Sub(s.now())
	return tokenResponse{
		AccessToken:  p.AccessToken,
		TokenType:    "Bearer",
		ExpiresIn:    max(int64(left/time.Second), 1),
		RefreshToken: p.RefreshToken,
		Scope:        p.Scope,
	}, nil
}
