package upload

import "github.com/drivemail/drivemail/internal/refusal"

// The kinds of the upload service's refusals, logged as refusal=<kind>
// in the "upload refused" and "save refused" lines: /upload, its ticket
// URLs, request_upload and save_to_drive. docs/operations.md lists every
// kind; tools' TestRefusalKindsAreDocumented keeps the two in step. A
// client file that cannot be fetched carries clientfile's kinds.

// Who may upload, and with which URL.
const (
	kindNotSignedIn    refusal.Kind = "not_signed_in"   // /upload without a bearer token or a ticket
	kindNoDriveScope   refusal.Kind = "no_drive_scope"  // the user did not grant drive.file
	kindReconnect      refusal.Kind = "reconnect"       // the user's Google grant is gone
	kindTicketInvalid  refusal.Kind = "ticket_invalid"  // a ticket changed, cut short, or another server's
	kindTicketExpired  refusal.Kind = "ticket_expired"  // a ticket past its 15 minutes
	kindTicketUsed     refusal.Kind = "ticket_used"     // a ticket already used (each works once)
	kindTransfersOff   refusal.Kind = "transfers_off"   // a file-transfer upload on a server without --file-transfer
	kindTokenMismatch  refusal.Kind = "token_mismatch"  // a transfer's form token that is not its ticket
	kindNameMismatch   refusal.Kind = "name_mismatch"   // a name other than the one the ticket was issued for
	kindFolderMismatch refusal.Kind = "folder_mismatch" // a folder_id where the ticket fixes the folder
	kindRateLimited    refusal.Kind = "rate_limited"    // past the uploads a user may start per window
	kindUserBusy       refusal.Kind = "user_busy"       // the user's uploads in flight took their slots
	kindServerBusy     refusal.Kind = "server_busy"     // every upload slot of this replica taken
)

// What was asked for: the file's description (request_upload, a save)
// and the request's shape (/upload).
const (
	kindNoName           refusal.Kind = "no_name"            // a file without a name
	kindBadMimeType      refusal.Kind = "bad_mime_type"      // a mime_type that is not one
	kindGoogleType       refusal.Kind = "google_type"        // a Google Docs type, which an upload cannot be
	kindBadSize          refusal.Kind = "bad_size"           // a declared size that is not one
	kindBadSHA256        refusal.Kind = "bad_sha256"         // a declared digest that is not a SHA-256
	kindBadFolderID      refusal.Kind = "bad_folder_id"      // a folder_id not shaped like a Drive id
	kindTooLarge         refusal.Kind = "too_large"          // past --max-upload-bytes (declared, or as it streamed)
	kindFormNotPost      refusal.Kind = "form_not_post"      // a multipart form sent other than by POST
	kindNotFormData      refusal.Kind = "not_form_data"      // multipart, but not multipart/form-data
	kindFormMalformed    refusal.Kind = "form_malformed"     // no boundary, or a form that does not parse
	kindNoFilePart       refusal.Kind = "no_file_part"       // a form without its file
	kindTwoFiles         refusal.Kind = "two_files"          // a form with more than one file
	kindTooManyFields    refusal.Kind = "too_many_fields"    // too many form fields before the file
	kindFieldsTooLarge   refusal.Kind = "fields_too_large"   // form fields before the file past their bound
	kindLongField        refusal.Kind = "long_field"         // one form field past its bound
	kindFieldNotUTF8     refusal.Kind = "field_not_utf8"     // a form field that is not UTF-8
	kindFieldAfterFile   refusal.Kind = "field_after_file"   // name or folder_id after the file part
	kindUnknownField     refusal.Kind = "unknown_field"      // a form field /upload does not take
	kindRepeatedName     refusal.Kind = "repeated_name"      // the name field twice
	kindRepeatedFolderID refusal.Kind = "repeated_folder_id" // folder_id twice, with different values
	kindUnknownQuery     refusal.Kind = "unknown_query"      // a query parameter /upload does not take
	kindRepeatedQuery    refusal.Kind = "repeated_query"     // a query parameter given more than once
)

// The bytes as they arrived.
const (
	kindSizeMismatch   refusal.Kind = "size_mismatch"   // other than the size declared to request_upload
	kindSHA256Mismatch refusal.Kind = "sha256_mismatch" // other than the digest declared to request_upload
	kindCutOff         refusal.Kind = "cut_off"         // the body ended before the file did
	kindTooSlow        refusal.Kind = "too_slow"        // no progress for the idle timeout
	kindTookTooLong    refusal.Kind = "took_too_long"   // past the longest an upload may take
)

// Google Drive's answers.
const (
	kindFolderNotFound    refusal.Kind = "folder_not_found"    // folder_id names nothing drivemail can see
	kindNotAFolder        refusal.Kind = "not_a_folder"        // folder_id names a file
	kindFolderNotWritable refusal.Kind = "folder_not_writable" // a folder drive.file may not write to
	kindFolderReadOnly    refusal.Kind = "folder_read_only"    // a folder shared with the user read-only
	kindFolderFull        refusal.Kind = "folder_full"         // the folder, or the shared drive holding it, has as many files as Drive allows
	kindDriveFull         refusal.Kind = "drive_full"          // the user's Drive storage quota, or the files an account may create
	kindDriveDenied       refusal.Kind = "drive_denied"        // Google refused the token or the scope
	kindDriveDomainPolicy refusal.Kind = "drive_domain_policy" // a Workspace policy keeps drivemail from the user's Drive
	kindDriveRateLimited  refusal.Kind = "drive_rate_limited"  // Drive's rate limits
	kindDriveAPIDisabled  refusal.Kind = "drive_api_disabled"  // the project has not enabled the Drive API
	kindDriveDailyQuota   refusal.Kind = "drive_daily_quota"   // the project's daily Drive API quota (operator=)
	kindDriveFailed       refusal.Kind = "drive_failed"        // any other failure or refusal of Drive's
	kindDriveMismatch     refusal.Kind = "drive_mismatch"      // Drive stored other bytes than were sent (the file is removed, or the user told to)
	kindInternal          refusal.Kind = "internal"            // an internal error, answered with its request id
)
