package compose

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/drivemail/drivemail/gmail"
)

// Gmail adds a message to a thread only when all three criteria of the
// discovery document's Message.threadId hold: the request names the
// threadId, the References and In-Reply-To headers are set per RFC 2822,
// and the Subject matches. Without a read scope (serve --read-mail)
// drivemail cannot look up the Message-ID or subject of the message being
// answered (users.messages.get needs one): the caller gives them, and
// drivemail sets the headers from them. With one, reply_to does the
// lookup (reply.go) and hands replyHeaders a complete request, and a
// thread_id reply reads its thread (withThreadSubject): given alone, it
// answers the thread's latest message, and it gets its thread's subject
// when its own is another, since Gmail would otherwise start a new
// conversation.

// MaxReferenceEntries bounds the references a request may give; the
// References header keeps the first and the latest mimemsg.MaxReferences.
const MaxReferenceEntries = 100

// replyHeaders checks a reply's thread_id, in_reply_to and references and
// completes them as RFC 5322 §3.6.4 has them: In-Reply-To is the parent's
// Message-ID, and References ends with it. It also gives a reply
// without a reply prefix the subject "Re: <subject>", as mail programs
// do. The result's Subject is what will be sent.
func replyHeaders(req Request) (Request, error) {
	if threadAlone(req) {
		// withThreadSubject completes it where it could read the thread.
		return req, refuse(kindThreadWithoutReply, "\"thread_id\" alone cannot put the message in that conversation: Gmail adds a message to a thread only when it also "+
			"answers a message of the thread by its Message-ID and keeps the thread's subject, and drivemail could not read the thread to find them. "+
			"Pass in_reply_to: the message_id that send_email or create_draft returned for the message being answered, or the Message-ID header of "+
			"the latest message in the thread. Or leave thread_id out to start a new conversation.")
	}
	if len(req.References) > MaxReferenceEntries {
		return req, refuse(kindInvalidReplyTo, "\"references\" has %d entries; give at most %d, the latest ones (the Message-IDs of the conversation, oldest first).",
			len(req.References), MaxReferenceEntries)
	}
	parent := strings.TrimSpace(req.InReplyTo)
	if parent == "" && len(req.References) > 0 {
		ids := strings.Fields(strings.ReplaceAll(strings.ReplaceAll(req.References[len(req.References)-1], ",", " "), "><", "> <"))
		if len(ids) > 0 {
			parent = ids[len(ids)-1]
		}
	}
	if parent == "" {
		return req, nil
	}
	req.InReplyTo = parent
	if !containsID(req.References, parent) {
		req.References = append(append([]string(nil), req.References...), parent)
	}
	if !hasReplyPrefix(req.Subject) {
		req.Subject = "Re: " + strings.TrimSpace(req.Subject)
	}
	return req, nil
}

// threadAlone reports whether req names a thread but no message of it
// to answer.
func threadAlone(req Request) bool {
	return req.ThreadID != "" && strings.TrimSpace(req.InReplyTo) == "" && len(req.References) == 0
}

// containsID reports whether any of refs (each may hold several ids)
// names id, with or without angle brackets.
func containsID(refs []string, id string) bool {
	bare := func(s string) string { return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "<"), ">") }
	want := bare(id)
	for _, r := range refs {
		for _, f := range strings.FieldsFunc(strings.ReplaceAll(r, "><", "> <"), func(c rune) bool { return c == ' ' || c == ',' || c == '\t' }) {
			if bare(f) == want {
				return true
			}
		}
	}
	return false
}

// replyPrefixes, lower-case, start a reply's or a forward's subject
// ("Re:", "RE:", "Fwd:", "Fw:", "Aw:"); Gmail sets them aside when it
// matches a reply's subject with its thread's.
var replyPrefixes = []string{"re:", "fwd:", "fw:", "aw:"}

// replyPrefix is the reply prefix s starts with, lower-case, or "".
func replyPrefix(s string) string {
	lower := strings.ToLower(s)
	for _, p := range replyPrefixes {
		if strings.HasPrefix(lower, p) {
			return p
		}
	}
	return ""
}

// hasReplyPrefix reports whether a subject starts as a reply or forward
// does.
func hasReplyPrefix(subject string) bool {
	return replyPrefix(strings.TrimSpace(subject)) != ""
}

// threadReader is what compose needs of Gmail to read a thread:
// *gmail.Client.
type threadReader interface {
	Thread(ctx context.Context, id string) ([]gmail.Message, error)
}

// withThreadSubject completes a thread_id reply from its thread. Given
// alone (no in_reply_to or references), it answers the thread's latest
// message (answerLatest). It gives the reply the subject Gmail threads it
// on when its own is another (sameSubject): "Re: " and the subject of
// the message it answers, the newest of the thread whose Message-ID
// in_reply_to or references name, else of the thread's first message.
// It reads the thread with one threads.get, so the caller runs it only
// where the user may read mail, before anything is downloaded. It leaves
// alone a request that validate will refuse, and a reply_to's, which
// has its subject from the message it answers. A thread Gmail does not
// know is refused here, where it would otherwise fail at the send; a
// token that turns out unable to read leaves the request as it is (and
// replyHeaders refuses a thread_id alone).
func withThreadSubject(ctx context.Context, r threadReader, req Request, draft bool) (Request, error) {
	alone := threadAlone(req)
	refs := append(append([]string(nil), req.References...), req.InReplyTo)
	if req.ThreadID == "" || req.ReplyTo.ID != "" || !validThreadID(req.ThreadID) || len(req.References) > MaxReferenceEntries ||
		!alone && strings.TrimSpace(strings.Join(refs, "")) == "" {
		return req, nil
	}
	msgs, err := mailRetry(ctx, func() ([]gmail.Message, error) { return r.Thread(ctx, req.ThreadID) })
	switch {
	case errors.Is(err, gmail.ErrScope), errors.Is(err, gmail.ErrAnswerTooLarge):
		return req, nil // as without a read scope: the result says what Gmail did
	case err != nil:
		return req, threadLookupError(err, req.ThreadID, draft)
	case alone:
		if req, err = answerLatest(req, msgs, draft); err != nil {
			return req, err
		}
		refs = req.References
	case len(msgs) == 0:
		return req, nil
	}
	want := msgs[0].Subject
	for i := len(msgs) - 1; i >= 0; i-- {
		if id := strings.TrimSpace(msgs[i].MessageID); id != "" && containsID(refs, id) {
			want = msgs[i].Subject
			break
		}
	}
	if sameSubject(req.Subject, want) {
		return req, nil
	}
	req.Subject, req.subjectFromThread = prefixed("Re: ", want, "re:"), true
	return req, nil
}

// answerLatest completes a thread_id given alone from its thread's
// messages, oldest first, as Gmail's own reply would: In-Reply-To is the
// Message-ID of the latest message sent or received, and References the
// thread's Message-IDs, oldest first, each where it last appears; past
// MaxReferenceEntries the first and the latest, as reply_to keeps them.
// A draft is no message to answer: no one received it. A message whose
// Message-ID mimemsg would refuse is passed over, as the refusal would
// blame the caller's references for it.
func answerLatest(req Request, msgs []gmail.Message, draft bool) (Request, error) {
	seen := make(map[string]bool, len(msgs))
	var ids []string // newest first
	for i := len(msgs) - 1; i >= 0; i-- {
		id := answerableID(msgs[i])
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return req, refuse(kindThreadWithoutReply, "Thread %s has no sent or received message with a Message-ID to answer, so Gmail would not add this message to it. %s "+
			"Leave thread_id out to start a new conversation.", req.ThreadID, nothing(draft))
	}
	slices.Reverse(ids)
	ids = firstAndLatest(ids)
	req.InReplyTo, req.References = ids[len(ids)-1], ids
	return req, nil
}

// firstAndLatest is a conversation's Message-IDs, oldest first, cut to
// MaxReferenceEntries as RFC 5322 §3.6.4 suggests trimming References:
// the first, which names the conversation, and the latest.
func firstAndLatest(ids []string) []string {
	if len(ids) <= MaxReferenceEntries {
		return ids
	}
	return append(ids[:1:1], ids[len(ids)-MaxReferenceEntries+1:]...)
}

// answerableID is m's Message-ID when a reply may name it, else "": m
// is not a draft, and its Message-ID is one msg-id as mimemsg's
// normMsgID accepts it (left@right of at most 500 characters with its
// brackets, printable ASCII but for <>()\",;: and space).
func answerableID(m gmail.Message) string {
	if slices.Contains(m.Labels, "DRAFT") {
		return ""
	}
	ids := msgIDs(m.MessageID)
	if len(ids) != 1 || len(ids[0]) > 500 {
		return ""
	}
	bare := ids[0][1 : len(ids[0])-1]
	if at := strings.LastIndexByte(bare, '@'); at <= 0 || at == len(bare)-1 {
		return ""
	}
	for i := 0; i < len(bare); i++ {
		if c := bare[i]; c <= ' ' || c >= 0x7f || strings.IndexByte(`<>()\",;:`, c) >= 0 {
			return ""
		}
	}
	return ids[0]
}

// sameSubject reports whether two subjects match as Gmail matches a
// reply's with its thread's: reply and forward prefixes ("Re:", "Fwd:",
// "Fw:", "Aw:", any number of them) set aside, ignoring case and runs
// of white space.
func sameSubject(a, b string) bool {
	return strings.EqualFold(baseSubject(a), baseSubject(b))
}

// baseSubject is s without its reply and forward prefixes, its white
// space runs made single spaces.
func baseSubject(s string) string {
	for {
		t := strings.TrimSpace(s)
		p := replyPrefix(t)
		if p == "" {
			return strings.Join(strings.Fields(t), " ")
		}
		s = t[len(p):]
	}
}

// threadLookupError words a failed read of a reply's thread.
func threadLookupError(err error, id string, draft bool) error {
	switch {
	case errors.Is(err, gmail.ErrNotFound), errors.Is(err, gmail.ErrRejected):
		return unknownThread(err, draft)
	case errors.Is(err, gmail.ErrAPIDisabled):
		return gmailAPIDisabled(err, draft)
	case errors.Is(err, gmail.ErrUnauthorized):
		return refuseErr(err, kindGmailUnauthorized, "Google no longer accepts this account's authorization (it expired or was revoked). %s Reconnect drivemail (sign in again).", nothing(draft))
	case errors.Is(err, gmail.ErrRateLimited), errors.Is(err, gmail.ErrUnavailable), errors.Is(err, gmail.ErrStalled):
		return refuseErr(err, kindMailUnavailable, "Gmail is busy or unavailable right now, so thread %s could not be read. %s Try again in a minute.",
			id, nothing(draft))
	}
	return fmt.Errorf("read Gmail thread: %w", err)
}

// unknownThread refuses a thread_id Gmail does not know in this account,
// whether a read of the thread or the send found it.
func unknownThread(err error, draft bool) error {
	return refuseErr(err, kindUnknownThread, "Gmail does not know that thread_id. %s Leave thread_id out to start a new thread, or use the id Gmail returned for the thread.", nothing(draft))
}
