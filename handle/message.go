package handle

import (
	"strings"

	"github.com/drivemail/drivemail/drive"
)

// Message is a Gmail message named by the id the Gmail API gives it (as
// search_mail returns it): the message a reply answers, a forward passes
// on, or whose attachment goes into another message or into Drive.
type Message struct {
	ID string
}

// String is the id, as a model passes it back.
func (m Message) String() string { return m.ID }

// maxMessageIDLen bounds a message id. Gmail's are 16 hex digits; the
// bound leaves room without letting a paragraph through.
const maxMessageIDLen = 64

// ParseMessage reads a Gmail message id: letters, digits, '-' and '_',
// at most 64 of them. White space around it is ignored. Its errors are
// *SyntaxError.
func ParseMessage(s string) (Message, error) {
	s = strings.TrimSpace(s)
	lower := strings.ToLower(s)
	switch {
	case s == "":
		return Message{}, &SyntaxError{Input: s, Problem: Empty}
	case strings.HasPrefix(s, "<") || strings.Contains(s, "@"):
		return Message{}, &SyntaxError{Input: s, Problem: HeaderID}
	case strings.HasPrefix(lower, "https://mail.google.com"), strings.HasPrefix(lower, "http://mail.google.com"):
		return Message{}, &SyntaxError{Input: s, Problem: MailLink}
	case !validMessageID(s):
		return Message{}, &SyntaxError{Input: s, Problem: NotAMessageID}
	}
	return Message{ID: s}, nil
}

// validMessageID: Gmail's ids use the characters of Drive's (letters,
// digits, '-' and '_'), fewer of them.
func validMessageID(s string) bool {
	return len(s) <= maxMessageIDLen && drive.ValidID(s)
}
