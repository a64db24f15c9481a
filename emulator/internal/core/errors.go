// Package core holds what every emulated Google API shares: accounts and
// bearer tokens, Google-shaped errors, file content storage, counters and
// fault injection.
package core

import (
	"encoding/json"
	"net/http"
)

// ErrorItem is one entry of a Google error's "errors" list.
type ErrorItem struct {
	Message      string `json:"message"`
	Domain       string `json:"domain"`
	Reason       string `json:"reason"`
	Location     string `json:"location,omitempty"`
	LocationType string `json:"locationType,omitempty"`
	ExtendedHelp string `json:"extendedHelp,omitempty"`
}

// ErrorBody is the JSON body of every Google API error:
// {"error":{"code","message","errors":[{"domain","reason"}],"status","details"}}.
// Details holds google.rpc detail messages (ErrorInfo, LocalizedMessage,
// Help), each a JSON object with its "@type"; errors from Google's API
// front end (credentials, scopes, a disabled API, quotas) carry them.
type ErrorBody struct {
	Error struct {
		Code    int         `json:"code"`
		Message string      `json:"message"`
		Errors  []ErrorItem `json:"errors"`
		Status  string      `json:"status,omitempty"`
		Details []any       `json:"details,omitempty"`
	} `json:"error"`
}

// statusNames maps HTTP codes to the google.rpc.Code names Google puts in "status".
var statusNames = map[int]string{
	400: "INVALID_ARGUMENT",
	401: "UNAUTHENTICATED",
	403: "PERMISSION_DENIED",
	404: "NOT_FOUND",
	409: "ALREADY_EXISTS",
	412: "FAILED_PRECONDITION",
	413: "OUT_OF_RANGE",
	416: "OUT_OF_RANGE",
	429: "RESOURCE_EXHAUSTED",
	500: "INTERNAL",
	501: "UNIMPLEMENTED",
	502: "UNAVAILABLE",
	503: "UNAVAILABLE",
	504: "DEADLINE_EXCEEDED",
}

// StatusName is the google.rpc.Code name of an HTTP status ("" if none).
func StatusName(code int) string { return statusNames[code] }

// NewError builds a Google error body with one item in domain "global".
func NewError(code int, reason, message string) ErrorBody {
	var b ErrorBody
	b.Error.Code = code
	b.Error.Message = message
	b.Error.Status = statusNames[code]
	b.Error.Errors = []ErrorItem{{Message: message, Domain: "global", Reason: reason}}
	return b
}

// WithDetails returns b with details appended (see ErrorInfo,
// LocalizedMessage, Help).
func (b ErrorBody) WithDetails(details ...any) ErrorBody {
	b.Error.Details = append(append([]any(nil), b.Error.Details...), details...)
	return b
}

// Type URLs of the google.rpc detail messages the emulator sends.
const (
	TypeErrorInfo        = "type.googleapis.com/google.rpc.ErrorInfo"
	TypeLocalizedMessage = "type.googleapis.com/google.rpc.LocalizedMessage"
	TypeHelp             = "type.googleapis.com/google.rpc.Help"
)

// DomainGoogleAPIs is the ErrorInfo domain of Google's API front end.
const DomainGoogleAPIs = "googleapis.com"

// ErrorInfo is a google.rpc.ErrorInfo detail: a machine-readable reason
// (such as "SERVICE_DISABLED"), its domain (empty leaves it out, as
// Google's 401s do) and metadata (such as "service").
func ErrorInfo(reason, domain string, metadata map[string]string) map[string]any {
	d := map[string]any{"@type": TypeErrorInfo, "reason": reason}
	if domain != "" {
		d["domain"] = domain
	}
	if len(metadata) > 0 {
		d["metadata"] = metadata
	}
	return d
}

// LocalizedMessage is a google.rpc.LocalizedMessage detail in en-US.
func LocalizedMessage(message string) map[string]any {
	return map[string]any{"@type": TypeLocalizedMessage, "locale": "en-US", "message": message}
}

// Help is a google.rpc.Help detail with one link.
func Help(description, url string) map[string]any {
	return map[string]any{"@type": TypeHelp, "links": []map[string]string{{"description": description, "url": url}}}
}

// WriteError writes a Google-shaped error response.
func WriteError(w http.ResponseWriter, code int, reason, message string) {
	WriteErrorBody(w, NewError(code, reason, message))
}

// WriteErrorBody writes a prepared error body with its code as the HTTP status.
func WriteErrorBody(w http.ResponseWriter, b ErrorBody) {
	WriteJSON(w, b.Error.Code, b)
}

// WriteJSON writes v as a JSON response with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
