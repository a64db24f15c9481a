package compose

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/mimemsg"
)

// Message limits. Each is stated here once: the tools' schemas and
// descriptions are tested against these constants, and docs/reference.md's
// table of limits is made from them.
const (
	// MaxEntries bounds the attachments list before any call is made: the
	// MaxFiles files a message may carry, plus room for files sent as
	// links.
	MaxEntries = 25
	// MaxFiles is the most files (attached or inline) one message carries.
	MaxFiles = 10
	// MaxAttachmentBytes caps the attached and inline file bytes of one
	// message, before encoding: Gmail's 25 MiB.
	MaxAttachmentBytes = 26_214_400
	// MaxMessageBytes caps the encoded message: Gmail's upload limit.
	MaxMessageBytes = gmail.MaxMessageBytes
	// MaxBodyBytes caps each of body_text and body_html.
	MaxBodyBytes = 2 << 20
	// MaxModelBytes caps the bytes of all the Content of one message,
	// summed: text counts as surely as base64, since the model wrote it
	// all, and a megabyte of either is far past what a model should type.
	MaxModelBytes = 1 << 20
	// partOverhead is a generous allowance for one part's headers and
	// boundaries in the size estimate.
	partOverhead = 1024
)

// CheckEntries refuses an attachments list longer than MaxEntries. The
// tools call it before reading the entries, validate before anything.
func CheckEntries(n int) error {
	if n > MaxEntries {
		return refuse(kindTooManyEntries, "The message lists %d attachments; at most %d files can be attached (%d entries in all, counting links). "+
			"Send the rest as links in the body, or in a second message.", n, MaxFiles, MaxEntries)
	}
	return nil
}

// msgPlan is the whole message, decided before any download.
type msgPlan struct {
	items []*item
	html  string // body_html with cid: references rewritten to Content-IDs
	files int
	known int64 // attachment bytes whose size is known
	// estimate is the encoded size if every size is known (no exports),
	// else 0; it feeds progress and the pre-download 35 MiB check.
	estimate int64
	exports  bool
}

// planMessage plans every entry, makes cid: files inline parts and checks
// the limits that can be known before any byte is downloaded.
func planMessage(req Request, items []*item) (*msgPlan, error) {
	for _, it := range items {
		if err := planItem(it); err != nil {
			return nil, err
		}
	}
	mp := &msgPlan{items: items, html: req.BodyHTML}
	if err := planInline(mp); err != nil {
		return nil, err
	}
	var bodyEstimate int64 = 4 * partOverhead
	for _, b := range []string{req.BodyText, mp.html} {
		bodyEstimate += encodedLen(int64(len(b)))
	}
	for _, it := range items {
		if !it.plan.isFile() {
			bodyEstimate += 2 * int64(len(it.plan.url)+len(it.plan.name)+64)
			continue
		}
		mp.files++
		if it.plan.size < 0 {
			mp.exports = true
			continue
		}
		mp.known += it.plan.size
		bodyEstimate += encodedLen(it.plan.size) + partOverhead
	}
	if mp.files > MaxFiles {
		return nil, refuse(kindTooManyFiles, "The message would carry %d files; Gmail takes at most %d per message. "+
			"Send some as links (link: true, or a Google Doc without as), or split them over two messages.", mp.files, MaxFiles)
	}
	if mp.known > MaxAttachmentBytes {
		return nil, refuse(kindTooLarge, "The attachments add up to %s; Gmail takes at most 25 MiB (26,214,400 bytes) per message. "+
			"Send the largest as links (link: true), or split them over several messages.", sizeText(mp.known))
	}
	if bodyEstimate > MaxMessageBytes {
		return nil, refuse(kindMessageTooLarge, "The encoded message would be about %s, over Gmail's 35 MiB limit (attachments grow by a third when encoded). "+
			"Send the largest attachments as links (link: true), or split them over several messages.", mib(bodyEstimate))
	}
	if !mp.exports {
		mp.estimate = bodyEstimate
	}
	return mp, nil
}

// planInline turns files referenced as cid:NAME in the HTML body into
// inline parts, and refuses references to no file.
func planInline(mp *msgPlan) error {
	names := mimemsg.CIDRefs(mp.html)
	if len(names) == 0 {
		return nil
	}
	ids := map[string]string{}
	owner := map[string]*item{} // Content-ID → the inline file that has it
	for _, name := range names {
		it := matchCID(mp.items, name)
		if it == nil {
			return refuse(kindDanglingCID, "\"body_html\" refers to cid:%s, but no attachment is named %q. Attach that file (its name must match), "+
				"or change the reference to one of: %s.", truncate(name, 80), truncate(name, 80), fileNames(mp.items))
		}
		if !it.plan.isFile() {
			return refuse(kindCIDLink, "\"body_html\" shows cid:%s inline, but %s goes as a link. Give it as (for example as: \"png\") to attach an image, or drop the cid: reference.",
				truncate(name, 80), it.label())
		}
		if !it.plan.inline {
			it.plan.inline = true
			it.plan.contentID = contentID(it.plan.name)
		}
		if other, ok := owner[it.plan.contentID]; ok && other != it {
			return sameNameInline(other, it)
		}
		owner[it.plan.contentID] = it
		ids[name] = it.plan.contentID
	}
	mp.html = mimemsg.RewriteCIDs(mp.html, ids)
	return nil
}

// sameNameInline refuses two inline files that would go under one name:
// their parts would share a Content-ID, and the HTML could not tell them
// apart.
func sameNameInline(a, b *item) error {
	if b.index < a.index {
		a, b = b, a
	}
	name := a.plan.name
	ext := path.Ext(name)
	other := strings.TrimSuffix(name, ext) + "-2" + ext
	return refuse(kindSameNameInline, "\"body_html\" shows attachments %d and %d inline, but both are named %q, so the message cannot tell them apart. "+
		"Give attachment %d another name with \"name\" (for example \"name\": %q) and refer to it by that name in body_html: <img src=\"cid:%s\">.",
		a.index, b.index, truncate(name, 80), b.index, truncate(other, 80), truncate(other, 80))
}

// matchCID finds the file a cid: name means: its name in the message,
// else the name given, else its Drive name; exact first, then ignoring
// case when that is unambiguous.
func matchCID(items []*item, name string) *item {
	for _, exact := range []bool{true, false} {
		var found *item
		count := 0
		for _, it := range items {
			for _, n := range []string{it.plan.name, it.att.Name, it.file.Name} {
				if n == "" {
					continue
				}
				if exact && n == name || !exact && strings.EqualFold(n, name) {
					count++
					if found == nil {
						found = it // the first file of that name wins
					}
					break
				}
			}
		}
		if count == 1 || exact && count > 1 {
			return found
		}
	}
	return nil
}

var safeCID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,200}$`)

// contentID keeps a plain file name as the Content-ID, so the HTML stays
// as written; any other name gets a generated id and the HTML is
// rewritten to match.
func contentID(name string) string {
	if safeCID.MatchString(name) {
		return name
	}
	return mimemsg.NewContentID()
}

func fileNames(items []*item) string {
	var names []string
	for _, it := range items {
		if it.plan.isFile() {
			names = append(names, fmt.Sprintf("%q", it.plan.name))
		}
	}
	if len(names) == 0 {
		return "(no files are attached)"
	}
	return strings.Join(names, ", ")
}

// encodedLen is the size of n bytes in base64 with CRLF every 76 characters.
func encodedLen(n int64) int64 {
	enc := (n + 2) / 3 * 4
	return enc + (enc+75)/76*2
}

// sizeText is a size for a sentence: MiB, with the exact bytes when the
// rounding could hide which side of a limit it is on.
func sizeText(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return fmt.Sprintf("%s (%s bytes)", mib(n), b.String())
}

func mib(n int64) string {
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
