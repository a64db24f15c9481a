package compose

import (
	"errors"
	"fmt"
	"time"

	"github.com/drivemail/drivemail/blocked"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/mimemsg"
)

// nothing says that the message went nowhere: not sent, or for a draft
// not saved.
func nothing(draft bool) string {
	if draft {
		return "Nothing was saved."
	}
	return "Nothing was sent."
}

// streamError words a failed pass. Everything except a Gmail error with
// MaybeSent happened before Gmail could finalize the message, so the
// sentence says nothing was sent (or saved).
func streamError(err error, c *checked, draft bool) error {
	if _, own := err.(*refusal.Refusal); own {
		return err
	}
	if r := mailStreamFailure(err, c, draft); r != nil {
		return r
	}
	nothingDone := nothing(draft)
	var (
		le *mimemsg.LimitError
		se *mimemsg.SizeError
		bf *blocked.Finding
		pe *partError
	)
	switch {
	case errors.As(err, &le):
		if r := clientOverLimit(c, err, draft); r != nil {
			return r
		}
		if le.What == "files" {
			return refuseErr(err, kindTooLarge, "The attachments grew past Gmail's 25 MiB limit while Google rendered the exports, so the message was abandoned. %s "+
				"Send the large Google files as links (leave out as), or split them over several messages.", nothingDone)
		}
		return refuseErr(err, kindMessageTooLarge, "The encoded message grew past Gmail's 35 MiB limit while it was built, so it was abandoned. %s "+
			"Send the largest attachments as links, or split them over several messages.", nothingDone)
	case errors.As(err, &se):
		// The stream did not match the size Drive reported when the plan
		// was made: the file was replaced or edited in between.
		return refuseErr(err, kindFileChanged, "%q changed in Google Drive while it was being attached (its content no longer has the size Drive reported), "+
			"so the message was abandoned. %s Try again: the file will be read afresh.", truncate(se.Name, 80), nothingDone)
	case errors.As(err, &bf) && errors.As(err, &pe):
		return blockedRefusal(pe.it, bf, nothingDone)
	case errors.As(err, &bf):
		return refuseErr(err, blockedKind(bf), "%s %s", bf.Error(), nothingDone)
	case errors.As(err, &pe):
		if r := clientFailure(pe.it, pe.err, draft); r != nil {
			return r
		}
		if r := driveFailure(pe.it, pe.err, draft); r != nil {
			return r
		}
	}
	var ge *gmail.Error
	if errors.As(err, &ge) {
		return gmailRefusal(err, draft, c.req.ThreadID != "", c.date)
	}
	var we *gmail.WriteError
	if errors.As(err, &we) {
		return fmt.Errorf("message abandoned (nothing sent): %w", we.Err)
	}
	return err
}

// driveFailure words a Drive failure on one entry while it streamed or
// was checked, or returns nil for one that stays internal.
func driveFailure(it *item, err error, draft bool) error {
	nothingDone := nothing(draft)
	switch {
	case errors.Is(err, drive.ErrNotDownloadable):
		return refuseErr(err, kindNotDownloadable, "%s cannot be downloaded (its owner may have turned downloads off). %s Send it as a link instead (link: true).", it.label(), nothingDone)
	case errors.Is(err, drive.ErrNotFound):
		return refuseErr(err, kindUnknownFile, "%s: no Drive file with id %s is visible to this Google account any more. %s Check the id, or find the file with drive_search.",
			it.label(), it.ref.ID, nothingDone)
	case errors.Is(err, drive.ErrScope):
		return refuseErr(err, kindDriveScope, "This Google account has not given drivemail access to Drive files. %s Reconnect drivemail (sign in again) and allow Drive access.", nothingDone)
	case errors.Is(err, drive.ErrUnauthorized):
		return refuseErr(err, kindDriveUnauthorized, "Google no longer accepts this account's authorization (it expired or was revoked). %s Reconnect drivemail (sign in again).", nothingDone)
	case errors.Is(err, drive.ErrCorrupt):
		return refuseErr(err, kindDriveCorrupt, "%s did not arrive intact from Google Drive (its checksum did not match). %s Try again.", it.label(), nothingDone)
	case errors.Is(err, drive.ErrAbusive):
		return refuseErr(err, kindDriveAbusive, "Google Drive has flagged %s as malware or spam and will not let it be downloaded. %s "+
			"Send it as a link instead (link: true), or attach another file.", it.label(), nothingDone)
	case errors.Is(err, drive.ErrDownloadQuota):
		return refuseErr(err, kindDriveDownloadQuota, "%s has been downloaded too many times lately, and Google Drive will not serve it again until its limit resets (within about a day). %s "+
			"Send it as a link instead (link: true), or try again tomorrow.", it.label(), nothingDone)
	case errors.Is(err, drive.ErrDomainPolicy):
		return refuseErr(err, kindDriveDomainPolicy, "This Google account's Workspace administrator does not allow drivemail to use Google Drive. %s "+
			"Ask the administrator to allow drivemail's access to Drive, or send the message without Drive files.", nothingDone)
	case errors.Is(err, drive.ErrAppNotAuthorized):
		return refuseErr(err, kindDriveAppNotAllowed, "This Google account has not given drivemail access to %s (it allowed only files drivemail opened or created). %s "+
			"Reconnect drivemail (sign in again) and allow access to Drive files, or put the file in Drive again with request_upload and attach that.", it.label(), nothingDone)
	case errors.Is(err, drive.ErrFilePermission):
		return refuseErr(err, kindDriveFilePermission, "This Google account is not allowed to download %s. %s "+
			"Ask the file's owner for access that allows downloading, or send it as a link instead (link: true).", it.label(), nothingDone)
	case errors.Is(err, drive.ErrWrongType):
		return refuseErr(err, kindDriveWrongType, "%s: Google answered with something other than the %s asked for (a web page, most likely), so it was not attached. %s "+
			"Try again in a minute, or send it as a link (leave out as).", it.label(), formatName(it), nothingDone)
	case errors.Is(err, drive.ErrExportNotReady):
		return refuseErr(err, kindExportNotReady, "Google took too long to prepare %s as %s, so the message was abandoned. %s "+
			"Try again in a few minutes, or send it as a link (leave out as).", it.label(), formatName(it), nothingDone)
	case errors.Is(err, drive.ErrBadContentURL):
		return refuseErr(err, kindDriveUntrustedURL, "Google gave a download address for %s that is not one of its own, so drivemail did not fetch it. %s "+
			"Send it as a link instead (leave out as).", it.label(), nothingDone)
	case errors.Is(err, drive.ErrAPIDisabled):
		if svc, _ := drive.DisabledAPI(err); svc == drive.SheetsService {
			return refuseErr(err, kindSheetsAPIDisabled, "%s: reading one tab needs the Google Sheets API, which this drivemail server's Google Cloud project has not enabled. %s "+
				"Leave out sheet to send the first tab, use as: \"xlsx\" for every tab, or ask whoever runs drivemail to enable the Google Sheets API.", it.label(), nothingDone)
		}
		return driveAPIDisabled(err, draft)
	case errors.Is(err, drive.ErrStalled):
		return refuseErr(err, kindDriveStalled, "Google Drive stalled while sending %s (no data came for a long while), so the message was abandoned. %s Try again in a minute.", it.label(), nothingDone)
	case drive.IsTransient(err):
		return refuseErr(err, kindDriveUnavailable, "Google Drive stopped sending %s part-way, so the message was abandoned. %s Try again in a minute.", it.label(), nothingDone)
	}
	return nil
}

// driveAPIDisabled is the refusal when drivemail's Google Cloud project
// has not enabled the Drive API: no Drive file can go, and only the
// operator can fix it (the drive client has logged which API).
func driveAPIDisabled(err error, draft bool) error {
	return refuseErr(err, kindDriveAPIDisabled, "This drivemail server's Google Cloud project has not enabled the Google Drive API, so no Drive file can be attached. %s "+
		"Ask whoever runs drivemail to enable the Google Drive API; content written into the call (text, base64) can still be sent.", nothing(draft))
}

// gmailAPIDisabled is the refusal when drivemail's Google Cloud project
// has not enabled the Gmail API: nothing can be sent, saved or read for
// anyone, and only the operator can fix it (the gmail client has logged
// which API). Not worth a retry.
func gmailAPIDisabled(err error, draft bool) error {
	return refuseErr(err, kindGmailAPIDisabled, "This drivemail server's Google Cloud project has not enabled the Gmail API, so drivemail cannot send, save drafts or read mail for anyone. %s "+
		"Ask whoever runs drivemail to enable the Gmail API; trying again before then will not help.", nothing(draft))
}

// formatName is an export entry's format for a sentence ("csv").
func formatName(it *item) string {
	if it.plan.format.Name != "" {
		return it.plan.format.Name
	}
	return "format"
}

// gmailRefusal words a Gmail failure. threaded says the message named a
// thread_id: Gmail answers an unknown one (or another account's) with a
// bare 400 "Invalid thread_id value", so a 400 then most likely means it.
// now dates a retry time Gmail gave.
func gmailRefusal(err error, draft, threaded bool, now time.Time) error {
	nothingDone := nothing(draft)
	var ge *gmail.Error
	if !errors.As(err, &ge) {
		return err
	}
	switch {
	case ge.Accepted && draft:
		return delivered(refusal.Sent, refuseErr(err, kindSentUnconfirmed, "Gmail saved the draft, but its confirmation was cut off and the draft id is unknown. "+
			"Do not save it again; it is in the Drafts folder."))
	case ge.Accepted:
		return delivered(refusal.Sent, refuseErr(err, kindSentUnconfirmed, "Gmail accepted the message, so it has been sent, but its confirmation was cut off and the message id is unknown. "+
			"Do not send it again; it is in the Sent folder."))
	case ge.MaybeSent && draft:
		return delivered(refusal.MaybeSent, refuseErr(err, kindMaybeSent, "Gmail received the whole draft but did not confirm it, so it may or may not have been saved. "+
			"Check the Drafts folder before trying again, to avoid a second copy."))
	case ge.MaybeSent:
		return delivered(refusal.MaybeSent, refuseErr(err, kindMaybeSent, "Gmail received the whole message but did not confirm it, so it may or may not have been sent. "+
			"Check the Sent folder before trying again, to avoid sending it twice."))
	}
	switch {
	case errors.Is(err, gmail.ErrAPIDisabled):
		return gmailAPIDisabled(err, draft)
	case errors.Is(err, gmail.ErrScope):
		if draft {
			return refuseErr(err, kindGmailScope, "Saving drafts needs permission to manage Gmail drafts, which this Google account has not granted. %s "+
				"Reconnect drivemail (sign in again) and allow drafts, or use send_email.", nothingDone)
		}
		return refuseErr(err, kindGmailScope, "This Google account has not given drivemail permission to send mail. %s Reconnect drivemail (sign in again) and allow sending.", nothingDone)
	case errors.Is(err, gmail.ErrUnauthorized):
		return refuseErr(err, kindGmailUnauthorized, "Google no longer accepts this account's authorization (it expired or was revoked). %s Reconnect drivemail (sign in again).", nothingDone)
	case errors.Is(err, gmail.ErrTooLarge):
		return refuseErr(err, kindGmailTooLarge, "Gmail refused the message as too large. %s Send the largest attachments as links, or split them over several messages.", nothingDone)
	case errors.Is(err, gmail.ErrNotFound):
		return unknownThread(err, draft)
	case errors.Is(err, gmail.ErrRejected) && threaded:
		return refuseErr(err, kindThreadRejected, "Gmail refused the message as invalid, most likely because of its thread_id: Gmail does not know that thread in this account. %s "+
			"Leave thread_id out to start a new thread, or take the thread_id from the message being answered (the one Gmail returned for it); "+
			"if it is right, check the recipients and headers.", nothingDone)
	case errors.Is(err, gmail.ErrRejected):
		return refuseErr(err, kindGmailRejected, "Gmail refused the message as invalid. %s Check the recipients and headers.", nothingDone)
	case errors.Is(err, gmail.ErrStalled):
		return refuseErr(err, kindGmailStalled, "Gmail stopped answering while the message was being uploaded, so it was abandoned. %s Try again in a minute.", nothingDone)
	case errors.Is(err, gmail.ErrSendingLimit):
		return refuseErr(err, kindGmailSendingLimit, "This Gmail account has reached its daily sending limit (Google caps how many messages an account may send a day), so Gmail refused the message. %s "+
			"%s; trying sooner does not help. Send it then, or from another account. Messages sent just before the limit may also come back as bounces.", nothingDone, whenAgain(ge.RetryAfter, now))
	case errors.Is(err, gmail.ErrDailyQuota):
		return refuseErr(err, kindGmailDailyQuota, "drivemail has used up its daily Gmail quota, which all its users share, so Gmail refused the message. %s "+
			"Google resets it at midnight Pacific time; until then drivemail cannot send for anyone. Tell whoever runs drivemail: they can ask Google for a higher quota in the Google Cloud console.", nothingDone)
	case errors.Is(err, gmail.ErrUserRateLimit):
		return refuseErr(err, kindGmailUserRateLimit, "Gmail is limiting how many requests this account can make per minute, so it refused the message. %s %s.", nothingDone, tryAgainSoon(ge.RetryAfter, now))
	case errors.Is(err, gmail.ErrProjectRateLimit):
		return refuseErr(err, kindGmailProjectRateLimit, "Gmail is limiting how many requests drivemail can make per minute for all its users together, so it refused the message. %s "+
			"%s; if this keeps happening, tell whoever runs drivemail, who can ask Google for a higher quota.", nothingDone, tryAgainSoon(ge.RetryAfter, now))
	case errors.Is(err, gmail.ErrRateLimited), errors.Is(err, gmail.ErrUnavailable):
		return refuseErr(err, kindGmailUnavailable, "Gmail is busy or unavailable right now. %s Try again in a minute.", nothingDone)
	case errors.Is(err, gmail.ErrForbidden):
		return refuseErr(err, kindGmailForbidden, "Gmail refused to send for this account (sending may be turned off by an administrator). %s "+
			"Ask the account's Google Workspace administrator whether it may send mail through apps.", nothingDone)
	}
	return err
}

// delivered sets what became of the message on a refusal.
func delivered(d refusal.Delivery, r *refusal.Refusal) *refusal.Refusal {
	r.Delivery = d
	return r
}

// whenAgain says when Gmail takes messages again after the sending limit.
func whenAgain(retry, now time.Time) string {
	if retry.IsZero() || !retry.After(now) {
		return "Gmail lifts the limit within about 24 hours"
	}
	return "Gmail takes messages from it again after " + retry.UTC().Format("2006-01-02 15:04 UTC") + " (" + inAbout(retry.Sub(now)) + ")"
}

// tryAgainSoon is the advice after a per-minute rate limit.
func tryAgainSoon(retry, now time.Time) string {
	if retry.IsZero() || !retry.After(now.Add(time.Minute)) {
		return "Try again in a minute"
	}
	return "Try again after " + retry.UTC().Format("15:04 UTC") + " (" + inAbout(retry.Sub(now)) + ")"
}

// inAbout words a wait: "in about 5 hours", "in about 20 minutes".
func inAbout(d time.Duration) string {
	switch {
	case d >= 90*time.Minute:
		return fmt.Sprintf("in about %d hours", int((d+30*time.Minute)/time.Hour))
	case d >= 2*time.Minute:
		return fmt.Sprintf("in about %d minutes", int((d+30*time.Second)/time.Minute))
	}
	return "in a minute or two"
}

// result says what went out.
func result(mp *msgPlan, sent gmail.Sent, w mimemsg.Written) Result {
	res := Result{ID: sent.ID, ThreadID: sent.ThreadID, DraftID: sent.DraftID, SizeBytes: w.Bytes}
	bytesOf := map[*item]int64{}
	// Written.Parts follows the builder's order: inline parts, then
	// attachments, each in request order.
	i := 0
	for _, inline := range []bool{true, false} {
		for _, it := range mp.items {
			if it.plan.isFile() && it.plan.inline == inline {
				if i < len(w.Parts) {
					bytesOf[it] = w.Parts[i].Bytes
				}
				i++
			}
		}
	}
	for _, it := range mp.items {
		p := it.plan
		switch {
		case p.action == actLink:
			res.Linked = append(res.Linked, it.linked())
		case p.inline:
			res.Inline = append(res.Inline, Inline{FileID: it.ref.ID, Name: p.name, ContentID: p.contentID})
		default:
			a := Attached{FileID: it.ref.ID, Name: p.name, MimeType: p.mimeType, Bytes: bytesOf[it]}
			if p.action == actExport {
				a.ExportedAs = p.format.Name
				if p.tab != nil {
					a.Sheet = p.tab.Title
				}
			}
			res.Attached = append(res.Attached, a)
		}
	}
	return res
}
