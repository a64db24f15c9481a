package compose

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/exportfmt"
	"github.com/drivemail/drivemail/internal/refusal"
)

// decideLinks refuses, before anything is shared or sent, a message whose
// links some recipients could not open and no share option mends, and a
// share option that cannot be carried out.
func decideLinks(acct *account.Account, links []*item, draft bool) error {
	var closed []*item
	grants := 0
	for _, it := range links {
		a := it.access
		switch {
		case it.opts.Share == "" && len(a.lacking) > 0:
			closed = append(closed, it)
		case it.opts.Share == "", len(a.lacking) == 0 && a.unchecked == "":
		case a.unchecked == whyCannotShare:
			return refuse(kindShareNotAllowed, "%s: \"share\" cannot be done: this Google account may not change the file's sharing (only its owner, and editors the owner allows, can). %s "+
				"Ask its owner to share it, %sor leave out \"share\" to send the link as it is (drivemail cannot check who can open it).", it.label(), nothing(draft), copyWay(it, ", "))
		case a.unchecked != "":
			return refuse(kindShareUnknown, "%s: \"share\" cannot be done safely: %s, so drivemail cannot tell who lacks access without risking a change to someone's role. %s "+
				"Share it with the recipients in Google Drive, %sor leave out \"share\" to send the link as it is.", it.label(), a.unchecked, nothing(draft), copyWay(it, ", "))
		case !acct.MayShare(it.file.AppAuthorized):
			return refuse(kindShareNotAllowed, "%s: drivemail cannot give %s access: %s. %s Share it with them in Google Drive (its Share button) and send again%s.",
				it.label(), addrList(a.lacking), whyNoShare(acct), nothing(draft), copyWay(it, ", or "))
		default:
			grants += len(a.lacking)
		}
	}
	if len(closed) > 0 {
		return closedLinks(acct, closed, draft)
	}
	if grants > MaxShareGrants {
		return refuse(kindTooManyShares, "The share options would give %d people access to linked files (recipients lacking access, counted per file); drivemail gives at most %d per message. %s "+
			"Share the files in Google Drive (a group or the link), send to fewer people, or attach copies with \"as\".", grants, MaxShareGrants, nothing(draft))
	}
	return nil
}

// closedLinks is the refusal of links some recipients could not open:
// who cannot open which file, and each file's ways out.
func closedLinks(acct *account.Account, closed []*item, draft bool) error {
	var b strings.Builder
	b.WriteString("Some recipients could not open the Drive links in this message. ")
	for _, it := range closed {
		a := it.access
		var cannot, may []string
		for _, r := range a.lacking {
			if a.mayNot[r] {
				may = append(may, r)
			} else {
				cannot = append(cannot, r)
			}
		}
		fmt.Fprintf(&b, "%s goes as a link that ", capitalize(it.label()))
		switch {
		case len(cannot) > 0 && len(may) > 0:
			fmt.Fprintf(&b, "%s cannot open, and %s may not (only if a group it is shared with holds them, which drivemail cannot see)", addrList(cannot), addrList(may))
		case len(cannot) > 0:
			fmt.Fprintf(&b, "%s cannot open", addrList(cannot))
		default:
			fmt.Fprintf(&b, "%s may not be able to open (only if a group it is shared with holds them, which drivemail cannot see)", addrList(may))
		}
		if acct.MayShare(it.file.AppAuthorized) {
			fmt.Fprintf(&b, ": add \"share\": \"reader\" (or \"commenter\") to it to give them access as the message goes%s. ", copyWay(it, ", or "))
		} else {
			fmt.Fprintf(&b, "; drivemail may not change its sharing (%s): share it with them in Google Drive and send again%s. ", whyNoShare(acct), copyWay(it, ", or "))
		}
	}
	b.WriteString(nothing(draft))
	return refuse(kindLinkNotOpen, "%s", b.String())
}

// whyNoShare says why drivemail may not change a file's sharing.
func whyNoShare(acct *account.Account) string {
	if !acct.MayShare(true) {
		return "this Google account lets drivemail read Drive, not change its sharing"
	}
	return "it changes the sharing only of files drivemail created or the user picked for it"
}

// copyWay is the way out of sharing: attach a copy of the file instead,
// after sep; "" when the file cannot be attached.
func copyWay(it *item, sep string) string {
	f := it.file
	switch {
	case !f.CanDownload:
		return ""
	case f.Native() && !exportfmt.IsExportable(f.MimeType):
		return ""
	case f.Native():
		example := "pdf"
		if names := exportfmt.FormatNames(f.MimeType); !slices.Contains(names, example) {
			example = names[0]
		}
		return fmt.Sprintf("%sattach a copy with \"as\" (for example \"as\": %q)", sep, example)
	}
	return sep + "attach the file itself (leave out \"link\")"
}

// copyOrLink is the first way to send a link Drive will not share:
// attach a copy, or (for a file that cannot be attached) send no link.
func copyOrLink(it *item) string {
	if c := copyWay(it, ""); c != "" {
		return c
	}
	return "leave the link out"
}

// addrList names up to five addresses, and how many more.
func addrList(addrs []string) string {
	const most = 5
	shown := addrs
	if len(shown) > most {
		shown = shown[:most]
	}
	var s string
	switch len(shown) {
	case 1:
		s = shown[0]
	default:
		s = strings.Join(shown[:len(shown)-1], ", ") + " and " + shown[len(shown)-1]
	}
	if len(addrs) > most {
		s = strings.Join(shown, ", ") + fmt.Sprintf(" and %d more", len(addrs)-most)
	}
	return s
}

// shareLinks carries out the share options, once every check has passed
// and just before the stream: for each linked file, the recipients who
// lack access get its role, one permissions.create each, with no
// notification email (the message is the notice). A refusal on the way
// says who got access already; it stays, so a second try shares with the
// rest only.
func shareLinks(ctx context.Context, d driveAPI, mp *msgPlan, draft bool) error {
	for _, it := range linkedFiles(mp) {
		a := it.access
		if it.opts.Share == "" || a == nil {
			continue
		}
		for _, r := range a.lacking {
			_, err := withRetry(ctx, func() (struct{}, error) { return struct{}{}, d.Share(ctx, it.file, r, it.opts.Share) })
			if err != nil {
				return sharedBefore(shareError(it, r, err, draft), mp, draft)
			}
			a.granted = append(a.granted, r)
		}
	}
	return nil
}

// shareError words a permissions.create that failed.
func shareError(it *item, addr string, err error, draft bool) error {
	switch {
	case errors.Is(err, drive.ErrSharingRefused):
		// Google's 400 invalidSharingRequest: an address with no Google
		// account (shared with only by an invitation email, which
		// drivemail does not send), or the file's or the organization's
		// settings. "Anyone with the link", Gmail's own answer, would
		// widen access past what was asked: the user decides that in Drive.
		return refuseErr(err, kindShareRefused, "Google Drive would not share %s with %s: that address may have no Google account (Drive then shares only by emailing an invitation, which drivemail does not send), "+
			"or the file's or the organization's sharing settings forbid it. %s To send anyway: %s; or share the file by link in Google Drive (\"Anyone with the link\") and send again without \"share\"; "+
			"or write to the Google account address of %s.", it.label(), addr, nothing(draft), copyOrLink(it), addr)
	case errors.Is(err, drive.ErrFilePermission), errors.Is(err, drive.ErrAppNotAuthorized), errors.Is(err, drive.ErrScope):
		return refuseErr(err, kindShareNotAllowed, "Google Drive did not let drivemail share %s with %s: drivemail may change the sharing only of files the user may share and that it created or the user picked for it. %s "+
			"Share it in Google Drive and send again%s.", it.label(), addr, nothing(draft), copyWay(it, ", or "))
	}
	return lookupError(it, err, draft)
}

// sharedBefore adds to a failed send's error whom drivemail had given
// access to linked files by then: that access stays. An internal error
// becomes a refusal for that (the cause logged by kind), so the sentence
// reaches the user.
func sharedBefore(err error, mp *msgPlan, draft bool) error {
	note := grantedNote(mp)
	if note == "" || err == nil {
		return err
	}
	err = settle(err, draft)
	if r, ok := refusal.As(err); ok {
		return &refusal.Refusal{Kind: r.Kind, Text: r.Text + " " + note, Delivery: r.Delivery, Err: r.Err}
	}
	d := refusal.DeliveryOf(err)
	what := "drivemail hit an internal error while sending, and nothing was sent."
	switch {
	case draft && d == refusal.NotSent:
		what = "drivemail hit an internal error while saving the draft, and nothing was saved."
	case d != refusal.NotSent:
		what = "drivemail hit an internal error while sending; before sending again, check the Sent and Drafts folders, as it cannot tell whether Gmail finished the message."
	}
	return &refusal.Refusal{Kind: kindFailedAfterShare, Text: what + " " + note, Delivery: d, Err: err}
}

// grantedNote says who got access to which linked file; "" when nobody.
func grantedNote(mp *msgPlan) string {
	var parts []string
	for _, it := range linkedFiles(mp) {
		if a := it.access; a != nil && len(a.granted) > 0 {
			parts = append(parts, fmt.Sprintf("%s to %s (%s)", addrList(a.granted), it.label(), it.opts.Share))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Before that, drivemail gave access: " + strings.Join(parts, "; ") + ". That access stays (remove it in Google Drive if the message will not go); sending again shares with nobody twice."
}
