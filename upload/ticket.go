package upload

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// A ticket is the capability in BASE/upload/<ticket>: which user's Drive
// the bytes go to and what the request_upload call fixed about them. It is
// signed, not stored: any replica that shares --secret can check it, and
// only its nonce goes to the store, when it is used.
//
// Wire form: "t1." + base64url(JSON claims) + "." + base64url(HMAC-SHA256).
// The MAC covers everything before the last dot, version prefix included.
type claims struct {
	User     string `json:"u"`
	Name     string `json:"n"`
	MimeType string `json:"t,omitempty"`
	Size     *int64 `json:"s,omitempty"` // nil: not declared
	SHA256   string `json:"h,omitempty"`
	Folder   string `json:"f,omitempty"`
	FileID   string `json:"i,omitempty"` // reserved with files.generateIds
	Transfer string `json:"r,omitempty"` // a file-transfer URI's id (fileuri.go)
	Expires  int64  `json:"x"`           // Unix seconds
	Nonce    string `json:"j"`
}

const (
	ticketPrefix = "t1."
	// maxTicketLen bounds what verify will decode: claims hold a user id, a
	// name of at most 255 bytes, a type, a digest and two ids.
	maxTicketLen = 2048
	keyPurpose   = "drivemail/v1/upload-ticket/hmac-sha256"
)

// b64 decodes strictly: one ticket has exactly one spelling.
var b64 = base64.RawURLEncoding.Strict()

// Ticket verification failures. Their texts are for logs; handlers answer
// with sentences of their own.
var (
	errTicketInvalid = errors.New("upload ticket malformed or not signed by this server")
	errTicketExpired = errors.New("upload ticket expired")
)

// signer signs tickets with the first key and accepts any key's signature,
// so --secret can rotate while tickets are in flight.
type signer struct {
	keys [][]byte
}

// newSigner derives one HMAC key per secret. The derivation keeps ticket
// keys unrelated to the keys that seal Google tokens under the same secret.
func newSigner(secrets [][]byte) (*signer, error) {
	if len(secrets) == 0 {
		return nil, errors.New("upload: no secret to sign tickets with; set --secret")
	}
	s := &signer{}
	for i, sec := range secrets {
		if len(sec) < 32 {
			return nil, fmt.Errorf("upload: secret %d has %d bytes; it needs at least 32", i+1, len(sec))
		}
		k, err := hkdf.Key(sha256.New, sec, nil, keyPurpose, 32)
		if err != nil {
			return nil, fmt.Errorf("upload: derive ticket key: %w", err)
		}
		s.keys = append(s.keys, k)
	}
	return s, nil
}

func (s *signer) mac(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// sign returns the wire form of c, with a fresh nonce.
func (s *signer) sign(c claims) (string, error) {
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", fmt.Errorf("upload: nonce: %w", err)
	}
	c.Nonce = base64.RawURLEncoding.EncodeToString(nonce[:])
	// Without HTML escaping, which would spell each & < > of a name in six
	// bytes and let a long name push the ticket past maxTicketLen.
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return "", fmt.Errorf("upload: encode ticket: %w", err)
	}
	msg := ticketPrefix + base64.RawURLEncoding.EncodeToString(bytes.TrimSuffix(body.Bytes(), []byte("\n")))
	tok := msg + "." + base64.RawURLEncoding.EncodeToString(s.mac(s.keys[0], msg))
	if len(tok) > maxTicketLen {
		return "", fmt.Errorf("upload: ticket of %d bytes is longer than %d", len(tok), maxTicketLen)
	}
	return tok, nil
}

// verify checks the signature with every key, then the expiry against now.
func (s *signer) verify(tok string, now time.Time) (claims, error) {
	if len(tok) > maxTicketLen || !strings.HasPrefix(tok, ticketPrefix) {
		return claims{}, errTicketInvalid
	}
	i := strings.LastIndexByte(tok, '.')
	msg, sigText := tok[:i], tok[i+1:]
	sig, err := b64.DecodeString(sigText)
	if err != nil {
		return claims{}, errTicketInvalid
	}
	ok := false
	for _, k := range s.keys {
		if hmac.Equal(sig, s.mac(k, msg)) {
			ok = true
			break
		}
	}
	if !ok {
		return claims{}, errTicketInvalid
	}
	body, err := b64.DecodeString(strings.TrimPrefix(msg, ticketPrefix))
	if err != nil {
		return claims{}, errTicketInvalid
	}
	var c claims
	if err := json.Unmarshal(body, &c); err != nil || c.User == "" || c.Name == "" || c.Nonce == "" {
		return claims{}, errTicketInvalid
	}
	if !now.Before(time.Unix(c.Expires, 0)) {
		return c, errTicketExpired
	}
	return c, nil
}
