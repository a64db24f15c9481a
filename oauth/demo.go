package oauth

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/drivemail/drivemail/store"
)

// DemoClientID names the grant behind tokens minted for demo mode.
const DemoClientID = "drivemail-demo"

// MintAccessToken issues an access token for BASE/mcp to a user who
// already has a stored Google grant (googleauth.Service.SaveGrant),
// without a browser: `serve --demo` prints it as DEMO_TOKEN. It is an
// ordinary token under a grant of its own, checked like any other.
func (s *Server) MintAccessToken(ctx context.Context, userID string, ttl time.Duration) (string, error) {
	if ttl <= 0 {
		ttl = s.cfg.AccessTTL
	}
	if _, err := s.cfg.Store.GetUser(ctx, userID); err != nil {
		return "", fmt.Errorf("mint access token: user %s: %w", userID, err)
	}
	now := s.now()
	g := store.Grant{ID: uuid.NewString(), UserID: userID, ClientID: DemoClientID, Resource: s.resource, Scope: Scope, CreatedAt: now}
	if err := s.cfg.Store.CreateGrant(ctx, g); err != nil {
		return "", fmt.Errorf("mint access token: %w", err)
	}
	tok := newSecret(accessPrefix)
	err := s.cfg.Store.PutToken(ctx, tok, store.Token{Kind: store.AccessToken, GrantID: g.ID, ClientID: DemoClientID,
		UserID: userID, Resource: s.resource, Scope: Scope, ExpiresAt: now.Add(ttl)})
	if err != nil {
		return "", fmt.Errorf("mint access token: %w", err)
	}
	return tok, nil
}
