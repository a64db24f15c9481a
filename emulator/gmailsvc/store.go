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

// threadFor picks the thread of a new message. Gmail adds a message to a
// thread only when all three of the Message.threadId criteria hold (the
// discovery document): the request names the threadId; References or
// In-Reply-To name, as RFC 2822 has them, a message of that thread; and
// the Subject matches that message's. Anything else starts a new thread,
// named by the message id. The caller holds s.mu and has checked that
// the user has the asked thread.
func (s *Service) threadFor(user, asked string, info *parsed, id string) string {
	if asked == "" {
		return id
	}
	refs := msgIDs(info.get("In-Reply-To") + " " + info.get("References"))
	if len(refs) == 0 {
		return id
	}
	if s.answered(user, asked, refs, baseSubject(decodeWords(info.get("Subject")))) != nil {
		return asked
	}
	return id
}

// answered is the newest of user's messages in thread (in any thread when
// it is "") whose Message-ID refs names and whose subject, reply prefixes
// aside, is subject; nil when there is none. The caller holds s.mu.
func (s *Service) answered(user, thread string, refs []string, subject string) *message {
	b := s.box(user)
	for i := len(b.messages) - 1; i >= 0; i-- {
		m := b.messages[i]
		if thread != "" && m.threadID != thread {
			continue
		}
		mid := msgIDs(m.header("Message-ID"))
		if len(mid) == 1 && slices.Contains(refs, mid[0]) && strings.EqualFold(baseSubject(decodeWords(m.header("Subject"))), subject) {
			return m
		}
	}
	return nil
}

// maxRefIDs bounds the msg-ids read from one message's References and
// In-Reply-To.
const maxRefIDs = 200

// msgIDs returns the msg-ids ("<left@right>") in a header value, in order.
// compose/reply.go reads them the same way, on purpose twice: the
// emulator plays Google's side and imports nothing of the product
// (server/layering_test.go), so a product bug cannot hide in both.
func msgIDs(v string) []string {
	var out []string
	for len(out) < maxRefIDs {
		i := strings.IndexByte(v, '<')
		if i < 0 {
			break
		}
		j := strings.IndexByte(v[i:], '>')
		if j < 0 {
			break
		}
		if id := v[i : i+j+1]; strings.Contains(id, "@") && !strings.ContainsAny(id[1:len(id)-1], "<> \t") {
			out = append(out, id)
		}
		v = v[i+j+1:]
	}
	return out
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
			return strings.Join(strings.Fields(t), " ")
		}
		s = t
	}
}
