package compose

import (
	"context"
	"errors"
	"io"
	"path"
	"strings"

	"github.com/drivemail/drivemail/blocked"
	"github.com/drivemail/drivemail/clientfile"
	"github.com/drivemail/drivemail/exportfmt"
	"github.com/drivemail/drivemail/mimemsg"
)

// A ClientFile's phases. Its URL is short-lived, so it is opened as soon
// as the request is valid, beside the Drive lookups: the headers give its
// size (checked against the limits before any of the body is read) and
// type, and the body waits, unread, until the message writer reaches the
// part. A pass retried after a Drive failure opens it again.

// clientPart is what a send holds of one client file.
type clientPart struct {
	files *clientfile.Fetcher
	url   string
	file  *clientfile.File // opened; nil before, and once the writer took it
}

// checkClientFile is validate's case: a URL to fetch, and a name and
// type that can go in a message. The name falls back to the client's
// file_name; the URL's rules (https, the host allowlist) are the
// Fetcher's, applied when it is opened.
func checkClientFile(it *item, src ClientFile) error {
	if strings.TrimSpace(it.att.Name) == "" {
		it.att.Name = strings.TrimSpace(src.Name)
	}
	if strings.TrimSpace(src.URL) == "" {
		return refuse(clientfile.KindRefused, "%s has no download_url. %s", it.label(), clientfile.AttachAgain)
	}
	if t := strings.TrimSpace(src.MimeType); t != "" && !validMimeType(t) {
		return refuse(kindBadMimeType, "%s: mime_type %q is not a MIME type such as \"application/pdf\". Correct it or leave it out.", it.label(), truncate(t, 60))
	}
	it.client.url = strings.TrimSpace(src.URL)
	return nil
}

// openClientFiles opens every client file of the message, a few at a
// time, and keeps each body for the stream. The first failure ends the
// send before anything reaches Gmail; closeClientFiles releases what was
// opened.
func openClientFiles(ctx context.Context, files *clientfile.Fetcher, items []*item, draft bool) error {
	var todo []*item
	for _, it := range items {
		if _, ok := it.att.Source.(ClientFile); ok {
			todo = append(todo, it)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	if files == nil {
		return refuse(clientfile.KindOff, "This drivemail server does not fetch files from the conversation, so %s cannot go. "+
			"Put the file in Google Drive and attach it by id, or ask the user to upload it with request_upload.", todo[0].label())
	}
	sem := make(chan struct{}, metadataWorkers)
	errs := make(chan error, len(todo))
	for _, it := range todo {
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			it.client.files = files
			f, err := files.Open(ctx, it.client.url, MaxAttachmentBytes)
			if err != nil {
				errs <- clientRefusal(it, err, draft, false)
				return
			}
			it.client.file = f
			errs <- nil
		}()
	}
	var first error
	for range todo {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// closeClientFiles releases the downloads a send did not stream.
func closeClientFiles(items []*item) {
	for _, it := range items {
		if f := it.client.file; f != nil {
			_ = f.Body.Close() // unread: nothing of it went anywhere
			it.client.file = nil
		}
	}
}

// open hands the writer the body opened for the plan, or, on a retried
// pass, the file afresh (its size must not have changed).
func (c *clientPart) open(ctx context.Context) (io.ReadCloser, error) {
	if f := c.file; f != nil {
		c.file = nil
		return f.Body, nil
	}
	f, err := c.files.Open(ctx, c.url, MaxAttachmentBytes)
	if err != nil {
		return nil, err
	}
	return f.Body, nil
}

// planClient names and types a client file: the name given (or the
// client's file_name), else the download's own, else its URL's last
// segment; its type as the client said, else as the download says, else
// by its name. Its size is the Content-Length, or unknown (counted as it
// streams, like an export).
func planClient(it *item) error {
	src := it.att.Source.(ClientFile)
	f := it.client.file
	mimeType := strings.TrimSpace(src.MimeType)
	if mimeType == "" {
		mimeType = f.MimeType
	}
	name := strings.TrimSpace(it.att.Name)
	if name == "" {
		name = f.Name
	}
	if name == "" {
		name = clientfile.URLName(it.client.url)
	}
	if mimeType == "" || !validMimeType(mimeType) {
		mimeType = exportfmt.MimeTypeByName(name)
	}
	name = exportfmt.CleanName(name)
	if path.Ext(name) == "" {
		name = exportfmt.WithExt(orDefault(name, "attachment"), exportfmt.ExtByMimeType(mimeType))
	}
	it.plan = plan{action: actClient, name: name, mimeType: mimeType, size: f.Size, archive: blocked.FormatOf(name, mimeType)}
	if err := checkName(it, name); err != nil {
		return err
	}
	if f.Name != "" {
		return checkName(it, f.Name)
	}
	return nil
}

// clientRefusal words a client file that could not be fetched; streaming
// says the failure came while the message was under way. The sentence is
// clientfile's but for a file past the limit, which is Gmail's.
func clientRefusal(it *item, err error, draft, streaming bool) error {
	w := clientfile.Wording{File: it.label(), Instead: "For a file in Google Drive, attach it by id instead."}
	if streaming {
		w.Done = "The message was abandoned. " + nothing(draft)
	}
	if r := w.Refusal(err); r != nil {
		return r
	}
	var fe *clientfile.Error
	if !errors.As(err, &fe) || fe.Failure != clientfile.TooLarge {
		return err
	}
	size := "is larger than"
	if fe.Size > fe.Limit {
		size = "is " + sizeText(fe.Size) + ", larger than"
	}
	done := ""
	if w.Done != "" {
		done = " " + w.Done
	}
	return refuseErr(err, clientfile.KindTooLarge, "%s %s the 25 MiB (26,214,400 bytes) Gmail takes per message.%s "+
		"Put it in Google Drive with save_to_drive and send it as a link (link: true).", it.label(), size, done)
}

// clientFailure is streamError's case for a client file, or nil when the
// part's failure is not one.
func clientFailure(it *item, err error, draft bool) error {
	if it.plan.action != actClient || clientfile.FailureOf(err) == 0 {
		return nil
	}
	return clientRefusal(it, err, draft, true)
}

// clientOverLimit words the message growing past 25 MiB while a client
// file of unannounced size streamed, or nil when the message had none.
func clientOverLimit(c *checked, err error, draft bool) error {
	var le *mimemsg.LimitError
	if !errors.As(err, &le) || le.What != "files" {
		return nil
	}
	for _, it := range c.items {
		if it.plan.action == actClient && it.plan.size < 0 {
			return refuseErr(err, clientfile.KindTooLarge, "The attachments grew past Gmail's 25 MiB limit while %s streamed (its host did not say its size in advance), so the message was abandoned. %s "+
				"Send fewer files in this message, or put the large ones in Google Drive and send links.", it.label(), nothing(draft))
		}
	}
	return nil
}
