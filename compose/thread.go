package compose

import (
	"strings"
)

// Gmail adds a message to a thread only when all three criteria of the
// discovery document's Message.threadId hold: the request names the
// threadId, the References and In-Reply-To headers are set per RFC 2822,
// and the Subject matches. Without a read scope (serve --read-mail)
// drivemail cannot look up the Message-ID or subject of the message being
// answered (users.messages.get needs one): the caller gives them, and
// drivemail sets the headers from them. With one, reply_to does the
// lookup (reply.go) and hands replyHeaders a complete request.

// MaxReferenceEntries bounds the references a request may give; the
// References header keeps the first and the latest mimemsg.MaxReferences.
const MaxReferenceEntries = 100

// replyHeaders checks a reply's thread_id, in_reply_to and references and
// completes them as RFC 5322 §3.6.4 has them: In-Reply-To is the parent's
// Message-ID, and References ends with it. It also gives a reply
// without a reply prefix the subject "Re: <subject>", as mail programs
// do. The result's Subject is what will be sent.
func replyHeaders(req Request) (Request, error) {
	if req.ThreadID != "" && strings.TrimSpace(req.InReplyTo) == "" && len(req.References) == 0 {
		return req, refuse(kindThreadWithoutReply, "\"thread_id\" alone cannot put the message in that conversation: Gmail adds a message to a thread only when it also "+
			"answers a message of the thread by its Message-ID and keeps the thread's subject. Pass in_reply_to: the message_id that send_email or create_draft "+
			"returned for the message being answered, or the Message-ID header of the latest message in the thread (drivemail may only send mail, not read it, "+
			"so it cannot look it up). Or leave thread_id out to start a new conversation.")
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

// hasReplyPrefix reports whether a subject starts as a reply or forward
// does ("Re:", "RE:", "Fwd:", "Fw:", "Aw:"), which Gmail sets aside when
// it matches a reply's subject with its thread's.
func hasReplyPrefix(subject string) bool {
	s := strings.ToLower(strings.TrimSpace(subject))
	for _, p := range []string{"re:", "fwd:", "fw:", "aw:"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
