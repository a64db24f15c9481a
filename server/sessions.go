package server

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// MCP session ids. drivemail keeps no session state: any request may come
// without an id (Claude.ai never sends one) and any replica answers it. It
// still gives an id on initialize, for clients that like one, and that id
// carries a MAC of the user it was given to, under a key derived from
// --secret: a replica checks it with no shared table, and another user's
// token cannot use it.
//
//	dm_ms_ base64url( key id (4) | nonce (12) | MAC (16) )
const (
	sessionIDPrefix = "dm_ms_"
	// maxSessionIDLen refuses absurd ids before anything else looks at
	// them; drivemail's own are 49 characters.
	maxSessionIDLen = 256
	sessionKeyIDLen = 4
	sessionNonceLen = 12
	sessionMACLen   = 16
	sessionKeyInfo  = "drivemail mcp session ids v1"
)

// sessionVerdict is what a request's Mcp-Session-Id header amounts to.
type sessionVerdict int

const (
	// sessionNone: no id; the request is served as any other.
	sessionNone sessionVerdict = iota
	// sessionHonoured: an id this deployment gave to this user.
	sessionHonoured
	// sessionIgnored: an id drivemail cannot have given under its current
	// keys (another server's, one from before a key was retired): served
	// as if there were none, never a 404.
	sessionIgnored
	// sessionForeign: an id given to another user; refused with 404.
	sessionForeign
	// sessionMalformed: several ids, an absurdly long one, or characters
	// the transport spec does not allow; refused with 400.
	sessionMalformed
)

type sessionKey struct {
	id  [sessionKeyIDLen]byte
	mac []byte
}

// sessionIDs mints and checks session ids. The first key mints; every key
// checks, so ids survive a --secret rotation while the old key is listed.
type sessionIDs struct {
	keys []sessionKey
}

// newSessionIDs derives the session keys from the server's secrets (HKDF,
// bound to this purpose). With none (tests), it makes a random key: ids
// then hold for this process only.
func newSessionIDs(secrets [][]byte) *sessionIDs {
	if len(secrets) == 0 {
		secrets = [][]byte{[]byte(rand.Text())}
	}
	s := &sessionIDs{}
	for _, secret := range secrets {
		// HKDF-SHA-256 cannot fail for a 32-byte key.
		mac, _ := hkdf.Key(sha256.New, secret, nil, sessionKeyInfo, 32)
		k := sessionKey{mac: mac}
		copy(k.id[:], s.sum(mac, []byte("key id")))
		s.keys = append(s.keys, k)
	}
	return s
}

// mint returns a new session id bound to userID.
func (s *sessionIDs) mint(userID string) string {
	k := s.keys[0]
	raw := make([]byte, sessionKeyIDLen+sessionNonceLen, sessionKeyIDLen+sessionNonceLen+sessionMACLen)
	copy(raw, k.id[:])
	_, _ = rand.Read(raw[sessionKeyIDLen:]) // crypto/rand.Read never fails
	raw = append(raw, s.tag(k, raw, userID)...)
	return sessionIDPrefix + base64.RawURLEncoding.EncodeToString(raw)
}

// check says what the Mcp-Session-Id values of a request from userID
// amount to, and returns the id when it is honoured.
func (s *sessionIDs) check(userID string, values []string) (string, sessionVerdict) {
	switch {
	case len(values) == 0:
		return "", sessionNone
	case len(values) > 1 || !wellFormedSessionID(values[0]):
		return "", sessionMalformed
	}
	id := values[0]
	enc, ok := strings.CutPrefix(id, sessionIDPrefix)
	if !ok {
		return "", sessionIgnored
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(raw) != sessionKeyIDLen+sessionNonceLen+sessionMACLen {
		return "", sessionIgnored
	}
	body, tag := raw[:sessionKeyIDLen+sessionNonceLen], raw[sessionKeyIDLen+sessionNonceLen:]
	for _, k := range s.keys {
		if !hmac.Equal(k.id[:], raw[:sessionKeyIDLen]) {
			continue
		}
		if hmac.Equal(tag, s.tag(k, body, userID)) {
			return id, sessionHonoured
		}
		return "", sessionForeign
	}
	return "", sessionIgnored
}

// tag is the MAC binding an id's key id and nonce to a user.
func (s *sessionIDs) tag(k sessionKey, body []byte, userID string) []byte {
	msg := make([]byte, 0, len(body)+1+len(userID))
	msg = append(msg, body...)
	msg = append(msg, 0)
	msg = append(msg, userID...)
	return s.sum(k.mac, msg)[:sessionMACLen]
}

func (s *sessionIDs) sum(key, msg []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(msg)
	return h.Sum(nil)
}

// wellFormedSessionID: 1 to maxSessionIDLen visible ASCII characters, as
// the transport spec says a session id is.
func wellFormedSessionID(id string) bool {
	if id == "" || len(id) > maxSessionIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}
