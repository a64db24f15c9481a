package tools

import "github.com/drivemail/drivemail/internal/refusal"

// The tools' own refusal kinds, logged in the "tool call" line
// (refusal=<kind>). docs/operations.md lists every kind of every layer;
// TestRefusalKindsAreDocumented keeps the two in step.
const (
	kindBadArguments       refusal.Kind = "bad_arguments"       // arguments a tool cannot read: a wrong type, an unknown field, a missing one
	kindBadFileID          refusal.Kind = "bad_file_id"         // not a Drive id, Drive link or mcp-file:// handle
	kindDraftsNotGranted   refusal.Kind = "drafts_not_granted"  // create_draft without the user's gmail.compose grant
	kindDraftsDisabled     refusal.Kind = "drafts_disabled"     // create_draft on a server started without --drafts
	kindUploadsUnavailable refusal.Kind = "uploads_unavailable" // request_upload on a server that offers no uploads
	kindUnknownFile        refusal.Kind = "unknown_file"        // drive_get_file: no such file for this account
	kindBadQuery           refusal.Kind = "bad_query"           // drive_search arguments Drive refused
	kindDriveAPIDisabled   refusal.Kind = "drive_api_disabled"  // the project has not enabled the Drive API
	kindDriveScope         refusal.Kind = "drive_scope"         // no Drive scope granted
	kindDriveUnauthorized  refusal.Kind = "drive_unauthorized"  // Google refused the token (401)
	kindDriveUnavailable   refusal.Kind = "drive_unavailable"   // 5xx or a rate limit
	kindDriveDomainPolicy  refusal.Kind = "drive_domain_policy" // the Workspace admin forbids the app
)

// Reading mail (search_mail, save_to_drive, and the mail arguments of
// send_email and create_draft).
const (
	kindMailDisabled      refusal.Kind = "mail_disabled"      // a server started without --read-mail
	kindMailScope         refusal.Kind = "mail_scope"         // no Gmail read scope granted: compose's kind for the same cause
	kindBadMessageID      refusal.Kind = "bad_message_id"     // not a Gmail message id
	kindUnknownMessage    refusal.Kind = "unknown_message"    // no such message for this account
	kindMailUnavailable   refusal.Kind = "mail_unavailable"   // 5xx, rate limits, a cut download
	kindMailCorrupt       refusal.Kind = "mail_corrupt"       // an attachment not as Gmail described it
	kindGmailUnauthorized refusal.Kind = "gmail_unauthorized" // Google refused the token (401)
	kindGmailAPIDisabled  refusal.Kind = "gmail_api_disabled" // the project has not enabled the Gmail API
)

// Confirming a send (confirm.go): nothing was sent.
const (
	kindSendDeclined       refusal.Kind = "send_declined"       // the user said no (or accepted the form unticked)
	kindSendCancelled      refusal.Kind = "send_cancelled"      // the user dismissed the question
	kindSendUnanswered     refusal.Kind = "send_unanswered"     // no answer within the wait (or the call ended first)
	kindConfirmUnavailable refusal.Kind = "confirm_unavailable" // --confirm-sends always, and the client cannot ask its user
	kindConfirmAsked       refusal.Kind = "confirm_asked"       // a 2026-07-28 client was sent the question (input_required); its retry answers
)

// The compose view (compose_view.go, send_prepared.go): nothing was sent.
const (
	kindPrepared         refusal.Kind = "prepared"           // the message went to the compose view (compose's log line; the call succeeded)
	kindPreparedTooLarge refusal.Kind = "prepared_too_large" // a call too large for the view to keep
	kindPreparedInvalid  refusal.Kind = "prepared_invalid"   // send_prepared with an id not sealed for this user
	kindPreparedExpired  refusal.Kind = "prepared_expired"   // send_prepared after the message's 30 minutes
	kindPreparedUsed     refusal.Kind = "prepared_used"      // send_prepared with an id sent or cancelled already
	kindPreparedChanged  refusal.Kind = "prepared_changed"   // send_prepared of a message whose files changed since it was shown
)
