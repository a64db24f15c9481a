// Package prepared keeps a message that waits for its user's word: a
// send_email or create_draft call that has passed every check, shown to
// the user in the compose view, and sent only when the user presses Send
// there (the tool send_prepared), with their edits.
//
// The message is not stored. Its id is the call itself (the tool and its
// exact arguments), compressed and sealed with AES-256-GCM under a key
// derived from --secret, bound to the user and to a deadline: any replica
// that shares the secret opens it, no byte of it can be read or changed by
// whoever holds it, and another user's token cannot open it. The only
// state is its use: an id is spent once, in the store's single-use keys,
// when its message is sent or cancelled. The send runs every check again,
// since files may have changed while the user read.
package prepared

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/drivemail/drivemail/oauth/keyring"
)

// TTL is how long a prepared message waits for its user: time to read a
// message and mend it.
const TTL = 30 * time.Minute

// MaxCallBytes bounds the arguments of a call that can be prepared, so
// that its id (at most MaxIDBytes, however little the arguments compress)
// and the user's edits fit in the view's send_prepared call, one MCP
// request (4 MiB). A larger call (its content written into the call
// rather than attached from Drive) gets ErrTooLarge from Seal.
const MaxCallBytes = 1536 << 10

// MaxIDBytes bounds an id: a call of MaxCallBytes, sealed.
const MaxIDBytes = 2100 << 10

// maxPlainBytes bounds what an id opens to: a call of MaxCallBytes and
// the few fields around it.
const maxPlainBytes = MaxCallBytes + 4<<10

// Errors of Seal, Open and Spend.
var (
	// ErrTooLarge: the call's arguments are over MaxCallBytes.
	ErrTooLarge = errors.New("prepared: the call is too large to keep in an id")
	// ErrInvalid: not an id this deployment sealed for this user (another
	// user's, a forged or damaged one, one under a retired key).
	ErrInvalid = errors.New("prepared: not an id sealed for this user")
	// ErrExpired: the id is past its deadline.
	ErrExpired = errors.New("prepared: the id has expired")
	// ErrUsed: the id was sent or cancelled already.
	ErrUsed = errors.New("prepared: the id was used already")
)

// Call is what was prepared: the tool and its exact arguments, and the
// revision of the message the user was shown (compose's Summary), which
// the files must still have when the user sends it.
type Call struct {
	Tool     string          `json:"tool"`
	Args     json.RawMessage `json:"args"`
	Revision string          `json:"revision"`
}

// Message is an opened id: the call, and what spending it takes.
type Message struct {
	Call    Call
	Expires time.Time
	nonce   string
}

// Store seals and opens prepared messages and spends them once.
type Store struct {
	ring *keyring.Ring
	// spend records a single-use key until it expires and fails for one
	// already used (the store's UseOnce); it must fail with an error that
	// wraps used for a key used before.
	spend func(ctx context.Context, key string, expires time.Time) error
	used  error
	now   func() time.Time
}

// idPrefix starts every id: its version, then the sealing key's id.
const idPrefix = "dm_pp1."

// purpose derives the sealing keys from --secret, apart from every other
// key the same secret makes.
const purpose = "prepared-message"

// Option tunes a Store.
type Option func(*Store)

// WithClock gives the Store a clock other than time.Now (tests).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// New returns a Store that seals with keys derived from secrets (the
// first seals, all open) and spends ids with spend, whose error for a key
// used before wraps used (store.ErrUsed).
func New(secrets [][]byte, spend func(ctx context.Context, key string, expires time.Time) error, used error, opts ...Option) (*Store, error) {
	ring, err := keyring.New(secrets, purpose)
	if err != nil {
		return nil, fmt.Errorf("prepared: %w", err)
	}
	if spend == nil {
		return nil, errors.New("prepared: no single-use store to spend ids in")
	}
	s := &Store{ring: ring, spend: spend, used: used, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// sealed is an id's plaintext.
type sealed struct {
	Expires int64  `json:"x"` // Unix seconds
	Nonce   string `json:"n"` // the single-use key's name
	Call    Call   `json:"c"`
}

// Seal returns the id of c for userID, and its deadline.
func (s *Store) Seal(userID string, c Call) (string, time.Time, error) {
	if userID == "" {
		return "", time.Time{}, errors.New("prepared: no user to bind the id to")
	}
	if len(c.Args) > MaxCallBytes {
		return "", time.Time{}, ErrTooLarge
	}
	expires := s.now().Add(TTL).Truncate(time.Second)
	var packed bytes.Buffer
	zw, _ := flate.NewWriter(&packed, flate.BestSpeed) // a valid level: no error
	enc := json.NewEncoder(zw)
	// As written: escaping < > & would make a body of them six times as long.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(sealed{Expires: expires.Unix(), Nonce: rand.Text(), Call: c}); err != nil {
		return "", time.Time{}, fmt.Errorf("prepared: encode: %w", err)
	}
	if err := zw.Close(); err != nil {
		return "", time.Time{}, fmt.Errorf("prepared: compress: %w", err)
	}
	keyID, box, err := s.ring.Seal(packed.Bytes(), aad(userID))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("prepared: %w", err)
	}
	return idPrefix + keyID + "." + base64.RawURLEncoding.EncodeToString(box), expires, nil
}

// b64 decodes strictly: one id has exactly one spelling.
var b64 = base64.RawURLEncoding.Strict()

// Open returns the message id holds for userID: ErrInvalid for anything
// not sealed here for this user, ErrExpired past its deadline.
func (s *Store) Open(userID, id string) (Message, error) {
	rest, ok := strings.CutPrefix(id, idPrefix)
	if !ok || len(id) > MaxIDBytes || userID == "" {
		return Message{}, ErrInvalid
	}
	keyID, body, ok := strings.Cut(rest, ".")
	if !ok {
		return Message{}, ErrInvalid
	}
	box, err := b64.DecodeString(body)
	if err != nil {
		return Message{}, ErrInvalid
	}
	packed, err := s.ring.Open(keyID, box, aad(userID))
	if err != nil {
		return Message{}, ErrInvalid
	}
	plain, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(packed)), maxPlainBytes+1))
	if err != nil || len(plain) > maxPlainBytes {
		return Message{}, ErrInvalid
	}
	var v sealed
	if err := json.Unmarshal(plain, &v); err != nil || v.Nonce == "" || v.Call.Tool == "" {
		return Message{}, ErrInvalid
	}
	m := Message{Call: v.Call, Expires: time.Unix(v.Expires, 0), nonce: v.Nonce}
	if !s.now().Before(m.Expires) {
		return m, ErrExpired
	}
	return m, nil
}

// Spend records m's one use: ErrUsed when it was used already. A send
// spends its id once every check has passed, just before the first
// byte; a cancel spends it at once.
func (s *Store) Spend(ctx context.Context, m Message) error {
	if m.nonce == "" {
		return ErrInvalid
	}
	err := s.spend(ctx, "prepared:"+m.nonce, m.Expires.Add(time.Minute))
	switch {
	case err == nil:
		return nil
	case s.used != nil && errors.Is(err, s.used):
		return ErrUsed
	}
	return fmt.Errorf("prepared: record a use: %w", err)
}

// aad binds an id to its user.
func aad(userID string) []byte {
	return []byte("drivemail prepared message v1\x00" + userID)
}
