// Package keyring seals small secrets (Google tokens) at rest with
// AES-256-GCM under keys derived from --secret. The ring supports rotation:
// the first key seals, every key opens, and each sealed value names the
// key that sealed it.
package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// MinSecretLen is the shortest secret accepted, in bytes.
const MinSecretLen = 32

// ErrOpen means a sealed value could not be opened: wrong key, wrong
// associated data, or tampered ciphertext. It says no more, on purpose.
var ErrOpen = errors.New("keyring: cannot open sealed value")

// Ring is an ordered set of keys for one purpose.
type Ring struct {
	keys []key
}

type key struct {
	id   string
	aead cipher.AEAD
}

// New derives one AES-256-GCM key per secret for purpose (for example
// "google-token"): the same secret yields unrelated keys for different
// purposes. The first secret seals; all open.
func New(secrets [][]byte, purpose string) (*Ring, error) {
	if len(secrets) == 0 {
		return nil, errors.New("keyring: no secret given; set --secret to a base64 key of at least 32 bytes (openssl rand -base64 32)")
	}
	if purpose == "" {
		return nil, errors.New("keyring: empty purpose")
	}
	r := &Ring{}
	seen := map[string]bool{}
	for i, s := range secrets {
		if len(s) < MinSecretLen {
			return nil, fmt.Errorf("keyring: secret %d has %d bytes; it needs at least %d", i+1, len(s), MinSecretLen)
		}
		k, err := hkdf.Key(sha256.New, s, nil, "drivemail/v1/"+purpose+"/aes-256-gcm", 32)
		if err != nil {
			return nil, fmt.Errorf("keyring: derive key: %w", err)
		}
		idBytes, err := hkdf.Key(sha256.New, s, nil, "drivemail/v1/"+purpose+"/key-id", 6)
		if err != nil {
			return nil, fmt.Errorf("keyring: derive key id: %w", err)
		}
		id := hex.EncodeToString(idBytes)
		if seen[id] {
			return nil, fmt.Errorf("keyring: secret %d repeats an earlier one", i+1)
		}
		seen[id] = true
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("keyring: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("keyring: %w", err)
		}
		r.keys = append(r.keys, key{id: id, aead: aead})
	}
	return r, nil
}

// CurrentKeyID names the key Seal uses.
func (r *Ring) CurrentKeyID() string { return r.keys[0].id }

// Seal encrypts plaintext with the current key. aad is authenticated but
// not stored: Open must be given the same (bind it to the row's owner so a
// ciphertext copied to another user's row does not open).
func (r *Ring) Seal(plaintext, aad []byte) (keyID string, sealed []byte, err error) {
	k := r.keys[0]
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", nil, fmt.Errorf("keyring: nonce: %w", err)
	}
	return k.id, k.aead.Seal(nonce, nonce, plaintext, aad), nil
}

// Open decrypts a value sealed by the key keyID.
func (r *Ring) Open(keyID string, sealed, aad []byte) ([]byte, error) {
	for _, k := range r.keys {
		if k.id != keyID {
			continue
		}
		n := k.aead.NonceSize()
		if len(sealed) < n+k.aead.Overhead() {
			return nil, ErrOpen
		}
		plain, err := k.aead.Open(nil, sealed[:n], sealed[n:], aad)
		if err != nil {
			return nil, ErrOpen
		}
		return plain, nil
	}
	return nil, fmt.Errorf("keyring: the value was sealed with key %s, which is not among the --secret keys; add the old secret after the new one (--secret NEW,OLD)", keyID)
}

// NeedsReseal reports whether a value sealed by keyID should be sealed
// again with the current key (after a rotation).
func (r *Ring) NeedsReseal(keyID string) bool { return keyID != r.keys[0].id }
