package compose

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
}

// Attachment is one entry of the attachments list as the caller gave it
// (the tools layer has normalised its JSON shape). Exactly one source is set:
//   - FileID: a Drive file id or an mcp-file:// handle from /upload;
//   - Text: content the model wrote (with Name);
//   - Base64 or Content: small bytes the caller carried (with Name);
//     Content is base64 or a data: URI.
type Attachment struct {
	FileID   string
	As       string // export format for a native file: pdf, docx, csv…
	Sheet    string // tab name for csv/tsv of a spreadsheet
	Name     string // file name to show; the right extension is ensured
	Link     bool   // send a link instead of the file
	Text     *string
	Base64   string
	Content  string
	MimeType string
}

// Result says exactly what went out.
type Result struct {
	ID       string `json:"id"`
	ThreadID string `json:"thread_id"`
	// MessageID is the RFC 5322 Message-ID the message carries, with its
	// angle brackets: a reply passes it as in_reply_to.
	MessageID string     `json:"message_id"`
	DraftID   string     `json:"draft_id,omitempty"`
	SizeBytes int64      `json:"size_bytes"`
	Attached  []Attached `json:"attached"`
	Inline    []Inline   `json:"inline"`
	Linked    []Linked   `json:"linked"`
	// Subject is the subject sent: a reply's gets "Re: " when it had no
	// reply prefix.
	Subject string `json:"-"`
}

// Attached is a file that went in as an attachment.
type Attached struct {
	FileID     string `json:"file_id,omitempty"`
	Name       string `json:"name"`
	MimeType   string `json:"mime_type"`
	Bytes      int64  `json:"bytes"`
	ExportedAs string `json:"exported_as,omitempty"`
	Sheet      string `json:"sheet,omitempty"`
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
}
