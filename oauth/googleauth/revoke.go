package googleauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/drivemail/drivemail/store"
)

// Revoke ends the user's Google grant to drivemail at Google (its
// revocation endpoint, as "Remove access" at myaccount.google.com would)
// and marks the stored token dead, so nothing asks Google with it again.
// Revoking the refresh token ends every token of the grant. A user without
// a stored token, or with a dead one, has nothing to revoke.
func (s *Service) Revoke(ctx context.Context, userID string) error {
	row, err := s.cfg.Store.GetGoogleToken(ctx, userID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && row.Dead) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("revoke Google grant: %w", err)
	}
	t, version, err := s.load(ctx, userID)
	if err != nil {
		return fmt.Errorf("revoke Google grant: %w", err)
	}
	tok := t.RefreshToken
	if tok == "" {
		tok = t.AccessToken
	}
	if err := s.revokeAtGoogle(ctx, tok); err != nil {
		return err
	}
	if err := s.cfg.Store.MarkGoogleTokenDead(ctx, userID, version); err != nil && !errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("revoke Google grant: %w", err)
	}
	return nil
}

// revokeAtGoogle posts the token to Google's revocation endpoint. Google
// answers 200, or 400 invalid_token for a token already revoked or
// expired, which is as good.
func (s *Service) revokeAtGoogle(ctx context.Context, tok string) error {
	form := url.Values{"token": {tok}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.Endpoints.RevokeURL(), strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("revoke Google grant: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.cfg.HTTPClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text would carry the URL; the token is in the body, but keep to one shape
		}
		return fmt.Errorf("revoke Google grant: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	switch {
	case resp.StatusCode == http.StatusOK:
		return nil
	case resp.StatusCode == http.StatusBadRequest && strings.Contains(string(body), `"invalid_token"`):
		return nil
	}
	return fmt.Errorf("revoke Google grant: Google answered %d", resp.StatusCode)
}
