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
		return refuse(kindClientFileRefused, "%s has no download_url. Ask the user to attach the file to the conversation again.", it.label())
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
		return refuse(kindClientFilesOff, "This drivemail server does not fetch files from the conversation, so %s cannot go. "+
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
		name = urlName(it.client.url)
	}
	if mimeType == "" || !validMimeType(mimeType) {
		mimeType = exportfmt.MimeTypeByName(name)
	}
	name = exportfmt.CleanName(name)
	if path.Ext(name) == "" {
		name = exportfmt.WithExt(orDefault(name, "attachment"), exportfmt.ExtByMimeType(mimeType))
	}
	it.plan = plan{action: actClient, name: name, mimeType: mimeType, size: f.Size, archive: blocked.KindOf(name, mimeType)}
	if err := checkName(it, name); err != nil {
		return err
	}
	if f.Name != "" {
		return checkName(it, f.Name)
	}
	return nil
}

// urlName is the last path segment of a download URL when it looks like
// a file name (signed blob URLs often end in an opaque id).
func urlName(raw string) string {
	i := strings.IndexAny(raw, "?#")
	if i >= 0 {
		raw = raw[:i]
	}
	base := path.Base(raw)
	if strings.Contains(base, ".") && !strings.ContainsAny(base, "%:") {
		return base
	}
	return ""
}

// clientBlockedAdvice is what to do about a client file Gmail would
// block: it cannot go as a link, and renaming it would not make Gmail
// take it.
func clientBlockedAdvice(f *blocked.Finding) string {
	switch {
	case f.Reason == blocked.ReasonExtension && f.Entry == "":
		return "Gmail does not carry programs or scripts, even renamed, so leave it out of the message."
	case f.Reason == blocked.ReasonExtension:
		return "Leave it out, or ask the user for the archive without that file."
	case f.Reason == blocked.ReasonEncrypted:
		return "Ask the user for the archive without a password."
	case f.Reason == blocked.ReasonTooLarge:
		return "Ask the user to split the archive."
	}
	return "Ask the user to attach the whole file to the conversation again."
}

// attachAgain is the advice for a file whose URL no longer works: the
// user's client issues a fresh one when the file is attached again.
const attachAgain = "Ask the user to attach the file to the conversation again, then call again with the new file."

// clientRefusal words a client file that could not be fetched; streaming
// says the failure came while the message was under way.
func clientRefusal(it *item, err error, draft, streaming bool) error {
	var fe *clientfile.Error
	if !errors.As(err, &fe) {
		return err
	}
	done := ""
	if streaming {
		done = " The message was abandoned. " + nothing(draft)
	}
	switch fe.Kind {
	case clientfile.Expired:
		return refuseErr(err, kindClientFileExpired, "The download link of %s has expired or was withdrawn (its host refused it).%s %s", it.label(), done, attachAgain)
	case clientfile.NotHTTPS, clientfile.HostNotAllowed, clientfile.BadURL, clientfile.PrivateAddress, clientfile.TooManyRedirects:
		return refuseErr(err, kindClientFileRefused, "%s: its download_url is not one drivemail fetches (%s). Pass the file object exactly as the client gave it; "+
			"for a file in Google Drive, attach it by id instead.%s", it.label(), strings.TrimPrefix(fe.Error(), "clientfile: "), done)
	case clientfile.TooLarge:
		size := "is larger than"
		if fe.Size > fe.Limit {
			size = "is " + sizeText(fe.Size) + ", larger than"
		}
		return refuseErr(err, kindClientFileTooLarge, "%s %s the 25 MiB (26,214,400 bytes) Gmail takes per message.%s "+
			"Put it in Google Drive with save_to_drive and send it as a link (link: true).", it.label(), size, done)
	case clientfile.Stalled, clientfile.TooSlow:
		return refuseErr(err, kindClientFileStalled, "The host of %s stopped sending it, or sent it too slowly.%s Try again in a minute; if it fails again, %s",
			it.label(), done, lowerFirst(attachAgain))
	}
	return refuseErr(err, kindClientFileUnavailable, "The host of %s failed while it was fetched.%s Try again in a minute; if it fails again, %s",
		it.label(), done, lowerFirst(attachAgain))
}

// clientFailure is streamError's case for a client file, or nil when the
// part's failure is not one.
func clientFailure(it *item, err error, draft bool) error {
	if it.plan.action != actClient || clientfile.KindOf(err) == 0 {
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
			return refuseErr(err, kindClientFileTooLarge, "The attachments grew past Gmail's 25 MiB limit while %s streamed (its host did not say its size in advance), so the message was abandoned. %s "+
				"Send fewer files in this message, or put the large ones in Google Drive and send links.", it.label(), nothing(draft))
		}
	}
	return nil
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
