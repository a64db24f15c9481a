package googleauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/drivemail/drivemail/internal/refusal"
)

// A pick page hands a Google access token to Google's Picker in the
// user's browser. The stored token carries every scope the user granted
// (gmail.send at least), so the page gets its own: one refresh grant
// that names drive.file alone. RFC 6749 §6 lets a refresh ask for fewer
// scopes than were granted, and Google's own auth library for Python
// sends the scope on a refresh and documents that it must be derivable
// from the refresh token. The token is never stored, and one whose
// answer names any scope but drive.file is refused, not handed on.

// ErrPickerScope (via errors.Is) means the user has not granted
// drive.file, so no Picker token can be had: they must reconnect and
// allow it. Its text is a sentence for the user.
var ErrPickerScope error = refusal.New("picker_scope",
	"Your Google account has not let drivemail open the files you pick (drive.file). Reconnect drivemail (sign in again) and allow it on Google's consent screen.")

// errPickerBroad: Google's answer carried more than drive.file (or did
// not say what it carries); the page gets nothing.
var errPickerBroad = errors.New("google answered a Picker token that may carry more than drive.file")

// maxTokenAnswer bounds the token endpoint's answer.
const maxTokenAnswer = 64 << 10

// PickerToken is an access token of the user's that carries drive.file
// alone, and when it expires, for the pick page to give Google's Picker.
func (s *Service) PickerToken(ctx context.Context, userID string) (string, time.Time, error) {
	cur, version, err := s.load(ctx, userID)
	if err != nil {
		return "", time.Time{}, err
	}
	if cur.RefreshToken == "" {
		return "", time.Time{}, fmt.Errorf("the stored Google token has no refresh token: %w", ErrReconnect)
	}
	if err := s.clientRefused(); err != nil {
		return "", time.Time{}, err
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {cur.RefreshToken},
		"client_id": {s.cfg.ClientID}, "client_secret": {s.cfg.ClientSecret}, "scope": {ScopeDriveFile}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.oauth.Endpoint.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("picker token: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.cfg.HTTPClient.Do(req)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("picker token: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenAnswer))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("picker token: reading Google's answer: %w", err)
	}
	var answer struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		Scope       string `json:"scope"`
		Error       string `json:"error"`
	}
	_ = json.Unmarshal(body, &answer) // a body that is not JSON fails below, by its status or its missing token
	if resp.StatusCode != http.StatusOK {
		if answer.Error == "invalid_scope" {
			return "", time.Time{}, fmt.Errorf("picker token: Google answered %d invalid_scope: %w", resp.StatusCode, ErrPickerScope)
		}
		re := &oauth2.RetrieveError{Response: resp, Body: body, ErrorCode: answer.Error}
		return "", time.Time{}, fmt.Errorf("picker token: %w", s.refreshFailed(ctx, userID, version, re))
	}
	if answer.AccessToken == "" || answer.ExpiresIn <= 0 {
		return "", time.Time{}, errors.New("picker token: Google's answer has no access token or lifetime")
	}
	if granted := strings.Fields(answer.Scope); len(granted) == 0 || slices.ContainsFunc(granted, func(sc string) bool { return sc != ScopeDriveFile }) {
		return "", time.Time{}, fmt.Errorf("picker token: %w (its scope names %d scopes)", errPickerBroad, len(granted))
	}
	return answer.AccessToken, s.cfg.Now().Add(time.Duration(answer.ExpiresIn) * time.Second), nil
}
