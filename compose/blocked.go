package compose

import (
	"fmt"
	"path"
	"strings"

	"github.com/drivemail/drivemail/blocked"
)

// blockedRefusal words a file Gmail would block: what blocked found, then
// advice the caller can follow for that entry's source (a Drive file can
// go as a link; content written into the call cannot), then tail (what
// became of the message, when it was already under way).
func blockedRefusal(it *item, f *blocked.Finding, tail string) error {
	text := fmt.Sprintf("Attachment %d: %s %s", it.index, f.Error(), blockedAdvice(it, f))
	if tail != "" {
		text += " " + tail
	}
	return refuseErr(f, blockedKind(f), "%s", text)
}

// blockedAdvice says what to do instead, for the entry's source.
func blockedAdvice(it *item, f *blocked.Finding) string {
	switch it.att.Source.(type) {
	case Content:
		return contentBlockedAdvice(it, f)
	case ClientFile:
		return clientBlockedAdvice(f)
	case GmailAttachment:
		return mailBlockedAdvice(f)
	}
	link := "Send a link to the file instead"
	switch {
	case f.Reason == blocked.ReasonExtension && f.Entry == "":
		return link + ", or put it in a format Gmail allows."
	case f.Reason == blocked.ReasonExtension:
		return link + " or remove it from the archive."
	case f.Reason == blocked.ReasonEncrypted:
		return link + ", or send the archive without a password."
	case f.Reason == blocked.ReasonTooLarge:
		return link + ", or split the archive."
	}
	return link + ", or check that the file is not damaged."
}

// contentBlockedAdvice is the advice for content written into the call,
// which has no file to link to.
func contentBlockedAdvice(it *item, f *blocked.Finding) string {
	switch {
	case f.Reason == blocked.ReasonExtension && f.Entry == "":
		name := it.plan.name
		if name == "" {
			name = it.att.Name
		}
		stem := strings.TrimSuffix(name, path.Ext(name))
		if strings.TrimSpace(stem) == "" {
			stem = "notes"
		}
		return fmt.Sprintf("Gmail does not carry programs at all, so leave it out; if it is not a program, name it with an extension Gmail allows, such as %q.",
			truncate(stem, 60)+".txt")
	case f.Reason == blocked.ReasonExtension:
		return "Leave that file out of the archive, or leave the archive out."
	case f.Reason == blocked.ReasonEncrypted:
		return "Send the archive without a password."
	case f.Reason == blocked.ReasonTooLarge:
		return "Split the archive."
	}
	return "Check that the content is the whole archive, base64-encoded."
}

// blockedKind is the kind of a file Gmail would block, by its reason.
func blockedKind(f *blocked.Finding) kind {
	switch f.Reason {
	case blocked.ReasonExtension:
		return kindBlockedType
	case blocked.ReasonEncrypted:
		return kindEncryptedArchive
	case blocked.ReasonTooLarge:
		return kindArchiveTooLarge
	}
	return kindUnreadableArchive
}
