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
// token cannot use it. It also remembers the two things of its initialize
// later requests need (whether the client can be asked a question, and
// whether it renders views; see sessionFlags), since a stateless server
// has nowhere else to keep them.
//
//	dm_ms_ base64url( key id (4) | nonce (12) | flags (1) | MAC (16) )
const (
	sessionIDPrefix = "dm_ms_"
	// maxSessionIDLen refuses absurd ids before anything else looks at
	// them; drivemail's own are 50 characters.
	maxSessionIDLen = 256
	sessionKeyIDLen = 4
	sessionNonceLen = 12
	sessionFlagsLen = 1
	sessionMACLen   = 16
	sessionBodyLen  = sessionKeyIDLen + sessionNonceLen + sessionFlagsLen
	sessionKeyInfo  = "drivemail mcp session ids v2"
)

// sessionFlags are what a session id says of the initialize that made it.
type sessionFlags byte

const (
	// flagElicitForm: the client declared form elicitation, at a protocol
	// version that has it (2025-06-18 and later), so a tool may ask its
	// user a question on a call's event stream.
	flagElicitForm sessionFlags = 1 << iota
	// flagRendersViews: the client declared the MCP Apps extension for
	// drivemail's view type, so a tool's result may be a view for its
	// user (send_email prepares the message for the compose view).
	flagRendersViews
)

// session is an honoured session id and what it says.
type session struct {
	id    string
	flags sessionFlags
}

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
		mac := deriveKey(secret, sessionKeyInfo)
		k := sessionKey{mac: mac}
		copy(k.id[:], s.sum(mac, []byte("key id")))
		s.keys = append(s.keys, k)
	}
	return s
}

// mint returns a new session id bound to userID, carrying flags.
func (s *sessionIDs) mint(userID string, flags sessionFlags) string {
	k := s.keys[0]
	raw := make([]byte, sessionBodyLen, sessionBodyLen+sessionMACLen)
	copy(raw, k.id[:])
	_, _ = rand.Read(raw[sessionKeyIDLen : sessionKeyIDLen+sessionNonceLen]) // crypto/rand.Read never fails
	raw[sessionBodyLen-1] = byte(flags)
	raw = append(raw, s.tag(k, raw, userID)...)
	return sessionIDPrefix + base64.RawURLEncoding.EncodeToString(raw)
}

// check says what the Mcp-Session-Id values of a request from userID
// amount to, and returns the session when it is honoured.
func (s *sessionIDs) check(userID string, values []string) (session, sessionVerdict) {
	switch {
	case len(values) == 0:
		return session{}, sessionNone
	case len(values) > 1 || !wellFormedSessionID(values[0]):
		return session{}, sessionMalformed
	}
	id := values[0]
	enc, ok := strings.CutPrefix(id, sessionIDPrefix)
	if !ok {
		return session{}, sessionIgnored
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(raw) != sessionBodyLen+sessionMACLen {
		return session{}, sessionIgnored
	}
	body, tag := raw[:sessionBodyLen], raw[sessionBodyLen:]
	for _, k := range s.keys {
		if !hmac.Equal(k.id[:], raw[:sessionKeyIDLen]) {
			continue
		}
		if hmac.Equal(tag, s.tag(k, body, userID)) {
			return session{id: id, flags: sessionFlags(body[sessionBodyLen-1])}, sessionHonoured
		}
		return session{}, sessionForeign
	}
	return session{}, sessionIgnored
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

// deriveKey derives a 32-byte key for one purpose from a --secret
// (HKDF-SHA-256), so that keys for session ids and for a question's state
// share nothing with each other or with token encryption.
func deriveKey(secret []byte, purpose string) []byte {
	// HKDF-SHA-256 cannot fail for a 32-byte key.
	key, _ := hkdf.Key(sha256.New, secret, nil, purpose, 32)
	return key
}
