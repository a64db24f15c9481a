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
}

// ErrorBody is the JSON body of every Google API error:
// {"error":{"code","message","errors":[{"domain","reason"}],"status"}}.
type ErrorBody struct {
	Error struct {
		Code    int         `json:"code"`
		Message string      `json:"message"`
		Errors  []ErrorItem `json:"errors"`
		Status  string      `json:"status,omitempty"`
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

// NewError builds a Google error body with one item in domain "global".
func NewError(code int, reason, message string) ErrorBody {
	var b ErrorBody
	b.Error.Code = code
	b.Error.Message = message
	b.Error.Status = statusNames[code]
	b.Error.Errors = []ErrorItem{{Message: message, Domain: "global", Reason: reason}}
	return b
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
