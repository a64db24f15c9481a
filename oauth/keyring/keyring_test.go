package keyring_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/oauth/keyring"
)

func secret(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }

func TestSealOpenRoundTrip(t *testing.T) {
	r, err := keyring.New([][]byte{secret(1, 32)}, "google-token")
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte(`{"refresh_token":"1//abc"}`)
	id, sealed, err := r.Seal(plain, []byte("user-1"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("1//abc")) {
		t.Fatal("sealed value contains the plaintext")
	}
	got, err := r.Open(id, sealed, []byte("user-1"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, want %q", got, plain)
	}
	_, again, _ := r.Seal(plain, []byte("user-1"))
	if bytes.Equal(again, sealed) {
		t.Fatal("two seals of the same value are identical: the nonce is not random")
	}
}

func TestOpenRefusals(t *testing.T) {
	r, _ := keyring.New([][]byte{secret(1, 32)}, "google-token")
	id, sealed, _ := r.Seal([]byte("token"), []byte("user-1"))
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	otherPurpose, _ := keyring.New([][]byte{secret(1, 32)}, "upload-ticket")
	tests := []struct {
		name   string
		ring   *keyring.Ring
		keyID  string
		sealed []byte
		aad    string
	}{
		{"another user's row", r, id, sealed, "user-2"},
		{"tampered ciphertext", r, id, tampered, "user-1"},
		{"truncated", r, id, sealed[:10], "user-1"},
		{"empty", r, id, nil, "user-1"},
		{"same secret, other purpose", otherPurpose, otherPurpose.CurrentKeyID(), sealed, "user-1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.ring.Open(tc.keyID, tc.sealed, []byte(tc.aad)); !errors.Is(err, keyring.ErrOpen) {
				t.Fatalf("Open: %v, want ErrOpen", err)
			}
		})
	}
}

func TestRotation(t *testing.T) {
	old, _ := keyring.New([][]byte{secret(1, 32)}, "google-token")
	oldID, sealed, _ := old.Seal([]byte("token"), []byte("u"))

	rotated, err := keyring.New([][]byte{secret(2, 32), secret(1, 32)}, "google-token")
	if err != nil {
		t.Fatal(err)
	}
	if rotated.CurrentKeyID() == oldID {
		t.Fatal("the new first key kept the old key id")
	}
	if !rotated.NeedsReseal(oldID) || rotated.NeedsReseal(rotated.CurrentKeyID()) {
		t.Fatal("NeedsReseal is wrong after rotation")
	}
	got, err := rotated.Open(oldID, sealed, []byte("u"))
	if err != nil || string(got) != "token" {
		t.Fatalf("a rotated ring opens old values: got %q, %v", got, err)
	}
	newID, resealed, _ := rotated.Seal(got, []byte("u"))
	if newID != rotated.CurrentKeyID() {
		t.Fatal("Seal did not use the first key")
	}

	newOnly, _ := keyring.New([][]byte{secret(2, 32)}, "google-token")
	if _, err := newOnly.Open(newID, resealed, []byte("u")); err != nil {
		t.Fatal(err)
	}
	_, err = newOnly.Open(oldID, sealed, []byte("u"))
	if err == nil || !strings.Contains(err.Error(), "--secret NEW,OLD") {
		t.Fatalf("opening with a dropped key: %v, want advice to keep the old secret", err)
	}
}

func TestNewRefusals(t *testing.T) {
	tests := []struct {
		name    string
		secrets [][]byte
		want    string
	}{
		{"none", nil, "no secret"},
		{"31 bytes", [][]byte{secret(1, 31)}, "at least 32"},
		{"second too short", [][]byte{secret(1, 32), secret(2, 31)}, "secret 2 has 31 bytes"},
		{"repeated", [][]byte{secret(1, 32), secret(1, 32)}, "repeats"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := keyring.New(tc.secrets, "p")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want an error saying %q", err, tc.want)
			}
		})
	}
	if _, err := keyring.New([][]byte{secret(1, 32)}, "p"); err != nil {
		t.Fatalf("exactly 32 bytes refused: %v", err)
	}
}
