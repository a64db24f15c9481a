package compose

import "github.com/drivemail/drivemail/handle"

// Request is one message to send, or to save as a draft.
type Request struct {
	To          []string
	Cc          []string
	Bcc         []string
	Subject     string
	BodyText    string
	BodyHTML    string
	Attachments []Attachment
	// ThreadID, InReplyTo and References make the message a reply: see
	// replyHeaders for what Gmail needs and what drivemail completes.
	ThreadID  string
	InReplyTo string
	// References are the Message-IDs of the conversation, oldest first;
	// an entry may hold several, separated by spaces or commas.
	References []string
	// ReplyTo answers a message of the user's Gmail, and Forward passes
	// one on (at most one of them): see reply.go for what each sets.
	// Both read the user's mail (a Gmail read scope).
	ReplyTo handle.Message
	// ReplyAll, with ReplyTo, addresses everyone the message went to.
	ReplyAll bool
	Forward  handle.Message
	// From sends as one of the user's Gmail send-as addresses ("": the
	// account's own), and Signature adds the sending address's Gmail
	// signature to each body. Both read the user's send-as settings
	// (sendas.go).
	From      string
	Signature bool

	// subjectFromThread says Subject was replaced by the thread's
	// (withThreadSubject).
	subjectFromThread bool
}

// Attachment is one entry of a message's attachments: exactly one
// Source, and the file name the recipient sees. The rules every entry
// obeys, and the numbers (MaxEntries, MaxFiles, MaxAttachmentBytes,
// MaxModelBytes), live in this package; validate applies those that need
// no network, planMessage the rest.
type Attachment struct {
	// Name is the file name the recipient sees. Content needs one; for a
	// Drive file it replaces the file's own name, its right extension kept
	// or added.
	Name   string
	Source Source
}

// Source is where an attachment's bytes come from: a DriveFile, Content,
// a ClientFile or a GmailAttachment. A new source is a type here and a
// case in each phase of a send: validate (validate.go), resolve
// (resolve.go), plan (plan.go), advice for a blocked type (blocked.go)
// and open (stream.go).
type Source interface{ source() }

// DriveFile is a file in the user's Google Drive, named by a handle; the
// options say how it goes in.
type DriveFile struct {
	Handle handle.Handle
	// As exports a native Google file (pdf, docx, csv…); a binary file
	// may name its own format. Without it a native file goes in as a link.
	As string
	// Sheet picks the spreadsheet tab of a csv or tsv export.
	Sheet string
	// Link puts a link to the file in the body instead of the file.
	Link bool
	// Share, for a file that goes as a link, gives the recipients who
	// cannot open it this role (one of ShareRoles) before the message
	// goes; without it such a message is refused (access.go).
	Share string
}

// Content is a file the model wrote into the call. All of a message's
// Content counts toward MaxModelBytes.
type Content struct {
	Encoding Encoding
	// Data is the content as written, in Encoding.
	Data string
	// MimeType is the file's type; "" guesses it from the name (or the
	// data: URI).
	MimeType string
}

// Encoding says how Content.Data holds the bytes.
type Encoding uint8

const (
	// Text is UTF-8 text, as is.
	Text Encoding = iota + 1
	// Base64 is standard or URL-safe base64, padded or not, with line
	// breaks anywhere.
	Base64
	// DataURI is data:[type][;base64],payload (RFC 2397).
	DataURI
)

// ClientFile is a file the chat client holds and hands to the tool as a
// short-lived signed download URL (ChatGPT's file parameters). It is
// fetched as the send starts (clientfile.go) and streamed into the
// message; its bytes count toward the message's limits like a Drive
// file's.
type ClientFile struct {
	// URL is the signed download URL, fetched without credentials.
	URL string
	// FileID is the client's own id for the file (file-…): not a Drive
	// id, kept for the log.
	FileID string
	// MimeType and Name are what the client says of the file; "" when it
	// said nothing (the download's headers, then the name, decide).
	MimeType string
	Name     string
}

// GmailAttachment is an attachment of a message in the user's Gmail,
// named by the message and the attachment's file name in it (Gmail's own
// attachment ids are hundreds of characters, and change between reads).
type GmailAttachment struct {
	Message handle.Message
	// Name is the attachment's file name in that message: exactly, else
	// ignoring case when that names one.
	Name string
	// part is the MIME part a forward takes, which a name cannot tell
	// apart when two attachments share it.
	part string
}

func (DriveFile) source()       {}
func (Content) source()         {}
func (ClientFile) source()      {}
func (GmailAttachment) source() {}

// Result says exactly what went out.
type Result struct {
	ID       string `json:"id"`
	ThreadID string `json:"thread_id"`
	// MessageID is the RFC 5322 Message-ID the message carries, with its
	// angle brackets: a reply passes it as in_reply_to.
	MessageID string `json:"message_id"`
	DraftID   string `json:"draft_id,omitempty"`
	// Link opens a draft in Gmail's web UI (gmail.DraftLink).
	Link string `json:"link,omitempty"`
	// From is the address the message is from.
	From      string     `json:"from"`
	SizeBytes int64      `json:"size_bytes"`
	Attached  []Attached `json:"attached"`
	Inline    []Inline   `json:"inline"`
	Linked    []Linked   `json:"linked"`
	// Subject is the subject sent: a reply's gets "Re: " when it had no
	// reply prefix.
	Subject string `json:"-"`
	// Recipients are the To and Cc addresses sent to (a reply's defaults
	// included).
	Recipients []string `json:"-"`
	// SubjectFromThread says Subject is the thread's, not the one the
	// call gave: Gmail would have started a new conversation with that.
	SubjectFromThread bool `json:"-"`
	// AskedThread is the thread the message asked to join (a reply_to's
	// thread, or thread_id); Gmail may have started another.
	AskedThread string `json:"-"`
	// Signed says the call asked for the signature, and Signature says
	// one was added (the address has one).
	Signed, Signature bool `json:"-"`
}

// Attached is a file that went in as an attachment.
type Attached struct {
	FileID     string `json:"file_id,omitempty"`
	Name       string `json:"name"`
	MimeType   string `json:"mime_type"`
	Bytes      int64  `json:"bytes"`
	ExportedAs string `json:"exported_as,omitempty"`
	Sheet      string `json:"sheet,omitempty"`

	// FromMessage is the Gmail message a GmailAttachment came from.
	FromMessage string `json:"from_message,omitempty"`
}

// Inline is a file that went in as an inline (cid:) part of the HTML body.
type Inline struct {
	FileID    string `json:"file_id,omitempty"`
	Name      string `json:"name"`
	ContentID string `json:"content_id"`
}

// Linked is a file that went in as a link in the body.
type Linked struct {
	FileID string `json:"file_id"`
	Name   string `json:"name"`
	URL    string `json:"url"`
	// Access is what drivemail knows of the recipients' access to the
	// link: AccessOpen or AccessUnchecked.
	Access string `json:"access"`
	// SharedWith are the recipients drivemail gave SharedRole on the
	// file, as Share asked, before the message went.
	SharedWith []string `json:"shared_with,omitempty"`
	// AccessNote says why Access is AccessUnchecked, and SharedRole is
	// the role given: the result's text says both.
	AccessNote string `json:"-"`
	SharedRole string `json:"-"`
}

// What drivemail knows of a link's recipients' access (Linked.Access).
const (
	// AccessOpen: the file's sharing reaches every recipient, some
	// perhaps through the sharing drivemail added.
	AccessOpen = "open"
	// AccessUnchecked: drivemail could not read whether it does
	// (Linked.AccessNote says why).
	AccessUnchecked = "unchecked"
)
