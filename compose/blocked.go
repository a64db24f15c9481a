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

// blockedAdvice says what to do instead, for the entry's source: a
// Drive file can go as a link; content written into the call has no file
// to link to; a client file cannot go as a link and renaming it would not
// make Gmail take it; a Gmail attachment gets a link once save_to_drive
// has put it in Drive.
func blockedAdvice(it *item, f *blocked.Finding) string {
	switch it.att.Source.(type) {
	case Content:
		if f.Reason == blocked.ReasonExtension && f.Entry == "" {
			return contentProgramAdvice(it)
		}
		return contentBlocked.pick(f)
	case ClientFile:
		return clientBlocked.pick(f)
	case GmailAttachment:
		return mailBlocked.pick(f)
	}
	return driveBlocked.pick(f)
}

// adviceSet is one source's advice for each kind of finding.
type adviceSet struct {
	program    string // the file is a program or script (by its name)
	entry      string // an archive holds one
	content    string // the file is a program by its content, whatever its name
	contentIn  string // an archive holds one
	encrypted  string // a password-protected archive or entry
	tooLarge   string // an archive too large to check
	unreadable string // an archive whose listing cannot be read
}

func (a adviceSet) pick(f *blocked.Finding) string {
	switch {
	case f.Reason == blocked.ReasonExtension && f.Entry == "":
		return a.program
	case f.Reason == blocked.ReasonExtension:
		return a.entry
	case f.Reason == blocked.ReasonContent && f.Entry == "":
		return a.content
	case f.Reason == blocked.ReasonContent:
		return a.contentIn
	case f.Reason == blocked.ReasonEncrypted:
		return a.encrypted
	case f.Reason == blocked.ReasonTooLarge:
		return a.tooLarge
	}
	return a.unreadable
}

var (
	driveBlocked = adviceSet{
		program:    "Send a link to the file instead, or put it in a format Gmail allows.",
		entry:      "Send a link to the file instead or remove it from the archive.",
		content:    "Send a link to the file instead (link: true); renaming it or putting it in an archive does not get it past Gmail.",
		contentIn:  "Send a link to the file instead (link: true), or remove that file from the archive; renaming it does not get it past Gmail.",
		encrypted:  "Send a link to the file instead, or send the archive without a password.",
		tooLarge:   "Send a link to the file instead, or split the archive.",
		unreadable: "Send a link to the file instead, or check that the file is not damaged.",
	}
	contentBlocked = adviceSet{ // program: contentProgramAdvice
		entry:      "Leave that file out of the archive, or leave the archive out.",
		content:    "Gmail does not carry programs, whatever their name or archive, so leave it out.",
		contentIn:  "Leave that file out of the archive, or leave the archive out; renaming it does not get it past Gmail.",
		encrypted:  "Send the archive without a password.",
		tooLarge:   "Split the archive.",
		unreadable: "Check that the content is the whole archive, base64-encoded.",
	}
	clientBlocked = adviceSet{
		program:    "Gmail does not carry programs or scripts, even renamed, so leave it out of the message.",
		entry:      "Leave it out, or ask the user for the archive without that file.",
		content:    "Gmail does not carry programs, even renamed or inside an archive, so leave it out of the message.",
		contentIn:  "Leave it out, or ask the user for the archive without that file; renaming it does not get it past Gmail.",
		encrypted:  "Ask the user for the archive without a password.",
		tooLarge:   "Ask the user to split the archive.",
		unreadable: "Ask the user to attach the whole file to the conversation again.",
	}
	mailBlocked = adviceSet{
		program:    "Gmail will not send it on: leave it out, or put it in Drive with save_to_drive and send a link to it (link: true).",
		entry:      "Leave the archive out, or put it in Drive with save_to_drive and send a link to it (link: true).",
		content:    "Gmail will not send it on, whatever its name or archive: leave it out, or put it in Drive with save_to_drive and send a link to it (link: true).",
		contentIn:  "Leave the archive out, or put it in Drive with save_to_drive and send a link to it (link: true).",
		encrypted:  "Put it in Drive with save_to_drive and send a link to it (link: true).",
		tooLarge:   "Put it in Drive with save_to_drive and send a link to it (link: true).",
		unreadable: "Check that the attachment is not damaged, or put it in Drive with save_to_drive and send a link to it.",
	}
)

// contentProgramAdvice is the advice for a program written into the
// call: there is nothing to link to, and if it is not a program, a name
// with another extension lets it go.
func contentProgramAdvice(it *item) string {
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
}

// blockedKind is the kind of a file Gmail would block, by its reason.
func blockedKind(f *blocked.Finding) kind {
	switch f.Reason {
	case blocked.ReasonExtension, blocked.ReasonContent:
		return kindBlockedType
	case blocked.ReasonEncrypted:
		return kindEncryptedArchive
	case blocked.ReasonTooLarge:
		return kindArchiveTooLarge
	}
	return kindUnreadableArchive
}
