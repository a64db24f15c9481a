package prepared

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

var errUsedBefore = errors.New("used before")

// onceKeys is the store's single-use keys, in memory.
type onceKeys struct {
	mu   sync.Mutex
	used map[string]time.Time
}

func (o *onceKeys) UseOnce(_ context.Context, key string, expires time.Time) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.used == nil {
		o.used = map[string]time.Time{}
	}
	if _, ok := o.used[key]; ok {
		return errUsedBefore
	}
	o.used[key] = expires
	return nil
}

func secret(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func newStore(t *testing.T, once *onceKeys, now *time.Time, secrets ...[]byte) *Store {
	t.Helper()
	s, err := New(secrets, once.UseOnce, errUsedBefore, WithClock(func() time.Time { return *now }))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var call = Call{Tool: "send_email", Args: json.RawMessage(`{"to":["ana@example.com"],"subject":"Q3 <report> & co","body_text":"Hi"}`)}

// An id opens to exactly the call it was sealed from, for its user, until
// its deadline, under any key still listed.
func TestIDOpensForItsUserUntilItsDeadline(t *testing.T) {
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	once := &onceKeys{}
	s := newStore(t, once, &now, secret(1))
	id, expires, err := s.Seal("user-1", call)
	if err != nil {
		t.Fatal(err)
	}
	if !expires.Equal(now.Add(TTL)) {
		t.Errorf("expires %v, want %v", expires, now.Add(TTL))
	}
	for _, tc := range []struct {
		name    string
		secrets [][]byte
		user    string
		at      time.Time
		want    error
	}{
		{"its user", [][]byte{secret(1)}, "user-1", now, nil},
		{"a second before its deadline", [][]byte{secret(1)}, "user-1", now.Add(TTL - time.Second), nil},
		{"at its deadline", [][]byte{secret(1)}, "user-1", now.Add(TTL), ErrExpired},
		{"another user", [][]byte{secret(1)}, "user-2", now, ErrInvalid},
		{"no user", [][]byte{secret(1)}, "", now, ErrInvalid},
		{"after a rotation that lists the old secret", [][]byte{secret(2), secret(1)}, "user-1", now, nil},
		{"after the old secret is retired", [][]byte{secret(2)}, "user-1", now, ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := tc.at
			m, err := newStore(t, once, &at, tc.secrets...).Open(tc.user, id)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open: %v, want %v", err, tc.want)
			}
			if err == nil && (m.Call.Tool != call.Tool || string(m.Call.Args) != string(call.Args)) {
				t.Errorf("opened %s %s, want %s %s", m.Call.Tool, m.Call.Args, call.Tool, call.Args)
			}
		})
	}
}

// Nothing but an id sealed here opens: a changed byte, a cut one, another
// prefix, another key id, garbage.
func TestDamagedIDsDoNotOpen(t *testing.T) {
	now := time.Now()
	s := newStore(t, &onceKeys{}, &now, secret(1))
	id, _, err := s.Seal("user-1", call)
	if err != nil {
		t.Fatal(err)
	}
	prefix, body, _ := strings.Cut(strings.TrimPrefix(id, idPrefix), ".")
	raw, _ := base64.RawURLEncoding.DecodeString(body)
	flipped := append([]byte(nil), raw...)
	flipped[len(flipped)/2] ^= 1
	for name, bad := range map[string]string{
		"empty":           "",
		"a flipped byte":  idPrefix + prefix + "." + base64.RawURLEncoding.EncodeToString(flipped),
		"cut short":       id[:len(id)-4],
		"another version": "dm_pp2." + prefix + "." + body,
		"another key id":  idPrefix + "000000000000." + body,
		"no key id":       idPrefix + body,
		"not base64":      idPrefix + prefix + ".!!!",
		"padded base64":   id + "==",
		"far too long":    idPrefix + prefix + "." + strings.Repeat("A", MaxIDBytes),
	} {
		if _, err := s.Open("user-1", bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Open = %v, want ErrInvalid", name, err)
		}
	}
}

// An id is spent once: a second send or cancel of the same message, here
// or on another replica sharing the store, is ErrUsed. Two ids of the same
// call are two messages.
func TestIDIsSpentOnce(t *testing.T) {
	now := time.Now()
	once := &onceKeys{}
	s := newStore(t, once, &now, secret(1))
	other := newStore(t, once, &now, secret(1)) // another replica
	id, _, err := s.Seal("user-1", call)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Open("user-1", id)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Spend(context.Background(), m); err != nil {
		t.Fatalf("first use: %v", err)
	}
	again, err := other.Open("user-1", id)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Spend(context.Background(), again); !errors.Is(err, ErrUsed) {
		t.Errorf("second use: %v, want ErrUsed", err)
	}
	id2, _, err := s.Seal("user-1", call)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := s.Open("user-1", id2)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Spend(context.Background(), m2); err != nil {
		t.Errorf("another id of the same call: %v", err)
	}
	for key, exp := range once.used {
		if !exp.After(m.Expires) {
			t.Errorf("single-use key %s kept until %v, before the id's deadline %v", key, exp, m.Expires)
		}
	}
	if err := s.Spend(context.Background(), Message{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a message not opened: %v, want ErrInvalid", err)
	}
}

// A store failure is not a use: it is an error of its own.
func TestSpendReportsAStoreFailure(t *testing.T) {
	down := errors.New("database is down")
	s, err := New([][]byte{secret(1)}, func(context.Context, string, time.Time) error { return down }, errUsedBefore)
	if err != nil {
		t.Fatal(err)
	}
	id, _, _ := s.Seal("user-1", call)
	m, _ := s.Open("user-1", id)
	if err := s.Spend(context.Background(), m); !errors.Is(err, down) || errors.Is(err, ErrUsed) {
		t.Errorf("Spend = %v, want the store's error", err)
	}
}

// A call of MaxCallBytes is prepared, one byte more is not; and however
// little it compresses, its id stays under MaxIDBytes and opens again.
func TestCallSizeLimit(t *testing.T) {
	now := time.Now()
	s := newStore(t, &onceKeys{}, &now, secret(1))
	noise := make([]byte, MaxCallBytes)
	_, _ = rand.Read(noise)
	// A JSON string of base64: about as incompressible as JSON gets.
	text := base64.StdEncoding.EncodeToString(noise)
	at := func(n int) Call {
		args := `{"body_text":"` + text[:n-len(`{"body_text":""}`)] + `"}`
		return Call{Tool: "send_email", Args: json.RawMessage(args)}
	}
	id, _, err := s.Seal("user-1", at(MaxCallBytes))
	if err != nil {
		t.Fatalf("a call of MaxCallBytes: %v", err)
	}
	if len(id) > MaxIDBytes {
		t.Errorf("its id is %d bytes, over MaxIDBytes %d", len(id), MaxIDBytes)
	}
	if m, err := s.Open("user-1", id); err != nil || len(m.Call.Args) != MaxCallBytes {
		t.Errorf("Open: %d bytes, %v", len(m.Call.Args), err)
	}
	if _, _, err := s.Seal("user-1", at(MaxCallBytes+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("one byte more: %v, want ErrTooLarge", err)
	}
}

// A body of markup keeps its size in the id (no HTML escaping), and a
// call without a user or a store is refused.
func TestSealEdges(t *testing.T) {
	now := time.Now()
	s := newStore(t, &onceKeys{}, &now, secret(1))
	markup := Call{Tool: "send_email", Args: json.RawMessage(`{"body_html":"` + strings.Repeat("<b>&</b>", 100_000) + `"}`)}
	id, _, err := s.Seal("user-1", markup)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := s.Open("user-1", id); err != nil || string(m.Call.Args) != string(markup.Args) {
		t.Errorf("a body of markup did not come back as it went: %v", err)
	}
	if _, _, err := s.Seal("", call); err == nil {
		t.Error("sealed an id for no user")
	}
	if _, err := New([][]byte{secret(1)}, nil, nil); err == nil {
		t.Error("a Store without single-use keys was made")
	}
	if _, err := New([][]byte{[]byte("short")}, (&onceKeys{}).UseOnce, nil); err == nil {
		t.Error("a Store with a short secret was made")
	}
}
