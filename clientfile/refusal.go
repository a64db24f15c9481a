package clientfile

import (
	"errors"
	"net/url"
	"path"
	"strings"

	"github.com/drivemail/drivemail/internal/refusal"
)

// AttachAgain is the advice for a file whose URL no longer works: the
// user's client issues a fresh one when the file is attached again.
const AttachAgain = "Ask the user to attach the file to the conversation again, then call again with the new file."

// Wording is how a caller tells the model of a client file it could not
// fetch: the words of its own context around clientfile's sentence.
type Wording struct {
	// File names the file inside a sentence: "the file",
	// `attachment 2 ("scan.pdf")`.
	File string
	// Done says what became of the work, "" when nothing had begun:
	// "Nothing was saved.", "The message was abandoned. Nothing was sent."
	Done string
	// Instead is another way to the file when its URL is not one
	// drivemail fetches, "" for none.
	Instead string
}

// Refusal words err, a failed Open or Body read, for the model: what
// happened to the file, then Done, then what to do. It returns nil for
// an error that is not an *Error, and for TooLarge, whose limit and cure
// are the caller's (KindTooLarge is its kind).
func (w Wording) Refusal(err error) *refusal.Refusal {
	var fe *Error
	if !errors.As(err, &fe) {
		return nil
	}
	done := ""
	if w.Done != "" {
		done = " " + w.Done
	}
	retry := "Try again in a minute; if it fails again, " + strings.ToLower(AttachAgain[:1]) + AttachAgain[1:]
	switch fe.Failure {
	case TooLarge:
		return nil
	case Expired:
		return refusal.Wrap(err, KindExpired, "The download link of %s has expired or was withdrawn (its host refused it).%s %s", w.File, done, AttachAgain)
	case NotHTTPS, HostNotAllowed, BadURL, PrivateAddress, TooManyRedirects:
		instead := ""
		if w.Instead != "" {
			instead = " " + w.Instead
		}
		return refusal.Wrap(err, KindRefused, "The download_url of %s is not one drivemail fetches (%s).%s Pass the file object exactly as the client gave it.%s",
			w.File, strings.TrimPrefix(fe.Error(), "clientfile: "), done, instead)
	case Stalled, TooSlow:
		return refusal.Wrap(err, KindStalled, "The host of %s stopped sending it, or sent it too slowly.%s %s", w.File, done, retry)
	}
	return refusal.Wrap(err, KindUnavailable, "The host of %s failed while it was fetched.%s %s", w.File, done, retry)
}

// URLName is the last segment of a download URL's path when it looks
// like a file name: the name to fall back on when neither the client nor
// the host gave one (signed blob URLs often end in an opaque id, which is
// no name). A URL without a path has none: its host is not a file name.
func URLName(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	p := u.EscapedPath()
	if strings.HasSuffix(p, "/") {
		return ""
	}
	base := path.Base(p)
	if !strings.Contains(base, ".") || strings.Trim(base, ".") == "" || strings.ContainsAny(base, "%:/") {
		return ""
	}
	return base
}
