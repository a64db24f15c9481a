package benchkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
)

// StartEmulator runs `drivemail emulator --auto-approve` on a free
// loopback port, on the loopback WAN profile; a build without WAN
// profiles is refused.
func StartEmulator(ctx context.Context, drivemail string) (*Proc, error) {
	emu, err := Start(ctx, drivemail, "emulator", "--addr", "127.0.0.1:0", "--auto-approve")
	if err != nil {
		return nil, err
	}
	if _, err := SetWAN(ctx, emu.URL, "loopback"); err != nil {
		emu.Stop()
		return nil, fmt.Errorf("%s's emulator has no WAN profile (give a build with one): %w", drivemail, err)
	}
	return emu, nil
}

// GoogleToken registers email at the emulator and mints a Google access
// token with scopes (full URLs), for calls straight to the emulator.
func GoogleToken(ctx context.Context, emulator, email string, scopes ...string) (string, error) {
	var out struct {
		Token string `json:"access_token"`
	}
	err := emulatorCall(ctx, emulator, http.MethodPost, "/_emulator/users", map[string]any{"email": email, "scopes": scopes}, &out)
	if err == nil && out.Token == "" {
		err = errors.New("no token in the answer")
	}
	if err != nil {
		return "", fmt.Errorf("emulator users: %w", err)
	}
	return out.Token, nil
}

// SetWAN puts the WAN profile spec in force at the emulator (PUT: it
// replaces the one in force) and returns its canonical spec.
func SetWAN(ctx context.Context, emulator, spec string) (string, error) {
	var out struct {
		Spec string `json:"spec"`
	}
	if err := emulatorCall(ctx, emulator, http.MethodPut, "/_emulator/wan", map[string]string{"spec": spec}, &out); err != nil {
		return "", fmt.Errorf("WAN profile %q: %w", spec, err)
	}
	return out.Spec, nil
}

// MessagesSent is the emulator's count of messages Gmail sent.
func MessagesSent(ctx context.Context, emulator string) (int64, error) {
	var out struct {
		Sent int64 `json:"messages_sent"`
	}
	err := emulatorCall(ctx, emulator, http.MethodGet, "/_emulator/stats", nil, &out)
	return out.Sent, err
}

// emulatorCall sends body as JSON to an /_emulator/ route and decodes the
// answer into out.
func emulatorCall(ctx context.Context, emulator, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(ctx, method, emulator+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(raw))
	}
	return json.Unmarshal(raw, out)
}

// PutFile stores a Drive file at the emulator (POST /_emulator/files,
// multipart: meta is the JSON file spec of docs/emulator.md, content
// streams) and returns its id.
func PutFile(ctx context.Context, emulator string, meta map[string]any, content io.Reader) (string, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := func() error {
			m, err := mw.CreateFormField("metadata")
			if err != nil {
				return err
			}
			if err := json.NewEncoder(m).Encode(meta); err != nil {
				return err
			}
			f, err := mw.CreateFormFile("file", "content")
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, content); err != nil {
				return err
			}
			return mw.Close()
		}()
		pw.CloseWithError(err)
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, emulator+"/_emulator/files", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("put file: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		ID string `json:"id"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil || out.ID == "" {
		return "", fmt.Errorf("put file: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(raw))
	}
	return out.ID, nil
}
