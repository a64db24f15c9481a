package gmail

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"

	"github.com/drivemail/drivemail/internal/stream"
)

// Reading mail needs a Gmail read scope (gmail.readonly is the narrowest
// that allows search with q, message bodies and attachments). Every
// answer is bounded (readLimit), and an attachment streams: see
// OpenAttachment.

// Bounds of what a read may take in.
const (
	// MaxSearchResults is the most messages one Search returns.
	MaxSearchResults = 50
	// metadataLimit bounds a messages.get answer without bodies, and a
	// messages.list answer.
	metadataLimit = 2 << 20
	// bodiesLimit bounds a messages.get answer with bodies: the text a
	// forward quotes, and attachments Gmail inlines (its discovery
	// document allows data in place of an attachmentId).
	bodiesLimit = 8 << 20
	// searchWorkers bounds the messages.get calls of one Search.
	searchWorkers = 5
	// maxPartDepth is how deep the parts of a message are listed.
	maxPartDepth = 6
)

// ErrCorrupt: an attachment's bytes did not arrive as Gmail described
// them (a size that differs, base64 that does not decode).
var ErrCorrupt = errors.New("the attachment did not arrive intact from Gmail")

// ErrAnswerTooLarge: a Gmail answer was larger than drivemail reads.
//
//lint:ignore ST1005 the error begins with the name Gmail, which staticcheck takes for a capitalized word
var ErrAnswerTooLarge = errors.New("Gmail's answer is larger than drivemail reads")

// Message is a message as drivemail reads it: its ids, the headers a
// reply or a list needs, and its attachments. Every string in it was
// written by whoever sent the message.
type Message struct {
	ID           string
	ThreadID     string
	Labels       []string
	Snippet      string
	InternalDate time.Time
	// Header values, RFC 2047 words decoded.
	From, To, Cc, ReplyTo, Date, Subject string
	// MessageID, InReplyTo and References are the threading headers.
	MessageID, InReplyTo, References string
	Attachments                      []Attachment
	// Text and HTML are the first plain and HTML bodies that are not
	// attachments, when the message was read with its bodies.
	Text, HTML string
}

// Attachment is one part of a message that has a file name.
type Attachment struct {
	PartID   string
	ID       string // Gmail's attachmentId; empty when the bytes came inline
	Name     string
	MimeType string
	Size     int64 // decoded bytes
	// ContentID is the part's Content-ID without angle brackets, when it
	// has one (an inline image).
	ContentID string
	// data holds the decoded bytes Gmail sent inline instead of an id.
	data []byte
}

// Find returns the attachment called name: exactly, else ignoring case
// when that names one.
func (m Message) Find(name string) (Attachment, bool) {
	name = strings.TrimSpace(name)
	for _, a := range m.Attachments {
		if a.Name == name {
			return a, true
		}
	}
	var found []Attachment
	for _, a := range m.Attachments {
		if strings.EqualFold(strings.TrimSpace(a.Name), name) {
			found = append(found, a)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return Attachment{}, false
}

// Names lists the attachments' names in order.
func (m Message) Names() []string {
	out := make([]string, len(m.Attachments))
	for i, a := range m.Attachments {
		out[i] = a.Name
	}
	return out
}

// Page is one page of a search.
type Page struct {
	Messages      []Message
	NextPageToken string
}

// partFields selects a part without its body data, maxPartDepth deep.
func partFields(depth int) string {
	f := "partId,mimeType,filename,headers,body(attachmentId,size)"
	if depth > 1 {
		f += ",parts(" + partFields(depth-1) + ")"
	}
	return f
}

var metadataFields = "id,threadId,labelIds,snippet,internalDate,payload(" + partFields(maxPartDepth) + ")"

// Search lists the messages q finds (Gmail's own search syntax), newest
// first, at most max (1 to MaxSearchResults), each with its headers and
// attachments but no bodies. A message deleted between the list and its
// read is left out.
func (c *Client) Search(ctx context.Context, q string, max int, pageToken string) (Page, error) {
	if max < 1 || max > MaxSearchResults {
		return Page{}, fmt.Errorf("gmail: search size %d out of 1..%d", max, MaxSearchResults)
	}
	users, err := c.readService(ctx, metadataLimit)
	if err != nil {
		return Page{}, err
	}
	call := users.Messages.List("me").Q(q).MaxResults(int64(max)).Fields("messages(id,threadId),nextPageToken").Context(ctx)
	if pageToken != "" {
		call = call.PageToken(pageToken)
	}
	res, err := call.Do()
	if err != nil {
		return Page{}, c.readErr("messages.list", err)
	}
	refs := res.Messages
	if len(refs) > max {
		refs = refs[:max]
	}
	msgs := make([]Message, len(refs))
	errs := make([]error, len(refs))
	sem := make(chan struct{}, searchWorkers)
	var wg sync.WaitGroup
	for i, ref := range refs {
		if ref == nil {
			errs[i] = ErrNotFound
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			msgs[i], errs[i] = c.message(ctx, users, ref.Id, false)
		}()
	}
	wg.Wait()
	page := Page{NextPageToken: res.NextPageToken}
	for i := range refs {
		switch {
		case errs[i] == nil:
			page.Messages = append(page.Messages, msgs[i])
		case !errors.Is(errs[i], ErrNotFound):
			return Page{}, errs[i]
		}
	}
	return page, nil
}

// Message reads one message: headers and attachments, and with bodies its
// text and HTML too. A message that does not exist and one of another
// account both give ErrNotFound, as Gmail answers both with 404.
func (c *Client) Message(ctx context.Context, id string, bodies bool) (Message, error) {
	limit := int64(metadataLimit)
	if bodies {
		limit = bodiesLimit
	}
	users, err := c.readService(ctx, limit)
	if err != nil {
		return Message{}, err
	}
	return c.message(ctx, users, id, bodies)
}

func (c *Client) message(ctx context.Context, users *gm.UsersService, id string, bodies bool) (Message, error) {
	call := users.Messages.Get("me", id).Format("full").Context(ctx)
	if !bodies {
		call = call.Fields(googleapi.Field(metadataFields))
	}
	m, err := call.Do()
	if err != nil {
		return Message{}, c.readErr("messages.get", err)
	}
	return fromAPI(m, bodies), nil
}

// threadFields selects what Thread reads of each message of a thread:
// its labels tell a draft, which no one received, from mail.
const threadFields = "messages(id,threadId,labelIds,payload/headers)"

// Thread reads the messages of thread id, oldest first, each with its
// labels and only its Subject and Message-ID headers: one threads.get
// with format=metadata, what a reply needs to answer the thread's latest
// message and carry the subject of the message it answers. A thread that does not exist and one of another
// account both give ErrNotFound, as Gmail answers both with 404.
func (c *Client) Thread(ctx context.Context, id string) ([]Message, error) {
	users, err := c.readService(ctx, metadataLimit)
	if err != nil {
		return nil, err
	}
	t, err := users.Threads.Get("me", id).Format("metadata").MetadataHeaders("Subject", "Message-ID").
		Fields(threadFields).Context(ctx).Do()
	if err != nil {
		return nil, c.readErr("threads.get", err)
	}
	out := make([]Message, 0, len(t.Messages))
	for _, m := range t.Messages {
		if m != nil {
			out = append(out, fromAPI(m, false))
		}
	}
	return out, nil
}

// readService is the Gmail client for reads, whose answers are cut off
// past limit bytes.
func (c *Client) readService(ctx context.Context, limit int64) (*gm.UsersService, error) {
	hc := *c.http
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = limitTransport{base: base, limit: limit}
	s, err := c.service(ctx, &hc)
	if err != nil {
		return nil, err
	}
	return s.Users, nil
}

// fromAPI reads a Message resource.
func fromAPI(m *gm.Message, bodies bool) Message {
	out := Message{ID: m.Id, ThreadID: m.ThreadId, Labels: m.LabelIds, Snippet: m.Snippet}
	if m.InternalDate > 0 {
		out.InternalDate = time.UnixMilli(m.InternalDate).UTC()
	}
	if m.Payload == nil {
		return out
	}
	h := headerOf(m.Payload.Headers)
	out.From, out.To, out.Cc, out.ReplyTo = h("From"), h("To"), h("Cc"), h("Reply-To")
	out.Date, out.Subject = h("Date"), h("Subject")
	out.MessageID, out.InReplyTo, out.References = h("Message-ID"), h("In-Reply-To"), h("References")
	walkParts(m.Payload, 0, func(p *gm.MessagePart) {
		switch {
		case p.Filename != "":
			a := Attachment{PartID: p.PartId, Name: p.Filename, MimeType: p.MimeType}
			if p.Body != nil {
				a.ID, a.Size = p.Body.AttachmentId, p.Body.Size
				if a.ID == "" && bodies {
					a.data, _ = decodeData(p.Body.Data)
				}
			}
			a.ContentID = strings.Trim(strings.TrimSpace(headerOf(p.Headers)("Content-ID")), "<>")
			out.Attachments = append(out.Attachments, a)
		case bodies && p.Body != nil && p.Body.Data != "":
			data, err := decodeData(p.Body.Data)
			if err != nil {
				return
			}
			switch strings.ToLower(p.MimeType) {
			case "text/plain":
				if out.Text == "" {
					out.Text = string(data)
				}
			case "text/html":
				if out.HTML == "" {
					out.HTML = string(data)
				}
			}
		}
	})
	return out
}

// walkParts visits p's leaves in order, at most maxPartDepth deep.
func walkParts(p *gm.MessagePart, depth int, visit func(*gm.MessagePart)) {
	if p == nil || depth > maxPartDepth {
		return
	}
	if len(p.Parts) == 0 {
		visit(p)
		return
	}
	for _, c := range p.Parts {
		walkParts(c, depth+1, visit)
	}
}

var wordDecoder mime.WordDecoder

// headerOf returns a lookup of the first value of a header, its RFC 2047
// words decoded.
func headerOf(hs []*gm.MessagePartHeader) func(string) string {
	return func(name string) string {
		for _, h := range hs {
			if h != nil && strings.EqualFold(h.Name, name) {
				if d, err := wordDecoder.DecodeHeader(h.Value); err == nil {
					return d
				}
				return h.Value
			}
		}
		return ""
	}
}

// decodeData reads a body's data: base64url, padded or not (also the
// standard alphabet).
func decodeData(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if b, err := base64.RawURLEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// readErr is wrap for a read.
func (c *Client) readErr(op string, err error) error {
	if errors.Is(err, ErrAnswerTooLarge) {
		return &Error{Op: op, Err: ErrAnswerTooLarge}
	}
	return c.wrap(op, err)
}

// limitTransport cuts every answer off at limit bytes: the client
// libraries decode an answer whole, so a bound here bounds the memory. A
// body that goes on past them fails with ErrAnswerTooLarge, one that ends
// there reads to its io.EOF.
type limitTransport struct {
	base  http.RoundTripper
	limit int64
}

func (t limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	res.Body = limitBody(res.Body, t.limit)
	return res, nil
}

func limitBody(rc io.ReadCloser, limit int64) io.ReadCloser {
	return struct {
		io.Reader
		io.Closer
	}{stream.Limit(rc, limit, ErrAnswerTooLarge), rc}
}
