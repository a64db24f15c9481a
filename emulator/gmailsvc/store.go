package gmailsvc

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// message is one stored message: sent, or the body of a draft.
type message struct {
	id, threadID string
	user         string
	draftID      string // set while the message is a draft
	labels       []string
	blob         core.Blob
	info         *parsed
	internalDate time.Time
	historyID    uint64
}

// header returns the first value of a top-level header.
func (m *message) header(name string) string { return m.info.get(name) }

// mailbox is one user's messages, newest last.
type mailbox struct {
	messages []*message
	threads  map[string]bool
	history  uint64
}

// newID returns a Gmail-looking message id: 16 hex digits.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	b[0] |= 0x10 // keep all 16 digits
	return fmt.Sprintf("%016x", binary.BigEndian.Uint64(b[:]))
}

// newDraftID returns a Gmail-looking draft id: "r" and 19 digits.
func newDraftID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("r%019d", binary.BigEndian.Uint64(b[:])>>1)
}

// box returns the user's mailbox, creating it. The caller holds s.mu.
func (s *Service) box(user string) *mailbox {
	user = strings.ToLower(user)
	b := s.boxes[user]
	if b == nil {
		b = &mailbox{threads: map[string]bool{}}
		s.boxes[user] = b
	}
	return b
}

// add stores m in its user's mailbox. The caller holds s.mu.
func (s *Service) add(m *message) {
	b := s.box(m.user)
	b.history++
	m.historyID = b.history
	b.messages = append(b.messages, m)
	b.threads[m.threadID] = true
	s.byID[m.id] = m
}

// lookup returns the user's message id, or nil. The caller holds s.mu.
func (s *Service) lookup(user, id string) *message {
	m := s.byID[id]
	if m == nil || m.user != strings.ToLower(user) {
		return nil
	}
	return m
}

// lookupDraft returns the user's draft id, or nil. The caller holds s.mu.
func (s *Service) lookupDraft(user, id string) *message {
	b := s.boxes[strings.ToLower(user)]
	if b == nil || id == "" {
		return nil
	}
	for _, m := range b.messages {
		if m.draftID == id {
			return m
		}
	}
	return nil
}

// threadFor picks the thread of a new message: the one asked for, else
// the thread of the message it replies to when the subjects agree (as
// Gmail threads), else a new thread named by the message id.
// The caller holds s.mu.
func (s *Service) threadFor(user, asked string, info *parsed, id string) string {
	b := s.box(user)
	if asked != "" {
		return asked
	}
	refs := strings.Fields(info.get("In-Reply-To") + " " + info.get("References"))
	subject := baseSubject(decodeWords(info.get("Subject")))
	for i := len(b.messages) - 1; i >= 0; i-- {
		m := b.messages[i]
		mid := strings.TrimSpace(m.header("Message-ID"))
		if mid != "" && slices.Contains(refs, mid) && baseSubject(decodeWords(m.header("Subject"))) == subject {
			return m.threadID
		}
	}
	return id
}

// baseSubject strips the reply and forward prefixes Gmail ignores when threading.
func baseSubject(s string) string {
	for {
		t := strings.TrimSpace(s)
		lower := strings.ToLower(t)
		cut := false
		for _, p := range []string{"re:", "fwd:", "fw:", "aw:"} {
			if strings.HasPrefix(lower, p) {
				t, cut = t[len(p):], true
				break
			}
		}
		if !cut {
			return t
		}
		s = t
	}
}
