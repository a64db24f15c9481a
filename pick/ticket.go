package pick

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/drivemail/drivemail/oauth/keyring"
)

// A ticket is the capability in BASE/pick/<ticket>: whose Drive the page
// opens the Picker on, and until when. A page key is what the page that
// spent a ticket posts its choice with: the same user, bound to that one
// ticket, with a deadline of its own. Both are sealed (AES-GCM under a
// key derived from --secret), not stored: any replica that shares the
// secret opens them, and no byte of one can be changed or read by its
// holder. Only a use goes to the store (single use).
//
// Wire form: "p1." + key id + "." + base64url(sealed JSON claims).
type claims struct {
	User    string `json:"u"`
	Expires int64  `json:"x"`           // Unix seconds
	Ticket  string `json:"t,omitempty"` // a page key's ticket (its hash)
}

const (
	ticketPrefix = "p1."
	// maxTicketLen bounds what open will decode: claims hold a user id
	// and a hash.
	maxTicketLen = 512
	// keyPurpose derives the sealing keys from --secret, apart from
	// every other key the same secret makes.
	keyPurpose = "pick-ticket"
)

// What a sealed value is: the associated data keeps a page key from
// passing as a ticket, and the other way round.
var (
	aadTicket  = []byte("drivemail pick ticket v1")
	aadPageKey = []byte("drivemail pick page key v1")
)

// b64 decodes strictly: one value has exactly one spelling.
var b64 = base64.RawURLEncoding.Strict()

// Why a ticket or page key is refused; the page answers with sentences
// of its own.
var (
	errInvalid = errors.New("pick: ticket malformed or not sealed by this server")
	errExpired = errors.New("pick: ticket expired")
)

// sealer seals and opens tickets and page keys.
type sealer struct{ ring *keyring.Ring }

func newSealer(secrets [][]byte) (*sealer, error) {
	ring, err := keyring.New(secrets, keyPurpose)
	if err != nil {
		return nil, fmt.Errorf("pick: %w", err)
	}
	return &sealer{ring: ring}, nil
}

// seal returns the wire form of c as a value of kind aad.
func (s *sealer) seal(c claims, aad []byte) (string, error) {
	plain, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("pick: encode ticket: %w", err)
	}
	keyID, sealed, err := s.ring.Seal(plain, aad)
	if err != nil {
		return "", fmt.Errorf("pick: seal ticket: %w", err)
	}
	return ticketPrefix + keyID + "." + base64.RawURLEncoding.EncodeToString(sealed), nil
}

// open returns the claims of a value of kind aad and whether it is past
// its deadline at now (errExpired, with the claims); anything not sealed
// here as that kind is errInvalid.
func (s *sealer) open(tok string, aad []byte, now time.Time) (claims, error) {
	rest, ok := strings.CutPrefix(tok, ticketPrefix)
	if len(tok) > maxTicketLen || !ok {
		return claims{}, errInvalid
	}
	keyID, body, ok := strings.Cut(rest, ".")
	if !ok {
		return claims{}, errInvalid
	}
	sealed, err := b64.DecodeString(body)
	if err != nil {
		return claims{}, errInvalid
	}
	plain, err := s.ring.Open(keyID, sealed, aad)
	if err != nil {
		return claims{}, errInvalid
	}
	var c claims
	if err := json.Unmarshal(plain, &c); err != nil || c.User == "" || c.Expires == 0 {
		return claims{}, errInvalid
	}
	if !now.Before(time.Unix(c.Expires, 0)) {
		return c, errExpired
	}
	return c, nil
}
