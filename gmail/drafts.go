package gmail

import (
	"context"
	"errors"
	"net/url"

	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
)

// A draft is read with drafts.get and sent with drafts.send, which
// gmail.compose allows (gmail.send does not). Sending deletes the draft
// and files a new message, with a new id, labelled SENT (Gmail's drafts
// guide), so a draft can be sent once: a second drafts.send of its id is
// a 404.

// Draft is a saved draft as send_draft reads it before sending: its ids
// and the headers that say who it goes to, from whom. Every header was
// written by whoever saved the draft.
type Draft struct {
	ID string
	// MessageID and ThreadID are the draft's message's Gmail ids.
	MessageID, ThreadID string
	// Header values, RFC 2047 words decoded.
	From, To, Cc, Bcc, Subject string
	// RFCMessageID is its Message-ID header, kept when Gmail sends it.
	RFCMessageID string
}

// draftFields selects what Draft reads: the ids, and the headers of
// format=metadata (drafts.get takes no metadataHeaders).
const draftFields = "id,message(id,threadId,payload/headers)"

// Draft reads draft id's headers. A draft that does not exist, one sent
// already and one of another account all give ErrNotFound, as Gmail
// answers each with 404.
func (c *Client) Draft(ctx context.Context, id string) (Draft, error) {
	users, err := c.readService(ctx, metadataLimit)
	if err != nil {
		return Draft{}, err
	}
	d, err := users.Drafts.Get("me", id).Format("metadata").Fields(googleapi.Field(draftFields)).Context(ctx).Do()
	if err != nil {
		return Draft{}, c.readErr("drafts.get", err)
	}
	out := Draft{ID: d.Id}
	if d.Message == nil {
		return out, nil
	}
	m := fromAPI(d.Message, false)
	out.MessageID, out.ThreadID = m.ID, m.ThreadID
	out.From, out.To, out.Cc, out.Subject, out.RFCMessageID = m.From, m.To, m.Cc, m.Subject, m.MessageID
	if d.Message.Payload != nil {
		out.Bcc = headerOf(d.Message.Payload.Headers)("Bcc")
	}
	return out, nil
}

// SendDraft sends draft id as it is (drafts.send with the Draft {id}) and
// returns the message Gmail filed in its place. A draft sent already, or
// unknown, gives ErrNotFound. The error of a request that got no answer
// (or a 5xx) does not say whether Gmail sent the draft: Draft then tells,
// since a sent draft is gone.
func (c *Client) SendDraft(ctx context.Context, id string) (Sent, error) {
	if id == "" {
		return Sent{}, &Error{Op: "drafts.send", Err: errors.New("no draft id")}
	}
	s, err := c.service(ctx, c.http)
	if err != nil {
		return Sent{}, err
	}
	m, err := s.Users.Drafts.Send("me", &gm.Draft{Id: id}).Fields("id,threadId").Context(ctx).Do()
	if err != nil {
		return Sent{}, c.wrap("drafts.send", err)
	}
	return Sent{ID: m.Id, ThreadID: m.ThreadId}, nil
}

// DraftLink is the address that opens a draft in Gmail's web UI: the
// draft's conversation in the Drafts folder (#drafts/THREAD), in the
// account of address email when it is known (/mail/u/EMAIL/), so a
// browser signed in to several Google accounts opens the right one.
// Google documents no such link; both parts are the shape Gmail's own
// web addresses take. Against an emulator it points at the emulator.
func (c *Client) DraftLink(email, threadID string) string {
	if threadID == "" {
		return ""
	}
	base := c.endpoints.GmailWebURL() + "/mail/"
	if email != "" {
		base += "u/" + url.PathEscape(email) + "/"
	}
	return base + "#drafts/" + url.PathEscape(threadID)
}
