package gmailsvc

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/mail"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// Mail from other senders: Gmail's receiving side, as far as drivemail
// reads it. A delivered message is stored as it came, with a Date and a
// Message-ID added when it has none (as Gmail adds them on receipt), and
// labelled INBOX and UNREAD. Its internalDate is its Date header, the way
// Gmail dates imported mail (the discovery document's
// Message.internalDate), else the time it arrived. It joins a thread of
// the mailbox when it answers a message of that thread (In-Reply-To or
// References name its Message-ID) under the same subject, reply prefixes
// aside, as Gmail threads what it receives; otherwise it starts one.

// Delivered says where a delivered message went.
type Delivered struct {
	ID       string `json:"id"`
	ThreadID string `json:"threadId"`
}

// ErrNotMessage: the content is not an RFC 822 message the emulator can file.
var ErrNotMessage = errors.New("not an RFC 822 message")

// Deliver files raw (a whole RFC 822 message, at most MaxMessageSize
// bytes) into user's inbox, as mail someone else sent.
func (s *Service) Deliver(user string, raw io.Reader) (Delivered, error) {
	bw, err := s.deps.Blobs.Create()
	if err != nil {
		return Delivered{}, err
	}
	n, err := io.Copy(bw, io.LimitReader(raw, MaxMessageSize+1))
	if err != nil {
		bw.Abort()
		return Delivered{}, err
	}
	if n > MaxMessageSize {
		bw.Abort()
		return Delivered{}, fmt.Errorf("%w: over %d bytes", ErrNotMessage, MaxMessageSize)
	}
	blob, err := bw.Commit()
	if err != nil {
		return Delivered{}, err
	}
	return s.receive(strings.ToLower(user), blob)
}

// receive files blob for user; it owns blob.
func (s *Service) receive(user string, blob core.Blob) (Delivered, error) {
	info, err := s.parseBlob(blob)
	if err != nil {
		s.release(blob)
		return Delivered{}, fmt.Errorf("%w: %v", ErrNotMessage, err)
	}
	now := s.deps.Now()
	var add []string
	if info.get("Date") == "" {
		add = append(add, "Date: "+now.Format(time.RFC1123Z))
	}
	if info.get("Message-ID") == "" {
		add = append(add, "Message-ID: <emu-"+core.RandomID(18)+"@mail.gmail.com>")
	}
	if len(add) > 0 {
		fixed, err := s.rewriteHeader(blob, info, add, true)
		s.release(blob)
		if err != nil {
			return Delivered{}, err
		}
		blob = fixed
		if info, err = s.parseBlob(blob); err != nil {
			s.release(blob)
			return Delivered{}, err
		}
	}
	date := now
	if d, err := mail.ParseDate(info.get("Date")); err == nil {
		date = d
	}
	m := &message{id: newID(), user: user, blob: blob, info: info, internalDate: date, labels: []string{"INBOX", "UNREAD"}}
	s.mu.Lock()
	m.threadID = s.receivedThread(user, info, m.id)
	s.add(m)
	s.mu.Unlock()
	return Delivered{ID: m.id, ThreadID: m.threadID}, nil
}

// receivedThread is the thread a received message joins: that of the
// newest message it answers under the same subject, else its own. The
// caller holds s.mu.
func (s *Service) receivedThread(user string, info *parsed, id string) string {
	refs := msgIDs(info.get("In-Reply-To") + " " + info.get("References"))
	if len(refs) == 0 {
		return id
	}
	if m := s.answered(user, "", refs, baseSubject(decodeWords(info.get("Subject")))); m != nil {
		return m.threadID
	}
	return id
}

// mailFolder is the folder of a seed's user folder whose .eml files are
// delivered to that user's inbox.
const mailFolder = "_mail"

// SeedFS delivers the mail of a seed (docs/emulator.md, "Seed folders"):
// every EMAIL/_mail/*.eml, in name order, into EMAIL's inbox. Other
// files and folders are Drive's.
func (s *Service) SeedFS(fsys fs.FS) error {
	users, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return fmt.Errorf("seed mail: %w", err)
	}
	for _, u := range users {
		if !u.IsDir() || strings.HasPrefix(u.Name(), ".") {
			continue
		}
		if err := s.seedSendAs(fsys, u.Name()); err != nil {
			return err
		}
		dir := path.Join(u.Name(), mailFolder)
		entries, err := fs.ReadDir(fsys, dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("seed mail: %w", err)
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			if !e.Type().IsRegular() || !strings.HasSuffix(strings.ToLower(e.Name()), ".eml") {
				continue
			}
			if err := s.seedOne(fsys, u.Name(), path.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Service) seedOne(fsys fs.FS, user, name string) error {
	f, err := fsys.Open(name)
	if err != nil {
		return fmt.Errorf("seed mail: %w", err)
	}
	defer f.Close()
	if _, err := s.Deliver(user, f); err != nil {
		return fmt.Errorf("seed mail %s: %w", name, err)
	}
	return nil
}

// registerInbox adds POST /_emulator/gmail/inbox?user=EMAIL: the body, a
// whole message (message/rfc822), is delivered to that user's inbox.
func (s *Service) registerInbox(mux *http.ServeMux) {
	mux.HandleFunc("POST /_emulator/gmail/inbox", func(w http.ResponseWriter, r *http.Request) {
		user := r.URL.Query().Get("user")
		if !strings.Contains(user, "@") {
			core.WriteError(w, http.StatusBadRequest, "badRequest", "Give the recipient as ?user=EMAIL and the message as the body.")
			return
		}
		d, err := s.Deliver(user, http.MaxBytesReader(w, r.Body, MaxMessageSize))
		if err != nil {
			core.WriteError(w, http.StatusBadRequest, "badRequest", "The body is not a message the emulator can deliver: "+err.Error()+".")
			return
		}
		core.WriteJSON(w, http.StatusOK, d)
	})
}
