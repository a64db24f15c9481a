package compose

import (
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/mimemsg"
)

// kind names a refusal in the "send refused" log line (refusal=<kind>).
// It is a fixed code, never the sentence: sentences quote what the caller
// wrote (file names, some unquoted; addresses), which logs never carry.
// docs/operations.md lists every kind; tools' TestRefusalKindsAreDocumented
// keeps the two in step.
type kind = refusal.Kind

// The request and its entries, checked before any Google call.
const (
	kindTooManyEntries     kind = "too_many_entries"     // more entries than MaxEntries
	kindNoName             kind = "no_name"              // model-written content without a name
	kindBadOption          kind = "bad_option"           // link with as or sheet
	kindBadText            kind = "bad_text"             // text that is not UTF-8
	kindBadBase64          kind = "bad_base64"           // base64 or content that does not decode
	kindBadDataURI         kind = "bad_data_uri"         // a malformed data: URI
	kindBadMimeType        kind = "bad_mime_type"        // a mime_type that is not one
	kindContentTooLarge    kind = "content_too_large"    // model-written bytes past MaxModelBytes
	kindBodyTooLarge       kind = "body_too_large"       // body_text or body_html past MaxBodyBytes
	kindBadThreadID        kind = "bad_thread_id"        // a thread_id not shaped like Gmail's
	kindThreadWithoutReply kind = "thread_without_reply" // thread_id without in_reply_to or references
	kindInvalidAddress     kind = "invalid_address"      // a to, cc, bcc or from address
	kindTooManyRecipients  kind = "too_many_recipients"  // to, cc and bcc together past mimemsg.DefaultMaxRecipients
	kindInvalidSubject     kind = "invalid_subject"      // a line break, control character, too long
	kindInvalidReplyTo     kind = "invalid_in_reply_to"
	kindInvalidInline      kind = "invalid_inline" // inline parts the HTML cannot show
	kindInvalidLink        kind = "invalid_link"   // a link that cannot go in the body
	kindInvalidHeader      kind = "invalid_header" // any other header mimemsg refused
)

// The plan: what each Drive file is, and the message's limits.
const (
	kindUnknownFile       kind = "unknown_file"       // no such file for this account
	kindTrashed           kind = "trashed"            // the file is in the Drive trash
	kindNotDownloadable   kind = "not_downloadable"   // its owner turned downloads off
	kindNoLink            kind = "no_link"            // a link asked for a file Drive gives none
	kindBadFormat         kind = "bad_format"         // an export format the file has not
	kindBadSheet          kind = "bad_sheet"          // sheet where no tab can be picked
	kindBadTab            kind = "bad_tab"            // no tab of that name, or none at all
	kindBlockedType       kind = "blocked_type"       // a file type Gmail blocks, also inside an archive
	kindEncryptedArchive  kind = "encrypted_archive"  // a password-protected archive or entry
	kindArchiveTooLarge   kind = "archive_too_large"  // an archive too large to check
	kindUnreadableArchive kind = "unreadable_archive" // an archive whose listing cannot be read
	kindTooManyFiles      kind = "too_many_files"     // more than MaxFiles files
	kindTooLarge          kind = "too_large"          // attachments past 25 MiB (known, or as exports streamed)
	kindMessageTooLarge   kind = "message_too_large"  // the encoded message past 35 MiB
	kindDanglingCID       kind = "dangling_cid"       // cid: naming no attachment
	kindCIDLink           kind = "cid_link"           // cid: naming a file that goes as a link
	kindSameNameInline    kind = "same_name_inline"   // two inline files of one name
	kindFileChanged       kind = "file_changed"       // a file's size changed while it was sent
)

// Links the recipients must be able to open (access.go, share.go).
const (
	kindLinkNotOpen      kind = "link_not_open"      // recipients who cannot open a link, and no share option
	kindShareNotAllowed  kind = "share_not_allowed"  // share where drivemail or the user may not change the sharing
	kindShareUnknown     kind = "share_unknown"      // share on a file shared too widely to tell who lacks access
	kindTooManyShares    kind = "too_many_shares"    // share options past MaxShareGrants
	kindShareRefused     kind = "share_refused"      // Drive refused a grant: no Google account, or sharing settings
	kindFailedAfterShare kind = "failed_after_share" // an internal error after drivemail shared a link
)

// Google's answers.
const (
	kindDriveScope            kind = "drive_scope"              // no Drive scope granted
	kindDriveUnauthorized     kind = "drive_unauthorized"       // Google refused the token (401)
	kindDriveUnavailable      kind = "drive_unavailable"        // 5xx, rate limits, a cut download
	kindDriveStalled          kind = "drive_stalled"            // no byte for DriveIdleTimeout
	kindDriveCorrupt          kind = "drive_corrupt"            // a checksum mismatch
	kindDriveAbusive          kind = "drive_abusive"            // flagged as malware or spam
	kindDriveDownloadQuota    kind = "drive_download_quota"     // the file's download quota
	kindDriveDomainPolicy     kind = "drive_domain_policy"      // the Workspace admin forbids the app
	kindDriveAppNotAllowed    kind = "drive_app_not_allowed"    // drive.file only, for a file not opened with the app
	kindDriveFilePermission   kind = "drive_file_permission"    // the user may not download it
	kindDriveWrongType        kind = "drive_wrong_type"         // an export answered with another Content-Type (a web page)
	kindExportNotReady        kind = "export_not_ready"         // files.download's operation did not finish in time
	kindDriveUntrustedURL     kind = "drive_untrusted_url"      // a download URL off Google's download hosts
	kindDriveAPIDisabled      kind = "drive_api_disabled"       // the project has not enabled the Drive API
	kindSheetsAPIDisabled     kind = "sheets_api_disabled"      // a named tab needs the Sheets API, not enabled
	kindGmailScope            kind = "gmail_scope"              // no send or compose scope granted
	kindGmailUnauthorized     kind = "gmail_unauthorized"       // Google refused the token (401)
	kindGmailTooLarge         kind = "gmail_too_large"          // Gmail's 413
	kindGmailRejected         kind = "gmail_rejected"           // Gmail's 400
	kindThreadRejected        kind = "thread_rejected"          // Gmail's 400 for a message with a thread_id
	kindUnknownThread         kind = "unknown_thread"           // Gmail's 404 for the thread
	kindGmailForbidden        kind = "gmail_forbidden"          // any other 403: sending turned off
	kindGmailAPIDisabled      kind = "gmail_api_disabled"       // the project has not enabled the Gmail API
	kindGmailStalled          kind = "gmail_stalled"            // an upload request unanswered
	kindGmailUnavailable      kind = "gmail_unavailable"        // 5xx, a 429 naming no limit
	kindGmailSendingLimit     kind = "gmail_sending_limit"      // the account's daily sending limit
	kindGmailUserRateLimit    kind = "gmail_user_rate_limit"    // a per-user per-minute limit
	kindGmailProjectRateLimit kind = "gmail_project_rate_limit" // the project's per-minute limit
	kindGmailDailyQuota       kind = "gmail_daily_quota"        // the project's daily quota
	kindMaybeSent             kind = "maybe_sent"               // the whole message went, no answer came
	kindSentUnconfirmed       kind = "sent_unconfirmed"         // Gmail's 200 came without its body
)

// Mail read for a send (a Gmail attachment, reply_to, forward).
const (
	kindUnknownMessage    kind = "unknown_message"     // no such message for this account
	kindUnknownAttachment kind = "unknown_attachment"  // the message has no attachment of that name
	kindMailScope         kind = "mail_scope"          // no Gmail read scope granted: the tools' kind for the same cause
	kindMailTooLarge      kind = "mail_too_large"      // a message too large to read whole
	kindMailUnavailable   kind = "mail_unavailable"    // 5xx, rate limits, a cut download
	kindMailCorrupt       kind = "mail_corrupt"        // an attachment not as Gmail described it
	kindMailStalled       kind = "mail_stalled"        // no byte for the idle timeout
	kindReplyAndForward   kind = "reply_and_forward"   // reply_to and forward together
	kindReplyHeadersGiven kind = "reply_headers_given" // reply_to with thread_id, in_reply_to or references
	kindNoMessageID       kind = "no_message_id"       // a message without a Message-ID to answer
	kindNoRecipient       kind = "no_recipient"        // a forward without to, a reply with no one to answer
)

// Who sends (sendas.go): the user's send-as addresses and signatures.
const (
	kindUnknownAlias      kind = "unknown_alias"       // a from that is none of the account's send-as addresses
	kindUnverifiedAlias   kind = "unverified_alias"    // a from Gmail has not verified (pending)
	kindSendAsScope       kind = "sendas_scope"        // Gmail refused to list them: no scope that reads settings
	kindSendAsUnreadable  kind = "sendas_unreadable"   // a list past the answer bound
	kindSignatureTooLarge kind = "signature_too_large" // a signature past maxSignatureBytes
	kindUnknownDraft      kind = "unknown_draft"       // send_draft: no such draft (sent, deleted, another account's)
)

// forOperator reports whether only the operator can end what k reports:
// the Google Cloud project's quotas, which every user shares.
func forOperator(k kind) bool {
	return k == kindGmailDailyQuota || k == kindGmailProjectRateLimit
}

// Admission (admission.go): a wait for a send's turn that ran out.
const (
	kindUserBusy   kind = "user_busy"   // the user's own sends filled their MaxSendsPerUser
	kindServerBusy kind = "server_busy" // this replica's sending budget or cap stayed taken
)

// inputKind is the kind of a header mimemsg refused, by its field.
func inputKind(field string) kind {
	switch field {
	case "to", "cc", "bcc", "from", "reply_to":
		return kindInvalidAddress
	case mimemsg.FieldRecipients:
		return kindTooManyRecipients
	case "subject":
		return kindInvalidSubject
	case "in_reply_to", "in-reply-to", "references":
		return kindInvalidReplyTo
	case "inline":
		return kindInvalidInline
	case "link":
		return kindInvalidLink
	}
	return kindInvalidHeader
}

// File-transfer URIs of the MCP draft (transfer.go).
const (
	kindUnknownTransfer kind = "unknown_file_uri"      // no such URI for this user (or another user's), or transfers off
	kindTransferPending kind = "file_uri_not_uploaded" // the URI's upload has not finished
)
