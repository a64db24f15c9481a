package clientfile

import "github.com/drivemail/drivemail/internal/refusal"

// The refusal kinds of a client file, the same whether it was going into
// a message (compose) or into Drive (upload). docs/operations.md lists
// them; tools' TestRefusalKindsAreDocumented keeps the two in step.
const (
	KindOff         refusal.Kind = "client_files_off"        // the server fetches no client files
	KindRefused     refusal.Kind = "client_file_refused"     // a URL off the allowlist, not https, or on a private address
	KindExpired     refusal.Kind = "client_file_expired"     // the host refused the signed URL: expired or taken back
	KindTooLarge    refusal.Kind = "client_file_too_large"   // larger than the caller's limit
	KindStalled     refusal.Kind = "client_file_stalled"     // the host stopped sending, or sent too slowly
	KindUnavailable refusal.Kind = "client_file_unavailable" // the host failed (5xx, a reset, a body cut short)
)
