package compose

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/mimemsg"
)

// checked is a request that passed validate: what the later phases
// (resolve, plan, check, stream) start from.
type checked struct {
	req       Request // its reply headers completed (replyHeaders)
	from      sender
	date      time.Time
	header    *mimemsg.Header // validated once; every pass carries it
	messageID string          // its Message-ID
	items     []*item
}

// validate checks everything about req that needs no network: the
// bodies and thread id, the reply headers, every attachment's own rules
// (the entry cap, the options of a Drive file, a name for content and
// its decoding within MaxModelBytes), and the headers as a message from
// from would carry them. It runs before any Google call that sends or
// downloads, so a mistake costs the user nothing.
func validate(req Request, from sender, date time.Time) (*checked, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	req, err := replyHeaders(req)
	if err != nil {
		return nil, err
	}
	items, err := validateAttachments(req.Attachments)
	if err != nil {
		return nil, err
	}
	c := &checked{req: req, from: from, date: date, items: items}
	if c.header, err = mimemsg.PrepareHeader(c.headers()); err != nil {
		return nil, inputRefusal(err)
	}
	c.messageID = c.header.MessageID()
	return c, nil
}

// checkRequest refuses what no plan can fix: oversized bodies, a
// malformed thread id.
func checkRequest(req Request) error {
	if len(req.BodyText) > MaxBodyBytes {
		return refuse(kindBodyTooLarge, "\"body_text\" is %s; the limit is %d MiB. Shorten it, or put the long text in a file and attach it.", mib(int64(len(req.BodyText))), MaxBodyBytes>>20)
	}
	if len(req.BodyHTML) > MaxBodyBytes {
		return refuse(kindBodyTooLarge, "\"body_html\" is %s; the limit is %d MiB. Shorten it, or put the long content in a file and attach it.", mib(int64(len(req.BodyHTML))), MaxBodyBytes>>20)
	}
	if req.ThreadID != "" && !validThreadID(req.ThreadID) {
		return refuse(kindBadThreadID, "The thread_id %q is not a Gmail thread id (letters and digits, as Gmail returned it). Leave it out to start a new thread.", truncate(req.ThreadID, 60))
	}
	return nil
}

func validThreadID(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// validateAttachments checks each entry by its source and returns the
// items to resolve, model-written content decoded within MaxModelBytes
// summed over the message.
func validateAttachments(atts []Attachment) ([]*item, error) {
	if err := CheckEntries(len(atts)); err != nil {
		return nil, err
	}
	items := make([]*item, 0, len(atts))
	budget := MaxModelBytes
	for i, a := range atts {
		it := &item{index: i + 1, att: a}
		switch src := a.Source.(type) {
		case DriveFile:
			if err := checkDriveFile(it, src); err != nil {
				return nil, err
			}
		case GmailAttachment:
			if err := checkGmailAttachment(it, src); err != nil {
				return nil, err
			}
		case Content:
			if strings.TrimSpace(a.Name) == "" {
				return nil, refuse(kindNoName, "%s has content but no name. Give it \"name\": a file name with an extension, such as \"notes.csv\".", it.label())
			}
			data, mimeType, err := decodeContent(src, a.Name, it.label(), budget)
			if err != nil {
				return nil, err
			}
			budget -= len(data)
			it.data, it.dataType = data, mimeType
		case ClientFile:
			if err := checkClientFile(it, src); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("compose: %s has no source (%T)", it.label(), a.Source)
		}
		items = append(items, it)
	}
	return items, nil
}

// checkDriveFile takes the file a DriveFile's handle names and refuses
// options that contradict each other. Options that depend on the file
// (as for its type, sheet for its tabs) are the plan's to check.
func checkDriveFile(it *item, src DriveFile) error {
	ref, ok := handle.DriveRef(src.Handle)
	if !ok {
		return fmt.Errorf("compose: %s has a handle that names no Drive file (%T)", it.label(), src.Handle)
	}
	it.ref, it.opts = ref, src
	switch {
	case src.Link && strings.TrimSpace(src.As) != "":
		return refuse(kindBadOption, "%s has both \"link\": true and \"as\": %q. Use \"link\" to send a link to the file, or \"as\" to attach an exported copy, not both.",
			it.label(), truncate(src.As, 20))
	case src.Link && strings.TrimSpace(src.Sheet) != "":
		return refuse(kindBadOption, "%s has both \"link\": true and \"sheet\"; a link always opens the whole spreadsheet. Drop \"sheet\", or use \"as\": \"csv\" with it.", it.label())
	case src.Share != "" && !slices.Contains(ShareRoles, src.Share):
		return refuse(kindBadOption, "%s: \"share\" is %q; drivemail gives the recipients of a link \"reader\" or \"commenter\". To let them edit the file, share it in Google Drive.",
			it.label(), truncate(src.Share, 20))
	case src.Share != "" && strings.TrimSpace(src.As) != "":
		return refuse(kindBadOption, "%s has both \"share\" and \"as\": \"share\" gives the recipients access to the file a link opens, and with \"as\" a copy is attached, which needs none. Keep one of them.",
			it.label())
	}
	return nil
}

// headers is the message's header fields and limits, as PrepareHeader
// reads them.
func (c *checked) headers() mimemsg.Message {
	return mimemsg.Message{
		From:       c.from.header,
		ReplyTo:    c.from.replyTo,
		To:         c.req.To,
		Cc:         c.req.Cc,
		Bcc:        c.req.Bcc,
		Subject:    c.req.Subject,
		Date:       c.date,
		InReplyTo:  c.req.InReplyTo,
		References: c.req.References,
		Limits: mimemsg.Limits{
			MaxFileBytes: MaxAttachmentBytes,
			MaxBytes:     MaxMessageBytes,
		},
	}
}
