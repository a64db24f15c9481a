package compose

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/gmail"
)

// Preview runs every phase of a send that comes before the first
// download (validate, resolve, plan, check) and returns the message's
// Summary, having downloaded, queued and sent nothing: what a view that
// shows the message before it goes needs. Sending it later is a Send
// whose Confirm holds the Summary's Revision to the one the user saw, so
// that a file changed in between is shown again rather than sent.
func (s *Service) Preview(ctx context.Context, acct *account.Account, req Request, opts Options) (Summary, error) {
	var sum Summary
	opts.Confirm = func(_ context.Context, got Summary) error {
		sum = got
		return errPreviewed
	}
	if _, err := s.Send(ctx, acct, req, opts); !errors.Is(err, errPreviewed) {
		return Summary{}, err
	}
	return sum, nil
}

// errPreviewed ends a Preview's send where the user would be asked.
var errPreviewed = errors.New("compose: previewed")

// Summary is a message as it will go, once every check has passed and
// before any of it is downloaded: what Options.Confirm is shown, for the
// user to say yes or no to. Its values are exact, as the caller, Drive
// and Gmail gave them (anyone may name a file anything): whoever shows
// them makes them safe to show.
type Summary struct {
	Draft bool
	// From is the sending address and FromName the display name it goes
	// with (a send-as alias's), ReplyTo the Reply-To the alias adds, and
	// Signature says the sender's Gmail signature is appended.
	From      string
	FromName  string
	ReplyTo   string
	Signature bool
	To        []string
	Cc        []string
	Bcc       []string
	Subject   string
	// Body is the first lines of the text body (of the HTML body's text
	// when there is no text body), at most SummaryLines non-blank lines
	// of at most SummaryLineRunes each; BodyMore says there is more.
	Body     []string
	BodyMore bool
	// Files are the message's files in request order: attachments,
	// inline images and links.
	Files []SummaryFile
	// SavedDraft is the id of the Gmail draft sent as it is (SendDraft):
	// its text and files are the draft's, as Gmail's Drafts shows them,
	// and Body and Files are empty.
	SavedDraft string
	// Revision names everything the summary describes, down to each
	// file's version (Drive's checksum and modification time, a Gmail
	// message's part, the bytes the call wrote): two summaries with the
	// same Revision describe the same message. An answer given to one
	// summary is bound to it (ask.Question's Bind).
	Revision string
}

// How a file goes into the message.
const (
	GoesAttached = "attached"
	GoesInline   = "inline"
	GoesLinked   = "linked"
)

// Where a file's bytes come from.
const (
	FromDrive  = "drive"  // a Drive file, or a Google file exported
	FromGmail  = "gmail"  // an attachment of a message in the user's Gmail
	FromClient = "client" // a file the chat client holds (ChatGPT's files)
	FromCall   = "call"   // content the model wrote into the call
)

// SummaryFile is one file of a Summary.
type SummaryFile struct {
	Name     string // the file name the recipient sees
	MimeType string // "" for a link
	// Bytes is the file's size, or -1 when it is known only as it streams
	// (an export, a client file its host did not size); 0 for a link.
	Bytes int64
	Goes  string // GoesAttached, GoesInline or GoesLinked
	From  string // FromDrive, FromGmail, FromClient or FromCall
	// ExportedAs is the format a Google Doc, Sheet or Slides goes in as
	// ("pdf"), and Sheet the tab a csv or tsv holds.
	ExportedAs string
	Sheet      string
	FileID     string // the Drive file, when it is one
	URL        string // a link's
	// Access says who can open a link, from its Drive sharing: "every
	// recipient" (once ShareWith are given ShareRole, if any), or why it
	// could not be checked ("not checked: …"); "" when it was not read.
	Access    string
	ShareWith []string
	ShareRole string
}

// The body's share of a Summary.
const (
	SummaryLines     = 6
	SummaryLineRunes = 160
)

// summarize describes the checked, planned message: its header as
// validate completed it (a reply's recipients and subject), each planned
// file, and the first lines of its body.
func summarize(c *checked, mp *msgPlan, draft bool) Summary {
	s := Summary{
		Draft: draft, From: c.from.address, ReplyTo: c.from.replyTo, Signature: c.from.signature.html != "",
		Subject: c.req.Subject,
		To:      c.req.To, Cc: c.req.Cc, Bcc: c.req.Bcc,
	}
	if a, err := mail.ParseAddress(c.from.header); err == nil {
		s.FromName = a.Name
	}
	body := c.req.BodyText
	if strings.TrimSpace(body) == "" {
		body = htmlText(c.req.BodyHTML)
	}
	s.Body, s.BodyMore = firstLines(body, SummaryLines, SummaryLineRunes)
	versions := make([]string, 0, len(mp.items))
	for _, it := range mp.items {
		s.Files = append(s.Files, summaryFile(it))
		versions = append(versions, it.version())
	}
	s.Revision = revision(s, versions)
	return s
}

func summaryFile(it *item) SummaryFile {
	p := it.plan
	f := SummaryFile{Name: p.name, MimeType: p.mimeType, Bytes: p.size, Goes: GoesAttached, FileID: it.ref.ID}
	switch {
	case p.action == actLink:
		f.Goes, f.URL, f.MimeType, f.Bytes = GoesLinked, p.url, "", 0
		f.Access, f.ShareWith, f.ShareRole = it.accessSummary()
	case p.inline:
		f.Goes = GoesInline
	}
	switch p.action {
	case actMail:
		f.From = FromGmail
	case actClient:
		f.From = FromClient
	case actData:
		f.From = FromCall
	default:
		f.From = FromDrive
	}
	if p.action == actExport {
		f.ExportedAs = p.format.Name
		if p.tab != nil {
			f.Sheet = p.tab.Title
		}
	}
	return f
}

// draftSummary describes a saved draft as drafts.send will send it,
// from its headers, from the address checked for it. Its revision is the
// draft's message, which Gmail replaces whenever the draft is edited.
func draftSummary(d gmail.Draft, from string) Summary {
	s := Summary{From: from, Subject: d.Subject, SavedDraft: d.ID}
	if a, err := mail.ParseAddress(d.From); err == nil {
		s.FromName = a.Name
	}
	for _, h := range []struct {
		dst *[]string
		v   string
	}{{&s.To, d.To}, {&s.Cc, d.Cc}, {&s.Bcc, d.Bcc}} {
		for _, a := range parseAddrs(h.v) {
			if a.Name != "" {
				*h.dst = append(*h.dst, a.Name+" <"+a.Address+">")
			} else {
				*h.dst = append(*h.dst, a.Address)
			}
		}
	}
	s.Revision = revision(s, []string{"draft:" + d.ID + "/" + d.MessageID})
	return s
}

// accessSummary says who can open a link, as checkLinks found it: every
// recipient (a link some could not open is refused before this, unless
// its share option gives them access, which it names), or why its
// sharing could not be read.
func (it *item) accessSummary() (access string, shareWith []string, role string) {
	a := it.access
	switch {
	case a == nil:
		return "", nil, ""
	case a.unchecked != "":
		return "not checked: " + a.unchecked, nil, ""
	case it.opts.Share != "" && len(a.lacking) > 0:
		return "every recipient", a.lacking, it.opts.Share
	}
	return "every recipient", nil, ""
}

// version names the bytes an entry will send, beyond what its summary
// shows: a Drive file's checksum and modification time, a Gmail
// attachment's message and part, the digest of what the call wrote.
func (it *item) version() string {
	switch it.plan.action {
	case actData:
		sum := sha256.Sum256(it.data)
		return "call:" + hex.EncodeToString(sum[:])
	case actMail:
		return "gmail:" + it.mail.msgID + "/" + it.mail.att.PartID
	case actClient:
		return "client:" + it.client.url
	}
	return "drive:" + it.file.ID + "/" + it.file.MD5 + "/" + it.file.ModifiedTime.UTC().Format(time.RFC3339Nano)
}

// revision digests a summary and its files' versions.
func revision(s Summary, versions []string) string {
	b, _ := json.Marshal(struct {
		Summary  Summary
		Versions []string
	}{s, versions}) // plain strings and numbers: Marshal cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// firstLines returns the first n non-blank lines of text, each cut to
// runes (an ellipsis marks a cut), and whether any text is left out.
func firstLines(text string, n, runes int) ([]string, bool) {
	var lines []string
	rest := strings.ReplaceAll(text, "\r\n", "\n")
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if len(lines) == n {
			return lines, true
		}
		if utf8.RuneCountInString(line) > runes {
			line = string([]rune(line)[:runes-1]) + "…"
		}
		lines = append(lines, line)
	}
	return lines, false
}
