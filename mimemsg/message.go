// Package mimemsg builds one email message and streams it to an io.Writer
// in a single pass: headers validated up front, bodies and file parts
// encoded as they are read, each file opened only when the writer reaches
// it. It is built on github.com/emersion/go-message (its textproto layer
// for headers and multipart, with its own base64 writer: entity.go).
//
// The structure is Gmail's, with the levels that are not needed left out:
//
//	multipart/mixed                      only with attachments
//	├─ multipart/alternative             only with both text and HTML
//	│  ├─ text/plain
//	│  └─ multipart/related              only with inline parts
//	│     ├─ text/html
//	│     └─ inline parts (Content-ID)
//	└─ attachments (base64)
//
// A message with only text is a single text/plain part.
//
// Use it in two steps, so that every refusal comes before any download:
//
//	p, err := mimemsg.Prepare(msg)     // validates everything; opens nothing
//	…
//	written, err := p.Stream(ctx, w)   // opens each part in turn, writes once
//
// A caller that checks the headers before it knows the parts, or streams
// the same message more than once (a retried pass), splits the first step:
// PrepareHeader checks the headers and fixes Date and Message-ID,
// Header.Prepare checks the parts, and Prepared.Bind gives each pass its
// own readers without checking anything again.
//
// Counting: Stream counts the encoded bytes it writes and the raw bytes of
// every file part, enforces Limits while it goes (a breach returns a
// *LimitError at once, before the message is complete), and reports the
// figures in Written. A caller that needs finer control (progress) wraps
// w or the part readers itself.
package mimemsg

import (
	"context"
	"io"
	"time"
)

// Message is one email to build.
type Message struct {
	// From is the sender: "a@example.com" or "Name <a@example.com>".
	From string
	// ReplyTo, when set, is written as Reply-To: where replies should go
	// instead of From (one address, or a comma-separated list).
	ReplyTo string
	// To, Cc and Bcc each hold addresses; an entry may also be a
	// comma-separated list ("a@x.org, B <b@y.org>"). Bcc is written in the
	// header, where Gmail reads and then strips it.
	To, Cc, Bcc []string
	// Subject is plain text (RFC 2047 encoding is done here); at most
	// MaxSubjectChars characters, no line breaks or control characters;
	// white space around it is trimmed.
	Subject string
	// Date is the Date header; the zero value means the time of Prepare.
	Date time.Time
	// MessageID is written as Message-ID ("<id@host>", brackets optional);
	// empty means a new one, <uuid@domain of From>.
	MessageID string
	// InReplyTo and References thread the message (msg-ids, brackets
	// optional). If InReplyTo is set and References is empty, References
	// is InReplyTo.
	InReplyTo  string
	References []string

	// Text and HTML are the bodies (UTF-8; invalid bytes become U+FFFD).
	// Either, both or neither may be set.
	Text string
	HTML string

	// Inline parts are files the HTML shows (cid: references); they need
	// an HTML body and a ContentID each.
	Inline []Part
	// Attachments are files attached to the message, in order.
	Attachments []Part

	Limits Limits
}

// Part is one file of the message. Its bytes are not read until Stream
// reaches it.
type Part struct {
	// Name is the file name shown to the recipient; clean it first with
	// exportfmt.CleanName (Prepare refuses control characters, path
	// separators, an empty name and more than 255 bytes).
	Name string
	// ContentType is the part's MIME type ("application/pdf"; parameters
	// allowed); empty means application/octet-stream. multipart/* and
	// message/* are sent as application/octet-stream, since a base64
	// body is not allowed for them.
	ContentType string
	// ContentID identifies an inline part (without angle brackets); see
	// NewContentID. Ignored for attachments.
	ContentID string
	// Size is the number of bytes Open's stream must yield, or -1 if
	// unknown. A stream that ends short or runs long fails the message:
	// a truncated download is an error, never a shorter attachment.
	Size int64
	// Open returns the part's content. It is called when the writer
	// reaches the part, once, and the stream is closed when the part
	// ends. An error from Open or from the stream fails the message.
	Open func(ctx context.Context) (io.ReadCloser, error)
}

// Limits bound a message while it streams. Zero fields take the defaults.
type Limits struct {
	// MaxFileBytes bounds the raw bytes of all inline and attached parts
	// together (0: no limit). Gmail's is 25 MiB (26,214,400 bytes).
	MaxFileBytes int64
	// MaxBytes bounds the whole encoded message (0: no limit). Gmail's
	// upload limit is 35 MiB (36,700,160 bytes).
	MaxBytes int64
	// MaxRecipients bounds To+Cc+Bcc (default DefaultMaxRecipients).
	MaxRecipients int
}

// Limits that Prepare applies.
const (
	// DefaultMaxRecipients is ours, well under Gmail's per-message limit
	// (500 for Workspace, 100 for some consumer accounts): a model sending to
	// more than 100 people is more likely wrong than right.
	DefaultMaxRecipients = 100
	// MaxSubjectChars is RFC 5322's line limit, which Gmail applies to
	// the subject.
	MaxSubjectChars = 998
	// MaxHeaderBytes bounds one folded header field, as Gmail does.
	MaxHeaderBytes = 32 << 10
	// MaxNameBytes bounds a part's file name.
	MaxNameBytes = 255
	// MaxReferences bounds the References header; longer chains keep
	// the first id and the most recent ones, as mail clients do.
	MaxReferences = 40
)

// Written says what Stream wrote.
type Written struct {
	// Bytes is the size of the encoded message written to w.
	Bytes int64
	// FileBytes is the raw bytes of all inline and attached parts.
	FileBytes int64
	// Parts has one entry per file part: inline parts first, then
	// attachments, each in the order given.
	Parts []PartWritten
}

// PartWritten is one file part as written.
type PartWritten struct {
	Name      string
	ContentID string // inline parts only
	Inline    bool
	Bytes     int64 // raw bytes read from Open's stream
}
